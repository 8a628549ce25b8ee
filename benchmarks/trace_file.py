"""A trace on disk: `privlab run --bios none --kernel ELF --trace-out FILE` on the
1,000,000-ecall program (U -> S and sret back), every trap and xRET written to the
trace file, as the core's records (FILE) and as JSON Lines (FILE.jsonl, formatted in C
by harness/trace/jsonl.c), and `privlab trace --format jsonl -o FILE` (the rows of the
trap flow: each event with who and where, and a line per system call, which jsonl.c
writes whole on one hart wherever the rows would say the same), against QEMU 7.2
running the same ELF untraced, with its defaults and with -icount shift=0. Goal: each
format at most 5x QEMU's defaults. Both sides are whole commands as a user types them,
each with the same program at zero iterations subtracted (start-up). The CPU time of
each (user + system, threads included) is printed too: on a machine other jobs share,
wall times stretch. Each run's output is removed before the next (see drop()).

    python benchmarks/trace_file.py [ITERATIONS]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from common import (
    QEMU_DEFAULT,
    QEMU_ICOUNT,
    best_of,
    build,
    cpu_command,
    privlab_cli,
    qemu_bare_command,
    qemu_reference,
    report,
    time_command,
)

from privlab.machine.tracefile import read_trace

GOAL = 5.0


def privlab_command(elf: Path, out: Path) -> list[str]:
    return [*privlab_cli(), "run", "--quiet", "--bios", "none", "--kernel",
            str(elf), "--trace-out", str(out)]


def trace_command(elf: Path, out: Path) -> list[str]:
    """`privlab trace --format jsonl`, its budget large enough for the whole run."""
    return [*privlab_cli(), "trace", "--format", "jsonl", "-o", str(out),
            "--max-insns", "100000000000", "--bios", "none", "--kernel", str(elf)]


def privlab_run(elf: Path, out: Path,
                command: Callable[[Path, Path], list[str]] = privlab_command) -> float:
    """Wall time of the command (its output is kept: `timed` removes it)."""
    took, proc = time_command(command(elf, out))
    if proc.returncode != 0:
        sys.exit(f"privlab run failed ({proc.returncode}): {proc.stderr.decode()}")
    return took


def timed(elf: Path, out: Path,
          command: Callable[[Path, Path], list[str]] = privlab_command) -> float:
    """privlab_run, then drop(out)."""
    took = privlab_run(elf, out, command)
    drop(out)
    return took


def drop(out: Path) -> None:
    """Remove a run's output before the next. A run writes up to 800 MB: the page cache
    takes one run's at memory speed, but run after run they pile up faster than a
    disk writes them back (190 MB/s on the machine docs/benchmarks.md reports), and
    the kernel then holds each writer back. What was measured would be the disk. A
    file removed before its pages were written back costs the disk nothing."""
    out.unlink(missing_ok=True)


def cpu_per_trap(work: Path, empty: Path, n: int, tmp: Path) -> None:
    """CPU time a round trip, start-up subtracted (best of 3 each): the figure to
    compare when other jobs share the machine and stretch the wall times."""
    def best(cmd: Callable[[Path], list[str]], out: Path | None = None) -> float:
        def cpu(elf: Path) -> float:
            took = cpu_command(cmd(elf))
            if out is not None:
                drop(out)
            return took
        return (min(cpu(work) for _ in range(3)) - min(cpu(empty) for _ in range(3))) / n * 1e6

    def ours(command: Callable[[Path, Path], list[str]], out: Path) -> float:
        return best(lambda e: command(e, out), out)
    rows = [("privlab --trace-out t.trace", ours(privlab_command, tmp / "c.trace")),
            ("privlab --trace-out t.jsonl", ours(privlab_command, tmp / "c.jsonl")),
            ("privlab trace --format jsonl", ours(trace_command, tmp / "r.jsonl"))]
    if shutil.which("qemu-system-riscv64") is not None:
        rows += [(QEMU_DEFAULT, best(lambda e: qemu_bare_command(e, False))),
                 (QEMU_ICOUNT, best(lambda e: qemu_bare_command(e, True)))]
    print("CPU time per round trip (user + system, start-up subtracted)")
    for name, us in rows:
        ratios = "" if len(rows) < 5 or name.startswith("QEMU") else \
            f"  privlab/QEMU = {us / rows[3][1]:.2f}x defaults, {us / rows[4][1]:.2f}x -icount"
        print(f"  {name:<28} {us:6.3f} us{ratios}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("iterations", nargs="?", type=int, default=1_000_000)
    args = p.parse_args()
    n = args.iterations
    work, empty = build("ecall_loop", n), build("ecall_loop", 0)
    with tempfile.TemporaryDirectory(prefix="privlab-trace-file-") as tmp:
        out = Path(tmp) / "t.trace"
        ours = best_of(3, lambda: timed(work, out)) - best_of(3, lambda: timed(empty, out))
        privlab_run(work, out)
        size = out.stat().st_size
        events = len(read_trace(out).events)
        assert events == 2 * n + 3, f"{events} events in the file: every trap and sret must be"
        print(f"{events} events in {size / 1e6:.0f} MB ({size / events:.0f} bytes each)")
        jsonl = Path(tmp) / "t.jsonl"
        drop(out)
        ours_jsonl = best_of(3, lambda: timed(work, jsonl)) - \
            best_of(3, lambda: timed(empty, jsonl))
        privlab_run(work, jsonl)
        lines = sum(1 for _ in jsonl.open("rb"))
        assert lines == events, f"{lines} lines in the JSON Lines file, {events} events"
        print(f"{lines} JSON lines in {jsonl.stat().st_size / 1e6:.0f} MB")
        rows = Path(tmp) / "rows.jsonl"
        drop(jsonl)
        ours_rows = best_of(3, lambda: timed(work, rows, trace_command)) - \
            best_of(3, lambda: timed(empty, rows, trace_command))
        privlab_run(work, rows, trace_command)
        shown = sum(1 for _ in rows.open("rb"))
        # every event, and a line for each of the n system calls its ecalls make
        assert shown == events + n, f"{shown} lines from privlab trace, {events} events"
        print(f"{shown} JSON lines from privlab trace in {rows.stat().st_size / 1e6:.0f} MB")
        drop(rows)
        cpu_per_trap(work, empty, n, Path(tmp))
    theirs = qemu_reference(work, empty)
    missed = report(f"trap round trip to a trace file, {n} U->S ecalls with sret", ours,
                    theirs, GOAL, "us/trap", n)
    missed |= report(f"trap round trip to a JSON Lines file (--trace-out t.jsonl), {n} U->S "
                     "ecalls with sret", ours_jsonl, theirs, GOAL, "us/trap", n)
    missed |= report(f"trap round trip shown as JSON Lines rows (privlab trace --format jsonl), "
                     f"{n} U->S ecalls with sret", ours_rows, theirs, GOAL, "us/trap", n)
    return missed


if __name__ == "__main__":
    sys.exit(main())
