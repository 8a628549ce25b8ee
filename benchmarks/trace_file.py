"""A trace on disk: `privlab run --bios none --kernel ELF --trace-out FILE` on the
1,000,000-ecall program (U -> S and sret back), every trap and xRET written to the
trace file, against QEMU 7.2 running the same ELF untraced. Goal: at most
5x. Both sides are whole commands as a user types them, each with the same program at
zero iterations subtracted (start-up).

    python benchmarks/trace_file.py [ITERATIONS] [--jsonl]

--jsonl also times the JSON Lines export (FILE.jsonl) for comparison (slow: ~50 us per
event; shown, not held to the goal).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from common import best_of, build, report, time_command, time_qemu

from privlab.machine.tracefile import read_trace

GOAL = 5.0


def privlab_run(elf: Path, out: Path) -> float:
    took, proc = time_command([sys.executable, "-m", "privlab", "run", "--quiet", "--bios",
                               "none", "--kernel", str(elf), "--trace-out", str(out)])
    if proc.returncode != 0:
        sys.exit(f"privlab run failed ({proc.returncode}): {proc.stderr.decode()}")
    return took


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("iterations", nargs="?", type=int, default=1_000_000)
    p.add_argument("--jsonl", action="store_true", help="also time the JSON Lines export")
    args = p.parse_args()
    n = args.iterations
    work, empty = build("ecall_loop", n), build("ecall_loop", 0)
    with tempfile.TemporaryDirectory(prefix="privlab-trace-file-") as tmp:
        out = Path(tmp) / "t.trace"
        ours = best_of(3, lambda: privlab_run(work, out)) - \
            best_of(3, lambda: privlab_run(empty, out))
        privlab_run(work, out)
        size = out.stat().st_size
        events = len(read_trace(out).events)
        assert events == 2 * n + 3, f"{events} events in the file: every trap and sret must be"
        print(f"{events} events in {size / 1e6:.0f} MB ({size / events:.0f} bytes each)")
        if args.jsonl:
            jsonl = Path(tmp) / "t.jsonl"
            took = privlab_run(work, jsonl) - privlab_run(empty, jsonl)
            print(f"  (JSON Lines export: {took:.2f} s, {took / n * 1e6:.2f} us/trap, "
                  f"{jsonl.stat().st_size / 1e6:.0f} MB)")
    q_work = best_of(3, lambda: time_qemu(work) or 0.0)
    q_empty = best_of(3, lambda: time_qemu(empty) or 0.0)
    theirs = (q_work - q_empty) if q_work else None
    return report(f"trap round trip to a trace file, {n} U->S ecalls with sret", ours, theirs,
                  GOAL, "us/trap", n)


if __name__ == "__main__":
    sys.exit(main())
