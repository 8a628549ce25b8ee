"""Trap round trip: 1,000,000 ecalls from U delegated to an S handler that srets back,
with privlab's event trace on (every trap and sret recorded), against QEMU 7.2 with its
defaults and with -icount shift=0. Goal: at most 5x QEMU's defaults.

    python benchmarks/trap_roundtrip.py [ITERATIONS]
"""

from __future__ import annotations

import sys

from common import measure, report

GOAL = 5.0


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    t = measure("ecall_loop", n)
    events = len(t.machine.events)
    assert events == 2 * n + 3, "every trap and sret must be recorded"
    print(f"{events} events recorded for {n} round trips")
    return report(f"trap round trip, {n} U->S ecalls with sret, trace on", t.ours, t.qemu,
                  GOAL, "us/trap", n)


if __name__ == "__main__":
    sys.exit(main())
