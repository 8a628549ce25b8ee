"""Compute: a U-mode loop of 200 million ALU instructions, against QEMU 7.2 with its
defaults and in its deterministic mode (-icount shift=0, one instruction per
nanosecond). Goal: at most 1.5x QEMU -icount shift=0.

    python benchmarks/compute.py [ITERATIONS]   (10 instructions per iteration)
"""

from __future__ import annotations

import sys

from common import QEMU_ICOUNT, measure, report

GOAL = 1.5


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000_000
    t = measure("alu_loop", n)
    insns = t.machine.hart.state.instret
    print(f"{insns} instructions retired")
    return report(f"compute, {10 * n} U-mode ALU instructions", t.ours, t.qemu, GOAL,
                  "ns/insn", insns, scale=1e9, against=QEMU_ICOUNT)


if __name__ == "__main__":
    sys.exit(main())
