"""Shared pieces of the benchmarks: building a benchmark program, timing it on privlab
and on QEMU 7.2 in the same run, and printing the ratios.

QEMU runs the same image twice over: with its defaults (the host's clock, what a
student's `make qemu` waits for) and with `-icount shift=0` (one instruction per
nanosecond: privlab's deterministic clock at --icount-shift 0). Every benchmark prints
privlab's ratio against both; its goal names the one it is held to.

Start-up is measured separately (the same program with zero iterations) and
subtracted on both sides, so the ratio compares the work itself.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from privlab.boot import user_boot
from privlab.build import RV64, Arch
from privlab.build.baremetal import build_baremetal
from privlab.build.cache import cache_root
from privlab.build.images import Images
from privlab.devices import Console
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_system

PROGRAMS = Path(__file__).resolve().parent / "programs"


def privlab_cli() -> list[str]:
    """The command a user types: the `privlab` console script beside this Python (a
    venv's), else `python -m privlab`, whose runpy costs about 1.5 ms more a start."""
    script = Path(sys.executable).with_name("privlab")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "privlab"]
QEMU_CPU = {64: "rv64,h=false", 32: "rv32,h=false"}


def build(name: str, iterations: int, arch: Arch = RV64, **defines: int) -> Path:
    """benchmarks/programs/NAME.S with ITERATIONS (and `defines`) set."""
    tag = "".join(f"-{k}{v}" for k, v in sorted(defines.items()))
    out = cache_root() / "bench" / arch.name / f"{name}-{iterations}{tag}.elf"
    return build_baremetal([PROGRAMS / f"{name}.S"], arch, out, include_dirs=[PROGRAMS],
                           defines={"ITERATIONS": iterations, **defines})


def time_privlab(elf: Path, *, trace: bool = True) -> tuple[float, Machine]:
    """Wall time of Machine.run (construction and loading excluded)."""
    image = load_elf(elf)
    m = Machine(image.xlen, keep_events=trace)
    m.load(image)
    if not trace:
        m.hart.state.record_events = 0
    start = time.perf_counter()
    result = m.run()
    elapsed = time.perf_counter() - start
    if result.stop is not Stop.HALT or result.exit_status != 0:
        sys.exit(f"privlab run failed: {result.stop} {result.message}")
    return elapsed, m


def run_user_program(images: Images, program: str, args: Sequence[str],
                     clock: Callable[[], float] = time.perf_counter) -> float:
    """The bundled firmware and kernel running `program ARGS` as the first process, as
    `privlab run --quiet --user` does (events not kept): the `clock` time of
    Machine.run, boot included, construction and loading excluded."""
    ub = user_boot(images.users, program, list(args))
    m = Machine(images.arch.xlen, console=Console(), keep_events=False)
    boot_system(m, load_elf(images.firmware), load_elf(images.kernel), ub.initrd, ub.bootargs)
    start = clock()
    result = m.run()
    took = clock() - start
    m.close()
    if result.stop is not Stop.HALT or result.status != 0:
        sys.exit(f"{program} {' '.join(args)} did not finish: {result.stop} {result.message}")
    return took


def time_command(cmd: list[str]) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    """Wall time of a command (QEMU) run to its end, with what it printed."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=600,
                          check=False)
    return time.perf_counter() - start, proc


def cpu_command(cmd: list[str]) -> float:
    """User + system CPU seconds of a command run to its end (its threads included):
    on a machine other jobs share, the figure its wall time is not."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=600,
                   check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def qemu_bare_command(elf: Path, icount: bool, xlen: int = 64) -> list[str]:
    """QEMU 7.2 running a bare-metal ELF on `virt` (with `icount`: -icount shift=0)."""
    return [f"qemu-system-riscv{xlen}", "-machine", "virt", "-cpu", QEMU_CPU[xlen],
            "-bios", "none", "-kernel", str(elf), "-nographic", "-monitor", "none",
            "-serial", "none", *(["-icount", "shift=0"] if icount else [])]


def time_qemu_user(images: Images, program: str, args: Sequence[str], done: bytes,
                   scratch: Path, *, icount: bool = True, disk: bool = False) -> float:
    """Wall time of QEMU 7.2 booting the same firmware, kernel and initrd as
    `run_user_program` (and the build's disk as a snapshot, with `disk`), with
    `-icount shift=0` unless told otherwise, until it exits; exits if the console
    never shows `done`."""
    from privlab.qemu import drive_args

    ub = user_boot(images.users, program, list(args))
    initrd = scratch / f"{program}-{'-'.join(args)}.initrd"
    initrd.write_bytes(ub.initrd)
    cmd = ["qemu-system-riscv64", "-machine", "virt", "-nographic", "-monitor", "none",
           "-serial", "stdio", "-bios", str(images.firmware), "-kernel", str(images.kernel),
           "-initrd", str(initrd), "-append", ub.bootargs]
    if icount:
        cmd += ["-icount", "shift=0"]
    if disk:
        cmd += drive_args(images.disk, snapshot=True)
    took, proc = time_command(cmd)
    if done not in proc.stdout:
        sys.exit(f"{program} {' '.join(args)} did not finish on QEMU ({proc.returncode}): "
                 f"{proc.stdout[-300:].decode(errors='replace')}")
    return took


def time_qemu(elf: Path, xlen: int = 64, icount: bool = False) -> float | None:
    if shutil.which(f"qemu-system-riscv{xlen}") is None:
        return None
    elapsed, proc = time_command(qemu_bare_command(elf, icount, xlen))
    if proc.returncode != 0:
        sys.exit(f"qemu failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")
    return elapsed


def best_of(n: int, fn: Callable[[], float]) -> float:
    return min(fn() for _ in range(n))


@dataclass
class Reference:
    """QEMU 7.2's seconds for the same work, in the same run: with its defaults and with
    `-icount shift=0` (None: QEMU is not installed)."""

    default: float | None
    icount: float | None

    def clocks(self) -> list[tuple[str, float | None]]:
        return [(QEMU_DEFAULT, self.default), (QEMU_ICOUNT, self.icount)]


QEMU_DEFAULT = "QEMU 7.2 defaults"
QEMU_ICOUNT = "QEMU 7.2 -icount shift=0"


def qemu_reference(work: Path, empty: Path | None, repeat: int = 3,
                   xlen: int = 64) -> Reference:
    """QEMU's best-of-`repeat` time for `work` less that for `empty` (its start-up;
    None: not subtracted), on both clocks."""
    def seconds(icount: bool) -> float | None:
        w = best_of(repeat, lambda: time_qemu(work, xlen, icount) or 0.0)
        if not w:
            return None
        e = best_of(repeat, lambda: time_qemu(empty, xlen, icount) or 0.0) if empty else 0.0
        return w - e
    return Reference(seconds(False), seconds(True))


def ratio_lines(ours: float, ref: Reference) -> list[str]:
    """`privlab / QEMU` against both of QEMU's clocks, a line each."""
    if ref.default is None and ref.icount is None:
        return ["  QEMU 7.2 not installed: no reference, no ratio"]
    return [f"  privlab / {name}: {ours / theirs:.2f}x" for name, theirs in ref.clocks()
            if theirs]


@dataclass
class Timing:
    """Seconds of work (start-up subtracted) on privlab and on QEMU's two clocks, and
    the machine privlab ran the full program on."""

    ours: float
    qemu: Reference
    machine: Machine


def measure(program: str, iterations: int, *, repeat: int = 3, **defines: int) -> Timing:
    """Time `program` with `iterations` against the same program with none, on both."""
    work, empty = build(program, iterations, **defines), build(program, 0, **defines)
    ours = best_of(repeat, lambda: time_privlab(work)[0]) - \
        best_of(repeat, lambda: time_privlab(empty)[0])
    _, machine = time_privlab(work)
    return Timing(ours, qemu_reference(work, empty, repeat), machine)


def report(title: str, ours: float, qemu: Reference, goal: float, unit: str,
           per: int, scale: float = 1e6, *, against: str = QEMU_DEFAULT) -> int:
    """Print privlab's time and QEMU's on both clocks, each also per item (`per` items,
    `scale` converts seconds to `unit`), the ratios, and the goal against `against`
    (QEMU_DEFAULT or QEMU_ICOUNT); returns 1 if the goal is missed."""
    print(f"{title}")
    print(f"  {'privlab':<26} {ours:8.3f} s  ({ours / per * scale:.3f} {unit})")
    reference = dict(qemu.clocks())
    if reference[against] is None:
        print("  QEMU 7.2 not installed: no reference, no ratio")
        return 0
    for name, theirs in qemu.clocks():
        if theirs:
            print(f"  {name:<26} {theirs:8.3f} s  ({theirs / per * scale:.3f} {unit})  "
                  f"privlab/QEMU = {ours / theirs:.2f}x")
    ratio = ours / (reference[against] or float("nan"))
    verdict = "meets" if ratio <= goal else "MISSES"
    print(f"  goal: privlab / {against} <= {goal}x: {ratio:.2f}x, {verdict}")
    return 0 if ratio <= goal else 1
