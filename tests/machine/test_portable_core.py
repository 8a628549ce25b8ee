"""The portable core (harness/native/portable.h): PRIVLAB_PORTABLE=1 replaces nothing
inside libunicorn for F and D. Unicorn's helpers keep their own first bytes (no jump
to the core's), and the instructions QEMU 5.0 gets wrong are done in code hooks
(fpu.c fpu_emulate_all), so the F/D conformance programs pass as QEMU 7.2 runs them.
The mode is read once per process: each case runs in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

# Runs the conformance programs named after the arch (argv[1]) on bare machines; what
# follows it prints one line about them.
RUN_PROGRAMS = """
import ctypes, sys
from conformance.programs import build_program
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_bare
from privlab.native.clib import unicorn_dirs
from privlab.native.library import load_library

results, machines = [], {}
for name in sys.argv[2:]:
    image = load_elf(build_program(name, sys.argv[1]))
    m = Machine(image.xlen)
    boot_bare(m, image)
    r = m.run(max_insns=50_000_000)
    results.append(f"{name}={r.stop.name}:{r.exit_status}")
    machines[name] = (m, image)
lib = load_library()
unicorn = ctypes.CDLL(str(unicorn_dirs()[1] / "libunicorn.so.2"))   # the loaded one
"""

CHILD = RUN_PROGRAMS + """
first = bytes((ctypes.c_uint8 * 2).from_address(
    ctypes.cast(unicorn.helper_fadd_s_riscv64, ctypes.c_void_p).value))
print(" ".join(results), "emulating" if lib.fpu_emulating() else "replaced",
      "jump" if first == bytes([0xff, 0x25]) else "own")
"""

FP_PROGRAMS = ["fp_nanbox", "fp_minmax", "fp_fma_invalid", "fp_status"]


def run_script(script: str, arch: str, programs: list[str], env_extra: dict[str, str]) -> str:
    env = {**os.environ, **env_extra,
           "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", script, arch, *programs], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split("\n")[-2]


def run_child(arch: str, portable: str) -> str:
    return run_script(CHILD, arch, FP_PROGRAMS, {"PRIVLAB_PORTABLE": portable})


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_portable_mode_does_fp_in_code_hooks_and_leaves_unicorns_helpers_alone(arch: str) -> None:
    line = run_child(arch, "1")
    assert line == " ".join(f"{n}=HALT:0" for n in FP_PROGRAMS) + " emulating own"


def test_normal_mode_on_x86_64_jumps_from_unicorns_helpers_to_the_cores() -> None:
    import platform
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the helpers are replaced on x86-64 hosts only")
    line = run_child("rv64", "0")
    assert line == " ".join(f"{n}=HALT:0" for n in FP_PROGRAMS) + " replaced jump"


PMP_CHILD = RUN_PROGRAMS + """
if "pmp_partial" in machines:
    m, image = machines["pmp_partial"]
    t = [e for e in m.events if hasattr(e, "code")][0]
    store = int.from_bytes(m.memory.read(t.epc, 4), "little")
    load = int.from_bytes(m.memory.read(t.epc - 4, 4), "little")
    results.append(f"trap={t.code},{store & 0x7f:#x},{load & 0x7f:#x},"
                   f"{t.tval == image.symbol('buf')}")

# Where libunicorn's own calls to its PMP check go: still to libunicorn.
class DlInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]
libc = ctypes.CDLL(None)
libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
lib.plt_slot.restype = ctypes.c_void_p
lib.plt_slot.argtypes = [ctypes.c_char_p]
slot = lib.plt_slot(b"pmp_hart_has_privs_riscv64")
owner = "none"
if slot:
    info = DlInfo()
    libc.dladdr(ctypes.c_void_p.from_address(slot).value, ctypes.byref(info))
    owner = "unicorn" if b"libunicorn" in info.fname else info.fname.decode()
print(" ".join(results), "vtlb" if lib.hart_vtlb_on() else "plt", owner)
"""

PMP_PROGRAMS = ["pmp", "pmp_partial"]


def run_pmp_child(arch: str, env_extra: dict[str, str]) -> str:
    return run_script(PMP_CHILD, arch, PMP_PROGRAMS, env_extra)


# pmp_partial's one trap: a store access fault (cause 7) at the sw (opcode 0x23) right
# after the lw (0x03) of the same word, tval the word's address (buf). Every program
# checks its own traps' cause, epc and tval, and halts with 0 only if all match.
PMP_LINE = "pmp=HALT:0 pmp_partial=HALT:0 trap=7,0x23,0x3,True"


def test_the_tlb_hook_leaves_libunicorns_pmp_check_alone() -> None:
    # PRIVLAB_VTLB=1 in portable mode with the PLT there: nothing of libunicorn is
    # replaced, PMP included (its slot still leads into libunicorn).
    env = {"PRIVLAB_PORTABLE": "1", "PRIVLAB_VTLB": "1"}
    assert run_pmp_child("rv64", env) == PMP_LINE + " vtlb unicorn"


def test_normal_mode_keeps_pmp_in_libunicorns_plt() -> None:
    import platform
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("normal mode is x86-64's default only")
    line = run_pmp_child("rv64", {"PRIVLAB_PORTABLE": "0"})
    assert line.startswith(PMP_LINE + " plt ") and not line.endswith(" unicorn")


VM_PROGRAMS = ["vm_deeper", "vm_page_faults", "vm_reserved_bits", "vm_permissions"]


def test_the_virtual_tlb_walks_sv39_sv48_and_sv57() -> None:
    """vtlb.c walks the tables itself (fetch.c pt_walk): every scheme QEMU 7.2 accepts,
    with the faults the programs check (cause, epc, tval), as in normal mode."""
    env = {"PRIVLAB_PORTABLE": "1", "PRIVLAB_VTLB": "1"}
    line = run_script(RUN_PROGRAMS + 'print(" ".join(results))', "rv64", VM_PROGRAMS, env)
    assert line == " ".join(f"{n}=HALT:0" for n in VM_PROGRAMS)


def test_a_host_without_libunicorns_plt_runs_with_the_virtual_tlb(tmp_path: Path) -> None:
    # PRIVLAB_NO_PLT=1 makes plt.c find no slot, as on macOS (a Mach-O libunicorn):
    # portable mode and vtlb.c by themselves, PMP exact (cause, epc, tval) and the
    # bundled system booting.
    assert run_pmp_child("rv64", {"PRIVLAB_NO_PLT": "1"}) == PMP_LINE + " vtlb none"
    env = {key: value for key, value in os.environ.items()
           if key not in ("PRIVLAB_PORTABLE", "PRIVLAB_VTLB")}
    proc = subprocess.run([sys.executable, "-m", "privlab", "run", "--user", "hello"],
                          env={**env, "PRIVLAB_NO_PLT": "1"}, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, check=False)
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    assert "Hello, world!" in proc.stdout
