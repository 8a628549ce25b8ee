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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import best_of

from harness.boot import user_boot
from harness.build.images import Images, build_images
from harness.devices import Console
from harness.machine import Machine, Stop, load_elf
from harness.machine.assemble import boot_system

GOAL = 0.3
REPEAT = 3


def privlab(images: Images, n: int) -> float:
    ub = user_boot(images.users, "getpid", [str(n)])
    m = Machine(64, console=Console(), keep_events=False)
    boot_system(m, load_elf(images.firmware), load_elf(images.kernel), ub.initrd, ub.bootargs)
    start = time.perf_counter()
    result = m.run()
    took = time.perf_counter() - start
    m.close()
    if result.stop is not Stop.HALT or result.status != 0:
        sys.exit(f"getpid {n} did not finish on privlab: {result.stop} {result.message}")
    return took


def qemu(images: Images, n: int, icount: bool, scratch: Path) -> float:
    ub = user_boot(images.users, "getpid", [str(n)])
    initrd = scratch / f"getpid-{n}.initrd"
    initrd.write_bytes(ub.initrd)
    cmd = ["qemu-system-riscv64", "-machine", "virt", "-nographic", "-monitor", "none",
           "-serial", "stdio", "-bios", str(images.firmware), "-kernel", str(images.kernel),
           "-initrd", str(initrd), "-append", ub.bootargs]
    if icount:
        cmd += ["-icount", "shift=0"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=600,
                          check=False)
    took = time.perf_counter() - start
    if b"getpid: " not in proc.stdout:
        sys.exit(f"getpid {n} did not finish on QEMU ({proc.returncode}): "
                 f"{proc.stdout[-300:].decode(errors='replace')}")
    return took


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
