"""CSR access from S-mode: sstatus read, sstatus write and (for reference) sscratch,
each a loop of ITERATIONS accesses, against QEMU 7.2 on the same program, with its
defaults and with -icount shift=0 (start-up subtracted on all). sstatus is the CSR
kernels touch most (xv6 turns interrupts off and on around every spinlock); the core
shows the guest QEMU 7.2's view of it, which harness/native/csrfast.c does inside
Unicorn's own CSR helper. Goal: at most 2x QEMU's defaults for each sstatus access (the
code-hook path it replaced was 8x and more).

    python benchmarks/csr_access.py [ITERATIONS]     (default 5,000,000)
"""

from __future__ import annotations

import sys

from common import measure, ratio_lines, report

GOAL = 2.0
ACCESSES = {0: "csrr t1, sstatus", 1: "csrci sstatus, SIE", 2: "csrr t1, sscratch"}
HELD = (0, 1)                 # sscratch is Unicorn's own CSR: shown, not held to the goal


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5_000_000
    missed = 0
    for op, text in ACCESSES.items():
        t = measure("csr_loop", n, CSR_OP=op)
        missed |= report(f"{text} from S, {n} times (3 instructions per iteration)",
                         t.ours, t.qemu, GOAL if op in HELD else float("inf"),
                         "ns/iteration", n, scale=1e9) if op in HELD else 0
        if op not in HELD:
            print(f"{text} from S: privlab {t.ours / n * 1e9:.0f} ns/iteration "
                  "(for reference)")
            print("\n".join(ratio_lines(t.ours, t.qemu)))
    return missed


if __name__ == "__main__":
    sys.exit(main())
