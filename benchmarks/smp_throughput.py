"""Several harts: the same ALU loop on 1, 2, 4 and 8 harts (each hart runs all of
it), as aggregate instructions per second, and the cost of the harts' turns against
one hart alone.

    python benchmarks/smp_throughput.py [ITERATIONS]   (10 instructions per iteration)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from privlab.build.baremetal import build_baremetal
from privlab.build.cache import cache_root
from privlab.build.toolchain import ARCHES
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_bare

PROGRAM = Path(__file__).resolve().parent / "programs" / "smp_loop.S"


def run(harts: int, iterations: int) -> tuple[float, int]:
    elf = build_baremetal([PROGRAM], ARCHES["rv64"],
                          cache_root() / "bench" / f"smp_loop-{harts}-{iterations}.elf",
                          defines={"HARTS": harts, "ITERATIONS": iterations},
                          listings=False)
    image = load_elf(elf)
    m = Machine(64, smp=harts)
    boot_bare(m, image)
    try:
        start = time.perf_counter()
        r = m.run()
        elapsed = time.perf_counter() - start
        assert r.stop is Stop.HALT and r.exit_status == 0, r.message
        return elapsed, sum(h.state.instret for h in m.harts)
    finally:
        m.close()


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5_000_000
    print(f"ALU loop, {10 * n:_} instructions per hart")
    base = None
    for harts in (1, 2, 4, 8):
        elapsed, insns = run(harts, n)
        rate = insns / elapsed / 1e6
        base = base or rate
        print(f"  {harts} hart{'s' if harts > 1 else ' '}: {elapsed:6.3f} s  "
              f"{rate:7.1f} M instructions/s  ({rate / base:4.2f}x one hart's rate)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
