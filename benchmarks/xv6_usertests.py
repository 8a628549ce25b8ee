"""xv6-riscv's `usertests -q` on privlab and on QEMU 7.2, same kernel, same disk image,
timed in the same run. Goal: privlab no slower than QEMU on the same clock.

    python benchmarks/xv6_usertests.py --xv6 DIR [--icount-shift N] [--no-host-clock]
                                       [--timeout SECONDS] [--only privlab|qemu]
                                       [--smp N] [--tests NAME,NAME...]

DIR is an xv6-riscv tree built for one hart (`make CPUS=1 kernel/kernel fs.img`, with
Debian's gcc-riscv64-unknown-elf); xv6 cannot ship with privlab, so you build your own.
Both machines boot `kernel/kernel` with `-bios none` and fs.img on virtio-blk (QEMU
with `-snapshot`, privlab with `snapshot=on`, so the image is not changed), type
`usertests -q` at the shell (or, with --tests, `usertests NAME` for each name in turn),
and are stopped at `ALL TESTS PASSED` (or a failure, or
the timeout). Each time is wall clock from start to that line.

xv6 paces much of usertests by its timer (sleeps, kills, a parent waiting on children:
killstatus alone is 100 rounds of "sleep one tick while a child makes system calls"),
so the guest's clock decides how much work the guest does, not only how fast it is
done. privlab runs with `--icount-shift N` (default privlab's, 5: 32 ns an instruction), and the
goal's reference is QEMU with `-icount shift=N`: the same deterministic clock, so the
same guest work (benchmarks/clock_pace.py measures it). QEMU's default clock, the
host's, is timed too and its ratio printed, but it is not the same work: its guest
gets a tick per 100 ms of the host's time, in which QEMU makes 20 to 40 times fewer
system calls than a guest clocked by its instructions (docs/other-kernels.md).

`--smp N` boots both with N harts: build xv6 with `make CPUS=N` (xv6's own default is
3). Before 2024 its scheduler spins while it has nothing to run, so on privlab the idle
harts are what `--smp` costs: only a hart in `wfi` gives up its turns, and one that
spins takes them (docs/machine.md#several-harts says why); QEMU runs its harts on host
threads. Since 2024 it waits in `wfi` there.
"""

from __future__ import annotations

import argparse
import os
import selectors
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from common import privlab_cli

from privlab.pace import DEFAULT_ICOUNT_SHIFT

DONE = b"ALL TESTS PASSED"
FAILED = b"SOME TESTS FAILED"
COMMAND = b"usertests -q\n"
SHELL_PROMPT = b"$ "


@dataclass
class Timing:
    name: str
    seconds: float
    passed: bool
    tail: str


def _qemu_command(kernel: Path, image: Path, icount_shift: int | None = None,
                  smp: int = 1) -> list[str]:
    icount = [] if icount_shift is None else ["-icount", f"shift={icount_shift}"]
    return ["qemu-system-riscv64", *icount, "-machine", "virt", "-bios", "none",
            "-kernel", str(kernel), "-m", "128M", "-smp", str(smp), "-nographic", "-snapshot",
            "-global", "virtio-mmio.force-legacy=false",
            "-drive", f"file={image},if=none,format=raw,id=x0",
            "-device", "virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0"]


def _privlab_command(kernel: Path, image: Path, icount_shift: int,
                     smp: int = 1) -> list[str]:
    return [*privlab_cli(), "run", "--bios", "none", "--kernel", str(kernel),
            "--drive", f"{image},snapshot=on", "--icount-shift", str(icount_shift),
            "--smp", str(smp)]


def _time(name: str, cmd: list[str], timeout: float,
          commands: list[bytes] | None = None) -> Timing:
    """Start `cmd`, type the commands one at a time, each at the shell prompt after
    the previous one passed; stop at the last verdict (or the first failure)."""
    commands = commands or [COMMAND]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    assert proc.stdin is not None and proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    out, typed, verdict = b"", 0, None
    try:
        while verdict is None and time.perf_counter() - start < timeout:
            if not sel.select(timeout=1.0):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            out += chunk
            passed = out.count(DONE)
            if FAILED in out:
                verdict = False
            elif passed == len(commands):
                verdict = True
            elif typed == passed and SHELL_PROMPT in out[out.rfind(DONE) + 1 if passed else 0:]:
                proc.stdin.write(commands[typed])
                proc.stdin.flush()
                typed += 1
    finally:
        proc.kill()
        proc.wait()
    tail = out[-600:].decode(errors="replace")
    return Timing(name, time.perf_counter() - start, bool(verdict), tail)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--xv6", type=Path, required=True, help="a built xv6-riscv tree")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per machine")
    p.add_argument("--only", choices=("privlab", "qemu"))
    p.add_argument("--icount-shift", type=int, default=DEFAULT_ICOUNT_SHIFT, metavar="N",
                   help="the clock: 2^N ns per instruction, privlab's --icount-shift "
                        "and QEMU's -icount shift=N (default privlab's pace)")
    p.add_argument("--smp", type=int, default=1, metavar="N",
                   help="harts on both machines (build xv6 with CPUS=N; default 1)")
    p.add_argument("--tests", metavar="NAME,...",
                   help="run `usertests NAME` for each instead of `usertests -q`")
    p.add_argument("--no-host-clock", action="store_true",
                   help="do not also time QEMU on the host's clock")
    p.add_argument("--no-icount", action="store_true",
                   help="do not time QEMU with -icount (with several harts QEMU's "
                        "deterministic clock runs them on one host thread and is slow)")
    args = p.parse_args()
    kernel, image = args.xv6 / "kernel" / "kernel", args.xv6 / "fs.img"
    for path in (kernel, image):
        if not path.is_file():
            print(f"xv6_usertests: {path}: no such file (build xv6 with "
                  "`make CPUS=1 kernel/kernel fs.img`)", file=sys.stderr)
            return 2
    runs = []
    if args.only != "qemu":
        runs.append((f"privlab, icount shift={args.icount_shift}",
                     _privlab_command(kernel, image, args.icount_shift, args.smp)))
    if args.only != "privlab":
        if shutil.which("qemu-system-riscv64") is None:
            print("xv6_usertests: qemu-system-riscv64 is not installed", file=sys.stderr)
            return 2
        if not args.no_icount:
            runs.append((f"QEMU 7.2, icount shift={args.icount_shift}",
                         _qemu_command(kernel, image, args.icount_shift, args.smp)))
        if not args.no_host_clock:
            runs.append(("QEMU 7.2, host clock", _qemu_command(kernel, image, None, args.smp)))
    commands = [f"usertests {t}\n".encode() for t in args.tests.split(",")] \
        if args.tests else [COMMAND]
    timings = [_time(name, cmd, args.timeout, commands) for name, cmd in runs]
    for t in timings:
        verdict = "ALL TESTS PASSED" if t.passed else "NOT PASSED"
        print(f"{t.name:>28}: {t.seconds:8.1f} s  {verdict}  (smp {args.smp})")
        if not t.passed:
            print("  last output:\n    " + t.tail.replace("\n", "\n    "))
    if args.only is None and len(timings) >= 2 and all(t.passed for t in timings):
        for other in timings[1:]:
            ratio = timings[0].seconds / other.seconds
            same = "same clock, same guest work" if "icount" in other.name else \
                "not the same guest work: see clock_pace.py"
            print(f"ratio privlab / {other.name}: {ratio:.2f}x ({same})")
        ratio = timings[0].seconds / timings[1].seconds
        if args.no_icount:
            # QEMU's defaults run each hart on a host thread: the goal allows twice
            # their wall time with several harts, and asks for no more with one.
            limit = 2.0 if args.smp > 1 else 1.0
            print(f"goal: privlab / QEMU's defaults at most {limit:.2f}x: "
                  f"{'meets' if ratio <= limit else 'MISSES'}")
            return 0 if ratio <= limit else 1
        print(f"goal: privlab / QEMU on the same clock at most 1.00x: "
              f"{'meets' if ratio <= 1.0 else 'MISSES'}")
        return 0 if ratio <= 1.0 else 1
    return 0 if all(t.passed for t in timings) else 1


if __name__ == "__main__":
    sys.exit(main())
