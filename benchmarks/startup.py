"""Start-up: how long a user waits for a run that does almost nothing, against QEMU 7.2
with its defaults and with -icount shift=0, in the same run:

- `privlab run --quiet --user hello` end to end, warm build cache (goal: at most 0.3 s,
  and at most 2x QEMU booting the same firmware, kernel, initrd (hello as init) and
  disk);
- `privlab run --bios none --kernel T`, T a bare-metal program that powers off at once
  (benchmarks/programs/alu_loop.S with no iterations), against QEMU `-bios none -kernel
  T` (goal: at most 2x);
- with `--riscv-tests DIR` (a directory of built riscv-tests ISA tests, not vendored:
  docs/conformance.md), the 194 `p` tests of suites ui um ua uc mi si, RV32 and RV64,
  each a whole command, their total against QEMU `-machine spike` running each (goal:
  at most 2x).

Each command runs once untimed (the build, the ELF-facts cache, the native core,
Python's bytecode cache), then N times timed as whole processes; the medians and their
ratios are printed. privlab runs with PYTHONDONTWRITEBYTECODE unset, as on a user's
machine: with it set (some CI images and sandboxes set it), every run compiles
privlab's ~140 modules again, 0.1 s that a user never pays after the first run.

    python benchmarks/startup.py [-n N] [--program PROG] [--riscv-tests DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

GOAL = 0.3          # seconds, `run --user hello`
RATIO = 2.0         # every start-up against QEMU's defaults
SUITES = re.compile(r"rv(32|64)(ui|um|ua|uc|mi|si)-p-[a-z0-9_-]+")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", "--runs", type=int, default=10, help="timed runs per side (default 10)")
    p.add_argument("--program", default="hello", help="the bundled program run as init")
    p.add_argument("--riscv-tests", type=Path, metavar="DIR",
                   help="built riscv-tests ISA tests: also time the 194 p tests")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error(f"--runs must be at least 1, not {args.runs}")
    return args


def privlab_command(program: str) -> list[str]:
    from common import privlab_cli

    return [*privlab_cli(), "run", "--quiet", "--user", program]


def qemu_command(program: str, initrd: Path, icount: bool = False) -> list[str] | None:
    """QEMU's `virt` board with our firmware and kernel, `program` as init, the build's
    disk as a snapshot: what `privlab run --user PROGRAM` boots (with `icount`, on
    -icount shift=0)."""
    from privlab.boot import user_boot
    from privlab.build.images import build_images
    from privlab.qemu import drive_args

    qemu = shutil.which("qemu-system-riscv64")
    if qemu is None:
        return None
    images = build_images("rv64", listings=False)
    ub = user_boot(images.users, program, [])
    initrd.write_bytes(ub.initrd)
    return [qemu, "-machine", "virt", "-nographic", "-monitor", "none", "-serial", "stdio",
            "-bios", str(images.firmware), "-kernel", str(images.kernel),
            "-initrd", str(initrd), "-append", ub.bootargs,
            *drive_args(images.disk, snapshot=True),
            *(["-icount", "shift=0"] if icount else [])]


def median_wall(cmd: list[str], runs: int, env: dict[str, str] | None = None, *,
                warm: bool = True, status: int | None = 0) -> float:
    """Median wall time of `runs` runs after one untimed warm-up (`warm`); exits if one
    ends with another status than `status` (None: any)."""
    times = []
    for i in range(runs + (1 if warm else 0)):
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
                              check=False, env=env)
        took = time.perf_counter() - start
        if status is not None and proc.returncode != status:
            sys.exit(f"{' '.join(cmd)} exited {proc.returncode}: "
                     f"{proc.stderr.decode()[-500:]}")
        if i or not warm:
            times.append(took)
    return statistics.median(times)


def qemu_bare(elf: Path, icount: bool, machine: str = "virt") -> list[str]:
    xlen = 32 if elf.name.startswith("rv32") else 64
    return [f"qemu-system-riscv{xlen}", "-machine", machine, "-bios", "none", "-kernel",
            str(elf), "-nographic", "-monitor", "none", "-serial", "none",
            *(["-icount", "shift=0"] if icount else [])]


def compare(what: str, ours: float, qemu: tuple[float, float] | None,
            goal: float = RATIO) -> bool:
    """Print privlab's time against QEMU's defaults and -icount shift=0; True if the
    ratio to the defaults meets `goal`."""
    if qemu is None:
        print(f"{what}: privlab {ours:.3f} s; QEMU not found, no ratio")
        return True
    default, icount = qemu
    ratio = ours / default
    print(f"{what}: privlab {ours:.3f} s; QEMU 7.2 defaults {default:.3f} s "
          f"({ratio:.2f}x), -icount shift=0 {icount:.3f} s ({ours / icount:.2f}x); "
          f"goal <= {goal}x QEMU's defaults: {'meets' if ratio <= goal else 'MISSES'}")
    return ratio <= goal


def riscv_tests(directory: Path, env: dict[str, str],
                have_qemu: bool) -> tuple[int, float, tuple[float, float] | None]:
    """The 194 p tests run one after another as whole commands: (how many, privlab's
    total, QEMU's totals on its two clocks). Each test runs once on each side, the
    sides taking turns test by test, so that the host's speed, which drifts over the
    minute this takes, weighs on all three alike. Pass or fail is docs/conformance.md's
    business, not this benchmark's."""
    tests = sorted(p for p in directory.iterdir() if SUITES.fullmatch(p.name))
    if not tests:
        sys.exit(f"{directory}: no riscv-tests p tests (rv64ui-p-add, ...) in it")
    from common import privlab_cli

    ours = 0.0
    theirs = [0.0, 0.0]
    for t in tests:
        ours += median_wall([*privlab_cli(), "run", "--quiet", "--bios", "none", "--kernel",
                             str(t)], 1, env, warm=False, status=None)
        if have_qemu:
            for i, icount in enumerate((False, True)):
                theirs[i] += median_wall(qemu_bare(t, icount, "spike"), 1, warm=False,
                                         status=None)
    return len(tests), ours, (theirs[0], theirs[1]) if have_qemu else None


def main(argv: Sequence[str] | None = None) -> int:
    from common import build, privlab_cli

    args = parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    have_qemu = shutil.which("qemu-system-riscv64") is not None
    met = True
    privlab = median_wall(privlab_command(args.program), args.runs, env)
    print(f"privlab run --quiet --user {args.program}: median {privlab:.3f} s of "
          f"{args.runs} warm runs (goal <= {GOAL} s: {'meets' if privlab <= GOAL else 'MISSES'})")
    met &= privlab <= GOAL
    with tempfile.TemporaryDirectory(prefix="privlab-startup-") as tmp:
        qemu = None
        if have_qemu:
            qemu = tuple(median_wall(cmd, args.runs) for cmd in
                         (qemu_command(args.program, Path(tmp) / f"initrd{i}.cpio", icount)
                          for i, icount in enumerate((False, True))) if cmd is not None)
        met &= compare(f"  run --user {args.program}", privlab,
                       (qemu[0], qemu[1]) if qemu else None)
    bare = build("alu_loop", 0)
    ours = median_wall([*privlab_cli(), "run", "--quiet", "--bios", "none",
                        "--kernel", str(bare)], args.runs, env)
    qemu_bare_times = (median_wall(qemu_bare(bare, False), args.runs),
                       median_wall(qemu_bare(bare, True), args.runs)) if have_qemu else None
    met &= compare(f"privlab run --bios none --kernel {bare.name}", ours, qemu_bare_times)
    if args.riscv_tests is not None:
        if not args.riscv_tests.is_dir():
            print(f"startup: {args.riscv_tests}: no such directory", file=sys.stderr)
            return 2
        n, ours, theirs = riscv_tests(args.riscv_tests, env, have_qemu)
        met &= compare(f"the {n} riscv-tests p tests, in total (QEMU: -machine spike)",
                       ours, theirs)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
