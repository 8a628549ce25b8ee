"""A real kernel's system-call round trip: the bundled firmware and kernel running
`getpid N` (a loop of getpid() calls, each switching satp into the kernel and back),
on privlab and on QEMU 7.2 with the same firmware, kernel and initrd, in the same run.
Goal: at most 0.3x QEMU's time per call.

    python benchmarks/syscall_roundtrip.py [N]      (default 200,000 calls)

Each side boots twice, with N calls and with none; the difference is the calls'
time, boot excluded. QEMU runs in its deterministic mode (-icount shift=0, privlab's
clock) and with its default clock; the goal is against the first.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from common import best_of, run_user_program, time_qemu_user

from privlab.build.images import Images, build_images

GOAL = 0.3
REPEAT = 3


def privlab(images: Images, n: int) -> float:
    return run_user_program(images, "getpid", [str(n)])


def qemu(images: Images, n: int, icount: bool, scratch: Path) -> float:
    return time_qemu_user(images, "getpid", [str(n)], b"getpid: ", scratch, icount=icount)


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    images = build_images("rv64", listings=False)
    ours = best_of(REPEAT, lambda: privlab(images, n)) - best_of(REPEAT, lambda: privlab(images, 0))
    print(f"getpid round trip, bundled kernel, {n:,} calls")
    print(f"  privlab:                {ours:7.3f} s  ({ours / n * 1e6:6.2f} us/call)")
    if shutil.which("qemu-system-riscv64") is None:
        print("  QEMU 7.2 not installed: no reference, no ratio")
        return 0
    status = 0
    scratch = Path(tempfile.mkdtemp(prefix="privlab-bench-"))
    for icount in (True, False):
        theirs = best_of(REPEAT, lambda ic=icount: qemu(images, n, ic, scratch)) - \
            best_of(REPEAT, lambda ic=icount: qemu(images, 0, ic, scratch))
        name = "QEMU -icount shift=0" if icount else "QEMU, host clock"
        ratio = ours / theirs
        print(f"  {name + ':':23} {theirs:7.3f} s  ({theirs / n * 1e6:6.2f} us/call)  "
              f"ratio {ratio:.2f}x")
        if icount:
            verdict = "meets" if ratio <= GOAL else "MISSES"
            print(f"  goal: at most {GOAL}x QEMU -icount shift=0: {verdict}")
            status = 0 if ratio <= GOAL else 1
    shutil.rmtree(scratch)
    return status


if __name__ == "__main__":
    sys.exit(main())
