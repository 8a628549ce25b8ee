"""Reverse execution: the cost of recording and of one step back.

A U-mode loop of 10^8 ALU instructions (the compute benchmark's alu_loop) is run with
snapshots every DEFAULT_EVERY instructions (harness/api/timetravel.py). QEMU has no
reverse execution to compare with, so the ratio printed is the recorded forward run's
speed against QEMU 7.2's, with its defaults and with -icount shift=0 (the goal's),
as the other benchmarks do; then the time
of one step back at a few depths into the run, and what the snapshots cost in memory.
Goal: one step back well under a second (<= 0.5 s) anywhere in the run.

Then the same on two harts (`--smp 2`: both run the loop, in seeded turns):
the recorded run's cost against the unrecorded one (QEMU has no deterministic SMP to
compare with, so no ratio to it) and one step back at a few depths.

    python benchmarks/reverse.py [ITERATIONS]   (10 instructions per iteration)
"""

from __future__ import annotations

import sys
import time

from common import QEMU_ICOUNT, best_of, build, qemu_reference, report, time_privlab

from privlab.api.timetravel import DEFAULT_EVERY, History
from privlab.machine import Machine, Stop, load_elf

GOAL_STEP_BACK = 0.5     # seconds
GOAL_RATIO = 3.0         # the recorded run against QEMU


def recorded_run(elf_path: str, smp: int = 1) -> tuple[float, History, Machine]:
    image = load_elf(elf_path)
    m = Machine(image.xlen, smp=smp)
    m.load(image)
    h = History(m, DEFAULT_EVERY)
    start = time.perf_counter()
    result = m.run()
    took = time.perf_counter() - start
    if result.stop is not Stop.HALT or result.exit_status != 0:
        sys.exit(f"privlab run failed: {result.stop} {result.message}")
    return took, h, m


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    work, empty = build("alu_loop", n), build("alu_loop", 0)
    plain = best_of(2, lambda: time_privlab(work)[0]) - time_privlab(empty)[0]
    recorded, h, m = recorded_run(str(work))
    recorded -= time_privlab(empty)[0]
    insns = int(m.hart.state.instret)
    theirs = qemu_reference(work, empty, repeat=1)
    print(f"{insns} instructions retired; {len(h.snaps)} snapshots, every {DEFAULT_EVERY}")
    print(f"  privlab without recording: {plain:.3f} s  ({plain / insns * 1e9:.3f} ns/insn)")
    status = report(f"reverse: the recorded forward run, {insns} instructions", recorded,
                    theirs, GOAL_RATIO, "ns/insn", insns, scale=1e9, against=QEMU_ICOUNT)
    print(f"  snapshot memory: {h.nbytes / (1 << 20):.1f} MiB "
          f"(page store {h.store.nbytes / (1 << 20):.1f} MiB, {len(h.store.pages)} pages)")
    worst = 0.0
    for depth in (10_000, 1_000_000, insns // 2 + 12_345, insns - 10):
        h.back_to_instret(depth)
        r = h.step_back()
        worst = max(worst, r.seconds)
        assert r.position.instret == depth - 1, r
        print(f"  one step back at instruction {depth:>11,}: {r.seconds * 1e3:7.1f} ms")
    verdict = "meets" if worst <= GOAL_STEP_BACK else "MISSES"
    print(f"  worst step back {worst * 1e3:.1f} ms (goal <= {GOAL_STEP_BACK * 1e3:.0f} ms: "
          f"{verdict})")
    worst2 = smp_two(str(work))
    return status or int(max(worst, worst2) > GOAL_STEP_BACK)


def unrecorded_run(elf_path: str, smp: int) -> float:
    image = load_elf(elf_path)
    m = Machine(image.xlen, smp=smp)
    m.load(image)
    start = time.perf_counter()
    m.run()
    took = time.perf_counter() - start
    m.close()
    return took


def smp_two(elf_path: str) -> float:
    """Recording and stepping back on two harts; returns the worst step back."""
    plain = min(unrecorded_run(elf_path, 2) for _ in range(2))
    recorded, h, m = recorded_run(elf_path, smp=2)
    insns = m.total_instret()
    print(f"--smp 2: {insns} instructions (both harts), {len(h.snaps)} snapshots")
    print(f"  unrecorded {plain:.3f} s, recorded {recorded:.3f} s "
          f"(x{recorded / plain:.2f} the unrecorded run)")
    worst = 0.0
    for depth in (10_000, insns // 2 + 12_345, insns - 10):
        h.back_to_instret(depth)
        r = h.step_back()
        worst = max(worst, r.seconds)
        assert r.position.instret == depth - 1, r
        print(f"  one step back at instruction {depth:>11,} (hart "
              f"{m.hart.state.hart_id}): {r.seconds * 1e3:7.1f} ms")
    verdict = "meets" if worst <= GOAL_STEP_BACK else "MISSES"
    print(f"  worst step back on 2 harts {worst * 1e3:.1f} ms (goal <= "
          f"{GOAL_STEP_BACK * 1e3:.0f} ms: {verdict})")
    h.close()
    m.close()
    return worst


if __name__ == "__main__":
    sys.exit(main())
