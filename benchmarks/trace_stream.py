"""`privlab trace --user usertests` streams: how soon its first
row arrives, how long the whole run takes and how much memory it holds, against
`privlab run --user usertests --trace-out FILE` (every event written as the core
recorded it, not analysed; FILE.jsonl, every event as JSON, for reference) and
QEMU 7.2 running the same firmware, kernel and usertests untraced, with its defaults
and with -icount shift=0, in the same run.
Goals: first row within 1 s, peak RSS at most 200 MB, at most 2x `run --trace-out`.

    python benchmarks/trace_stream.py [--program PROG] [--format text|calls|jsonl]

(`--format jsonl` is the rows as JSON Lines, formatted in bulk: harness/trace/jsonl.py's
RowsJsonl. benchmarks/trace_file.py times the same on a million traps, in us a trap.)

Each command runs once as a whole process, its output read from a pipe as fast as it
comes (the trace) or sent to /dev/null; the peak RSS is the child's (wait4). The
trace gets a budget large enough for the whole run, as `run` has none.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from common import privlab_cli
from startup import qemu_command

FIRST_ROW = 1.0        # seconds
MEMORY = 200           # MB
RATIO = 2.0            # trace / run --trace-out
WHOLE = ["--max-insns", "100000000000"]   # trace's default budget would end it early


@dataclass
class Measured:
    seconds: float
    first_row: float | None    # seconds to the first row (the trace only)
    peak_mb: float
    lines: int
    status: int


def measure(cmd: list[str], rows: bool) -> Measured:
    """Run cmd to its end; with `rows`, read its stdout and note when its second line
    (the first row after the header) arrived."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdout=subprocess.PIPE if rows else subprocess.DEVNULL)
    first, lines = None, 0
    if rows:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while chunk := os.read(fd, 1 << 16):
            lines += chunk.count(b"\n")
            if first is None and lines >= 2:
                first = time.perf_counter() - start
    _, status, usage = os.wait4(proc.pid, 0)
    took = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Measured(took, first, usage.ru_maxrss / 1024, lines, proc.returncode)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--program", default="usertests", help="the bundled program traced")
    p.add_argument("--format", default="text", choices=("text", "calls", "jsonl"))
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    privlab = privlab_cli()
    with tempfile.TemporaryDirectory(prefix="privlab-trace-stream-") as tmp:
        out = Path(tmp) / "t.trace"
        out_jsonl = Path(tmp) / "t.jsonl"
        subprocess.run([*privlab, "run", "--quiet", "--user", "hello"], check=True,
                       capture_output=True)      # the build and caches, untimed
        trace = measure([*privlab, "trace", "--format", args.format, *WHOLE, "--user",
                         args.program], rows=True)
        run = measure([*privlab, "run", "--quiet", "--trace-out", str(out), "--user",
                       args.program], rows=False)
        jsonl = measure([*privlab, "run", "--quiet", "--trace-out", str(out_jsonl),
                         "--user", args.program], rows=False)
        events = sum(1 for _ in out_jsonl.open())
        qemu_cmd = qemu_command(args.program, Path(tmp) / "initrd.cpio")
        qemu = measure(qemu_cmd, rows=False) if qemu_cmd is not None else None
        icount_cmd = qemu_command(args.program, Path(tmp) / "initrd-icount.cpio", icount=True)
        icount = measure(icount_cmd, rows=False) if icount_cmd is not None else None
    ratio = trace.seconds / run.seconds
    first = trace.first_row if trace.first_row is not None else float("inf")
    print(f"privlab trace --format {args.format} --user {args.program}: "
          f"{trace.lines} lines ({events} events), exit {trace.status}")
    print(f"  first row   {first:7.2f} s   (goal <= {FIRST_ROW} s)")
    print(f"  whole run   {trace.seconds:7.2f} s   ({trace.seconds / max(events, 1) * 1e6:.2f} us "
          f"an event, start-up included)")
    print(f"  peak RSS    {trace.peak_mb:7.0f} MB  (goal <= {MEMORY} MB)")
    print(f"privlab run --trace-out FILE: {run.seconds:7.2f} s, peak RSS {run.peak_mb:.0f} MB")
    print(f"privlab run --trace-out FILE.jsonl: {jsonl.seconds:7.2f} s "
          f"(trace / that = {trace.seconds / jsonl.seconds:.2f}x)")
    print(f"  ratio trace / run --trace-out = {ratio:.2f}x  (goal <= {RATIO}x)")
    if qemu is None or icount is None:
        print("QEMU 7.2 not installed: no reference, no ratio")
    else:
        for name, q in (("defaults", qemu), ("-icount shift=0", icount)):
            print(f"QEMU 7.2 {name}, untraced: {q.seconds:7.2f} s, peak RSS {q.peak_mb:.0f} MB")
            print(f"  ratio trace / QEMU = {trace.seconds / q.seconds:.2f}x, "
                  f"run --trace-out / QEMU = {run.seconds / q.seconds:.2f}x, "
                  f"run --trace-out FILE.jsonl / QEMU = {jsonl.seconds / q.seconds:.2f}x")
    met = first <= FIRST_ROW and trace.peak_mb <= MEMORY and ratio <= RATIO
    print("goals: " + ("met" if met else "MISSED"))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
