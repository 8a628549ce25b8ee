"""Compute: a U-mode loop of 200 million ALU instructions, against QEMU 7.2 in its
deterministic mode (-icount shift=0, one instruction per nanosecond, like privlab's
clock). Goal: at most 1.5x.

    python benchmarks/compute.py [ITERATIONS]   (10 instructions per iteration)
"""

from __future__ import annotations

import sys

from common import best_of, build, report, time_privlab, time_qemu

GOAL = 1.5


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000_000
    work, empty = build("alu_loop", n), build("alu_loop", 0)
    ours = best_of(3, lambda: time_privlab(work)[0]) - best_of(3, lambda: time_privlab(empty)[0])
    _, m = time_privlab(work)
    insns = m.hart.state.instret
    q_work = best_of(3, lambda: time_qemu(work, icount=True) or 0.0)
    q_empty = best_of(3, lambda: time_qemu(empty, icount=True) or 0.0)
    theirs = (q_work - q_empty) if q_work else None
    print(f"{insns} instructions retired")
    return report(f"compute, {10 * n} U-mode ALU instructions", ours, theirs, GOAL,
                  "ns/insn", insns, scale=1e9)


if __name__ == "__main__":
    sys.exit(main())
