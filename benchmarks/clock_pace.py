"""Clock pace: how much a guest does in 100 ms of its own time, on privlab and on QEMU
7.2 with each of its clocks. Not a speed goal: it says which QEMU run does the same
guest work as privlab's, so that a kernel paced by its timer is timed like for like.

    python benchmarks/clock_pace.py [--ticks N] [--icount-shift S ...]

The program (programs/clock_pace.S) makes U->S->U ecall round trips until the CLINT's
mtime has advanced by N ticks of 10 MHz (default 1,000,000: 100 ms, one xv6 tick) and
prints how many it made. On privlab and on QEMU -icount shift=S the guest's time is
its instruction count (2^S ns each), so both make the same number of round trips, and
the host time they take is a fair comparison. On QEMU's default clock the guest's time
is the host's: the count is what QEMU manages in 100 ms of wall time, so a faster or
slower emulator gives its guest more or less work per tick. xv6's usertests spends
most of its QEMU time in tests paced that way (killstatus: 100 rounds of "sleep one
tick while a child makes system calls"), which is why benchmarks/xv6_usertests.py
takes QEMU -icount shift=0 as its reference (docs/other-kernels.md).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from dataclasses import dataclass

from common import QEMU_CPU, build, time_command

from privlab.devices.uart import Console
from privlab.machine import Machine, Stop, load_elf
from privlab.pace import DEFAULT_ICOUNT_SHIFT

HOST = None   # QEMU's default clock: no -icount


@dataclass
class Pace:
    clock: str
    round_trips: int
    seconds: float


def _count(text: str, who: str) -> int:
    digits = text.strip().splitlines()[-1:] if text.strip() else []
    if not digits or not digits[0].isdigit():
        sys.exit(f"clock_pace: {who} printed no count: {text[-200:]!r}")
    return int(digits[0])


def on_privlab(ticks: int, shift: int) -> Pace:
    image = load_elf(build("clock_pace", 0, TICKS=ticks))
    console = Console()
    m = Machine(image.xlen, console=console, keep_events=False, icount_shift=shift)
    m.load(image)
    start = time.perf_counter()
    result = m.run()
    took = time.perf_counter() - start
    if result.stop is not Stop.HALT or result.exit_status != 0:
        sys.exit(f"clock_pace: privlab run failed: {result.stop} {result.message}")
    return Pace(f"privlab, --icount-shift {shift}", _count(console.text(), "privlab"), took)


def on_qemu(ticks: int, shift: int | None) -> Pace:
    cmd = ["qemu-system-riscv64", "-machine", "virt", "-cpu", QEMU_CPU[64], "-bios", "none",
           "-kernel", str(build("clock_pace", 0, TICKS=ticks)), "-nographic",
           "-monitor", "none", "-serial", "stdio"]
    if shift is not None:
        cmd += ["-icount", f"shift={shift}"]
    took, proc = time_command(cmd)
    name = "QEMU 7.2, host clock" if shift is None else f"QEMU 7.2, -icount shift={shift}"
    return Pace(name, _count(proc.stdout.decode(errors="replace"), name), took)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ticks", type=int, default=1_000_000,
                   help="the span, in 10 MHz mtime ticks (default 1,000,000: 100 ms)")
    p.add_argument("--icount-shift", type=int, action="append", metavar="S",
                   help="clocks to compare, 2^S ns per instruction (default: 0 and "
                        "privlab's default pace); repeat")
    args = p.parse_args()
    if args.ticks <= 0:
        print("clock_pace: --ticks must be positive", file=sys.stderr)
        return 2
    shifts = args.icount_shift or [0, DEFAULT_ICOUNT_SHIFT]
    paces = [on_privlab(args.ticks, s) for s in shifts]
    if shutil.which("qemu-system-riscv64") is None:
        print("clock_pace: qemu-system-riscv64 is not installed: privlab only")
    else:
        paces += [on_qemu(args.ticks, s) for s in shifts]
        paces.append(max((on_qemu(args.ticks, HOST) for _ in range(3)),
                         key=lambda pace: pace.round_trips))
    span_ms = args.ticks / 10_000
    print(f"U->S->U round trips in {span_ms:g} ms of guest time (mtime at 10 MHz)")
    for pace in paces:
        host_us = pace.seconds / pace.round_trips * 1e6
        print(f"  {pace.clock:>30}: {pace.round_trips:>10,}  in {pace.seconds:6.2f} s of "
              f"host time (start-up included; {host_us:.3f} us per round trip)")
    base = {pace.clock: pace.round_trips for pace in paces}
    host = base.get("QEMU 7.2, host clock")
    if host:
        for pace in paces[:len(shifts)]:
            print(f"guest work per tick, {pace.clock} / QEMU's host clock: "
                  f"{pace.round_trips / host:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
