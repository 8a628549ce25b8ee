"""Stores: a U-mode loop storing one byte per 3 instructions (xv6's memset), against
QEMU 7.2 with its defaults and in its deterministic mode (-icount shift=0). Goal: at
most 1.5x QEMU -icount shift=0, as compute's.

    python benchmarks/store_loop.py [ITERATIONS]   (3 instructions per iteration)
"""

from __future__ import annotations

import sys

from common import QEMU_ICOUNT, measure, report

GOAL = 1.5


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_480_000
    n -= n % 4096
    t = measure("store_loop", n)
    insns = t.machine.hart.state.instret
    print(f"{insns} instructions retired")
    return report(f"stores, {n} U-mode byte stores", t.ours, t.qemu, GOAL,
                  "ns/insn", insns, scale=1e9, against=QEMU_ICOUNT)


if __name__ == "__main__":
    sys.exit(main())
