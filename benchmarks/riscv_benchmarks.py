"""The riscv-tests benchmarks (dhrystone, median, qsort, rsort, spmv, towers, vvadd,
memcpy, mm, multiply, mt-vvadd, mt-matmul, mt-memcpy) on privlab's defaults and on QEMU
7.2 with its defaults and with `-icount shift=0`, in the same run: wall and CPU time of
each whole command (start-up included: most of them run for milliseconds), the ratios,
and whether privlab's console output equals QEMU -icount shift=0's byte for byte (the
mcycle and minstret counts included: privlab runs on that clock, `--icount-shift 0`,
which changes none of the instructions these benchmarks run). Exits 1 if one differs
or fails.

    python benchmarks/riscv_benchmarks.py [DIR] [--harts N] [--repeat R]

DIR (or $PRIVLAB_RISCV_BENCHMARKS) holds the benchmarks built as NAME.riscv for QEMU's
`virt` board, started with `-bios none`: the riscv-tests sources are not vendored and
CI cannot fetch them, so without DIR the benchmark says so and exits 0. The sources'
own start-up and syscalls.c print through HTIF's syscall proxy (tohost/fromhost), which
neither QEMU's virt board nor privlab serves, so each is built with a start-up and
console of the builder's own instead: characters to the NS16550A UART at 0x10000000,
the exit status to the sifive_test finisher at 0x100000 (0x5555: pass; status << 16 |
0x3333: fail), setStats' mcycle and minstret deltas printed after main as
`mcycle = N` / `minstret = N`, and the mt-* ones started on every hart (`--harts`,
default 2, the same on both machines).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import QEMU_CPU, privlab_cli

BENCHMARKS = ("dhrystone", "median", "qsort", "rsort", "spmv", "towers", "vvadd", "memcpy",
              "mm", "multiply", "mt-vvadd", "mt-matmul", "mt-memcpy")
ENV = "PRIVLAB_RISCV_BENCHMARKS"
TIMEOUT = 900


@dataclass
class Timed:
    wall: float        # seconds, best of the repeats
    cpu: float         # user + system seconds of that run
    status: int
    output: bytes
    errors: bytes


def timed(cmd: list[str], repeat: int) -> Timed:
    """Run cmd `repeat` times to its end; the fastest run, with its CPU time (wait4)."""
    best: Timed | None = None
    for _ in range(repeat):
        start = time.perf_counter()
        with tempfile.TemporaryFile() as errors:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=errors)
            assert proc.stdout is not None
            output = proc.stdout.read()
            _, status, usage = os.wait4(proc.pid, 0)
            errors.seek(0)
            error_text = errors.read()
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if best is None or wall < best.wall:
            best = Timed(wall, usage.ru_utime + usage.ru_stime, proc.returncode, output,
                         error_text)
    assert best is not None
    return best


def privlab_command(elf: Path, harts: int) -> list[str]:
    # On QEMU -icount shift=0's clock (1 ns an instruction), so that the cycle counts
    # the benchmarks print can equal its; the pace changes no instruction they run.
    smp = ["--smp", str(harts)] if harts > 1 else []
    return [*privlab_cli(), "run", *smp, "--icount-shift", "0", "--bios",
            "none", "--kernel", str(elf)]


def qemu_command(elf: Path, harts: int, icount: bool) -> list[str]:
    return ["qemu-system-riscv64", "-machine", "virt", "-cpu", QEMU_CPU[64],
            "-smp", str(harts), "-bios", "none", "-kernel", str(elf), "-nographic",
            "-monitor", "none", "-serial", "stdio",
            *(["-icount", "shift=0"] if icount else [])]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir", nargs="?", type=Path, default=os.environ.get(ENV),
                   help=f"the built benchmarks, NAME.riscv (default ${ENV})")
    p.add_argument("--harts", type=int, default=2, help="harts for the mt-* ones (default 2)")
    p.add_argument("--repeat", type=int, default=1, help="runs per machine, best taken")
    p.add_argument("--only", metavar="NAME,...", help="these benchmarks only")
    args = p.parse_args()
    if args.dir is None or not Path(args.dir).is_dir():
        print(f"riscv_benchmarks: no directory of built riscv-tests benchmarks (give DIR "
              f"or set ${ENV}): skipped")
        return 0
    if shutil.which("qemu-system-riscv64") is None:
        print("riscv_benchmarks: qemu-system-riscv64 is not installed: skipped")
        return 0
    names = args.only.split(",") if args.only else list(BENCHMARKS)
    found = [(n, Path(args.dir) / f"{n}.riscv") for n in names]
    missing = [n for n, elf in found if not elf.is_file()]
    if missing:
        print(f"riscv_benchmarks: not in {args.dir}: {', '.join(missing)}")
    found = [(n, elf) for n, elf in found if elf.is_file()]
    print(f"{'benchmark':<10} {'privlab':>9} {'QEMU':>9} {'QEMU -ic':>9} {'/QEMU':>7} "
          f"{'/-icount':>8}   {'CPU: privlab':>12} {'QEMU':>7} {'-icount':>7}   output")
    if found:   # untimed: the native core's build after a change, Python's caches
        timed(privlab_command(found[0][1], 1), 1)
    failed = 0
    totals = [0.0, 0.0, 0.0]
    for name, elf in found:
        harts = args.harts if name.startswith("mt-") else 1
        ours = timed(privlab_command(elf, harts), args.repeat)
        default = timed(qemu_command(elf, harts, False), args.repeat)
        icount = timed(qemu_command(elf, harts, True), args.repeat)
        same = ours.output == icount.output and ours.status == icount.status
        ok = ours.status == 0 and icount.status == 0 and default.status == 0
        verdict = ("equal to -icount" if same else "DIFFERS from -icount") + \
            ("" if ok else f"; exit {ours.status}/{default.status}/{icount.status}")
        failed |= not (same and ok)
        for i, t in enumerate((ours, default, icount)):
            totals[i] += t.wall
        print(f"{name:<10} {ours.wall:8.3f}s {default.wall:8.3f}s {icount.wall:8.3f}s "
              f"{ours.wall / default.wall:6.2f}x {ours.wall / icount.wall:7.2f}x   "
              f"{ours.cpu:11.3f}s {default.cpu:6.3f}s {icount.cpu:6.3f}s   {verdict}")
        if not same:
            print(f"    privlab: {ours.output[-200:]!r}\n    QEMU:    {icount.output[-200:]!r}")
        if ours.status:
            print(f"    privlab's stderr: {ours.errors[-300:].decode(errors='replace')}")
    if found:
        print(f"{'total':<10} {totals[0]:8.3f}s {totals[1]:8.3f}s {totals[2]:8.3f}s "
              f"{totals[0] / totals[1]:6.2f}x {totals[0] / totals[2]:7.2f}x")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
