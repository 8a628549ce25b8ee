"""Trap round trip: 1,000,000 ecalls from U delegated to an S handler that srets back,
with privlab's event trace on (every trap and sret recorded). Goal: at most 5x QEMU 7.2.

    python benchmarks/trap_roundtrip.py [ITERATIONS]
"""

from __future__ import annotations

import sys

from common import best_of, build, report, time_privlab, time_qemu

GOAL = 5.0


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    work, empty = build("ecall_loop", n), build("ecall_loop", 0)
    ours = best_of(3, lambda: time_privlab(work)[0]) - best_of(3, lambda: time_privlab(empty)[0])
    _, m = time_privlab(work)
    traps = sum(1 for e in m.events.tail(4) if e.kind == "trap")
    assert len(m.events) == 2 * n + 3 and traps, "every trap and sret must be recorded"
    q_work = best_of(3, lambda: time_qemu(work) or 0.0)
    q_empty = best_of(3, lambda: time_qemu(empty) or 0.0)
    theirs = (q_work - q_empty) if q_work else None
    print(f"{len(m.events)} events recorded for {n} round trips")
    return report(f"trap round trip, {n} U->S ecalls with sret, trace on", ours, theirs,
                  GOAL, "us/trap", n)


if __name__ == "__main__":
    sys.exit(main())
