"""`--abi ucore`: the process views read a uCore-Tutorial kernel's own structures
(`pool[]`, `current_proc` or chapter 8's `current_thread`, `files[]`,
`kernel_pagetable`), with tests/qemucmd/ucore_shaped.c standing in for the course's
kernels: pool[1] runs pid 7 (parent pid 1), its trap frame holds a0 = 0x1234, its
descriptor 0 is the console, and kernel_pagetable is `kroot`, one gigapage."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from privlab.abi.csr import Priv
from privlab.abi.kernel_profiles import PROFILES, satp_of_root
from privlab.api import Session
from privlab.api.points import run_to
from privlab.build.baremetal import build_baremetal
from privlab.build.toolchain import ARCHES
from privlab.kernelinfo.dwarf import MissingStructure
from privlab.kernelinfo.mirrors import KernelInfo
from privlab.kernelinfo.symbols import ElfSymbols

HERE = Path(__file__).resolve().parent
PRIVLAB = [sys.executable, "-m", "privlab"]
RUNNING_PID = 7
BUDGET = 100_000


@pytest.fixture(scope="module", params=["ch5", "ch8"])
def kernel(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ucore") / f"ucore_{request.param}.elf"
    return build_baremetal([HERE / "ucore_shaped.c"], ARCHES["rv64"], out,
                           defines={"THREADS": 1} if request.param == "ch8" else {},
                           listings=False)


def symbol(kernel: Path, name: str) -> int:
    syms = ElfSymbols(kernel)
    try:
        return syms.by_name[name][0]
    finally:
        syms.close()


def kroot(kernel: Path) -> int:
    return symbol(kernel, "kroot")


def user_satp(kernel: Path) -> int:
    return satp_of_root(symbol(kernel, "uroot"), 64)


def at_getpid(kernel: Path, abi: str = "ucore") -> Session:
    s = Session.bare(kernel, abi=abi)
    run_to(s, "syscall:getpid", BUDGET)
    return s


def test_the_process_table_is_pool_and_the_running_one_is_current(kernel: Path) -> None:
    s = at_getpid(kernel)
    table = s.processes()
    assert [(p.slot, p.pid, p.parent_pid) for p in table.processes] == [
        (0, 1, None), (1, RUNNING_PID, 1)]
    assert table.current == 1
    info = s.info.kernel_info
    assert info is not None
    assert info.current_pid(s.machine.memory) == (RUNNING_PID, "")   # uCore names none
    threads = "ch8" in kernel.name
    assert info.current_tid(s.machine.memory) == (1 if threads else None)


def test_the_trap_frame_and_files_are_the_running_process_s(kernel: Path) -> None:
    s = at_getpid(kernel)
    frame = s.trapframe()
    assert frame is not None and frame.get_int("a0") == 0x1234
    info = s.info.kernel_info
    assert info is not None
    running = s.processes().by_pid(RUNNING_PID)
    assert running is not None
    files = info.open_files(s.machine.memory, running)
    assert files is not None
    assert [(f.fd, f.kind, f.ref, f.readable, f.writable) for f in files] == [
        (0, "STDIO", 1, True, False)]


def test_the_kernel_page_table_is_kernel_pagetable(kernel: Path) -> None:
    s = at_getpid(kernel)
    info = s.info.kernel_info
    assert info is not None
    root = kroot(kernel)
    assert info.kernel_satp(s.machine.memory, 64) == (8 << 60) | (root >> 12) \
        == satp_of_root(root, 64)


def test_privlab_s_own_profile_finds_no_proc_in_it(kernel: Path) -> None:
    s = at_getpid(kernel)
    info = KernelInfo.load(kernel, PROFILES["rcore"])
    with pytest.raises(MissingStructure, match="no global variable 'proc'"):
        info.process_table(s.machine.memory)


def test_trace_rows_name_the_pid_with_the_profile_and_not_without(kernel: Path) -> None:
    def calls(*abi: str) -> list[list[str]]:
        out = subprocess.run([*PRIVLAB, "trace", "--format", "calls", *abi, "--bios", "none",
                              "--kernel", str(kernel)], capture_output=True, text=True,
                             timeout=120)
        assert out.returncode == 0, out.stderr
        return [re.split(r"\s{2,}", line.strip())[1:3] for line in out.stdout.splitlines()[1:]]

    who = f"{RUNNING_PID} tid 1" if "ch8" in kernel.name else str(RUNNING_PID)
    assert calls("--abi", "ucore") == [[who, "getpid()"], [who, "exit(7)"]]
    space = f"satp {user_satp(kernel):#x}"      # an address space privlab cannot name
    assert calls() == [[space, "getpid()"], [space, "exit(7)"]]


def test_pagetable_kernel_table_reads_kernel_pagetable(kernel: Path) -> None:
    out = subprocess.run([*PRIVLAB, "pagetable", "--kernel-table", "--abi", "ucore",
                          "--bios", "none", "--kernel", str(kernel), "--at", "syscall:getpid"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    root = kroot(kernel)
    lines = out.stdout.splitlines()
    assert lines[1].split()[:2] == ["satp", f"{(8 << 60) | (root >> 12):#x}"]
    assert f"root table {root:#x}" in lines[1]
    assert "0x0080000000-0x00bfffffff  rwx" in lines[2]


@pytest.mark.parametrize("value, offset", [(144, 144), ([0x23, 0x90, 0x01], 144),
                                           ([0x23, 0x08], 8), (None, 0)])
def test_member_offsets_read_as_constants_and_as_dwarf_2_expressions(
        value: object, offset: int) -> None:
    """xv6 builds with -gdwarf-2, where a member's offset is `DW_OP_plus_uconst N`
    (0x23, N in ULEB128: 0x90 0x01 is 144); later DWARF gives the constant."""
    from types import SimpleNamespace

    from privlab.kernelinfo.dwarf import _member_offset

    assert _member_offset(None if value is None else SimpleNamespace(value=value)) == offset


def test_inspect_shows_pool_with_the_running_slot_marked(kernel: Path) -> None:
    out = subprocess.run([*PRIVLAB, "inspect", "--abi", "ucore", "--bios", "none",
                          "--kernel", str(kernel), "--at", "syscall:getpid"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any(line.startswith("Processes (pool[])") for line in lines)
    running = [line.split() for line in lines if line.lstrip().startswith("▶")]
    state = "P_USED" if "ch8" in kernel.name else "RUNNING"
    assert ["▶", "1", str(RUNNING_PID), state] in [r[:4] for r in running]


@pytest.mark.parametrize("abi", ["ucore", "rcore"])
def test_the_stepper_timeline_names_the_process_from_pool(kernel: Path, abi: str) -> None:
    """The stepper reads no memory at each call: it names a call's address space from
    the process table, by each process's `pagetable`."""
    from privlab.stepper.controller import Stepper

    tid = " tid 1" if "ch8" in kernel.name else ""
    who = f"pid {RUNNING_PID}{tid}" if abi == "ucore" else f"satp {user_satp(kernel):#x}"
    s = Session.bare(kernel, abi=abi)
    try:
        stepper = Stepper(s, every=2_000)
        stepper.next_syscall()
        calls = [r for r in stepper.timeline_rows() if r.priv_from is Priv.U]
        assert calls and calls[-1].who == who
    finally:
        s.close()
