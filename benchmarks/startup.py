"""Start-up: `privlab run --quiet --user hello` end to end, warm build cache (goal: at
most 0.3 s), against QEMU 7.2 booting the same firmware, kernel,
initrd (hello as init) and disk in the same run.

Each side runs once untimed (the build, the ELF-facts cache, the native core, Python's
bytecode cache), then N times timed as whole processes; the medians and their ratio are
printed. privlab runs with PYTHONDONTWRITEBYTECODE unset, as on a user's machine: with
it set (some CI images and sandboxes set it), every run compiles privlab's ~140
modules again, 0.1 s that a user never pays after the first run.

    python benchmarks/startup.py [-n N] [--program PROG]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

GOAL = 0.3


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", "--runs", type=int, default=10, help="timed runs per side (default 10)")
    p.add_argument("--program", default="hello", help="the bundled program run as init")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error(f"--runs must be at least 1, not {args.runs}")
    return args


def privlab_command(program: str) -> list[str]:
    return [sys.executable, "-m", "privlab", "run", "--quiet", "--user", program]


def qemu_command(program: str, initrd: Path) -> list[str] | None:
    """QEMU's `virt` board with our firmware and kernel, `program` as init, the build's
    disk as a snapshot: what `privlab run --user PROGRAM` boots."""
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
            *drive_args(images.disk, snapshot=True)]


def median_wall(cmd: list[str], runs: int, env: dict[str, str] | None = None) -> float:
    """Median wall time of `runs` runs after one untimed warm-up; exits if one fails."""
    times = []
    for i in range(runs + 1):
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
                              check=False, env=env)
        took = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"{cmd[0]} ... exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
        if i:
            times.append(took)
    return statistics.median(times)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    privlab = median_wall(privlab_command(args.program), args.runs, env)
    line = (f"privlab run --quiet --user {args.program}: median {privlab:.3f} s of "
            f"{args.runs} warm runs (goal <= {GOAL} s: {'meets' if privlab <= GOAL else 'MISSES'})")
    with tempfile.TemporaryDirectory(prefix="privlab-startup-") as tmp:
        cmd = qemu_command(args.program, Path(tmp) / "initrd.cpio")
        if cmd is None:
            print(f"{line}; QEMU not found, no ratio")
        else:
            qemu = median_wall(cmd, args.runs)
            print(f"{line}; QEMU 7.2 median {qemu:.3f} s; privlab/QEMU {privlab / qemu:.2f}x")
    return 0 if privlab <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
