"""Idle harts cost nothing (schedule.py's HartTurns, idle.py): a hart waiting in wfi
or proven to spin in a loop that changes nothing lets its turns go by, and is woken by
another hart's msip store, its timer, or a store to what its loop reads; when every
hart waits, time skips to the first timer due. All of it is a function of the image
and the seed: two runs give the same trace, instret and clock."""

from __future__ import annotations

import json

from machine.asm import build_asm
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_bare
from privlab.machine.events import event_json
from privlab.machine.schedule import QUANTUM_MAX

# Hart 1 waits in wfi for its msip (MSIE only, MIE off: wfi wakes on a locally enabled
# interrupt whatever the global enable, as the privileged spec says); hart 0 counts to
# LIMIT, then raises hart 1's msip. Hart 1 records mtime and its instret on waking.
MSIP_WAKE = """
    csrr s0, mhartid
    bnez s0, 2f
    li t0, {limit}
1:  addi t0, t0, -1
    bnez t0, 1b
    li t1, PLATFORM_CLINT_BASE + CLINT_MSIP + 4
    li t2, 1
    sw t2, 0(t1)
3:  ld t1, woke
    beqz t1, 3b
    PASS
2:  li t1, 1 << 3
    csrw mie, t1
4:  wfi
    csrr t1, mip
    andi t1, t1, 1 << 3
    beqz t1, 4b
    li t0, PLATFORM_CLINT_BASE + CLINT_MTIME
    ld t1, 0(t0)
    sd t1, woke_time, t2
    csrr t1, minstret
    sd t1, woke_instret, t2
    li t1, 1
    sd t1, woke, t2
5:  csrw mie, zero
    wfi
    j 5b
    .data
    .align 3
woke: .dword 0
woke_time: .dword 0
woke_instret: .dword 0
"""

# Every hart sleeps in wfi until hart 0's timer (mtimecmp = DUE ticks): all wait, so
# the clock skips to DUE; hart 0 then reads mtime and powers off.
ALL_ASLEEP = """
    csrr s0, mhartid
    bnez s0, 2f
    li t0, PLATFORM_CLINT_BASE + CLINT_MTIMECMP
    li t1, {due}
    sd t1, 0(t0)
    li t1, 1 << 7
    csrw mie, t1
1:  wfi
    csrr t1, mip
    andi t1, t1, 1 << 7
    beqz t1, 1b
    li t0, PLATFORM_CLINT_BASE + CLINT_MTIME
    ld t1, 0(t0)
    sd t1, woke_time, t2
    PASS
2:  li t1, 1 << 3
    csrw mie, t1
3:  wfi
    j 3b
    .data
    .align 3
woke_time: .dword 0
"""

# Hart 1 spins on `go` (a loop of loads and a branch: it changes nothing); hart 0 counts
# to LIMIT, then sets `go`; hart 1 then sets `done`. {extra} goes into hart 1's loop.
SPINNER = """
    csrr s0, mhartid
    bnez s0, 2f
    li t0, {limit}
1:  addi t0, t0, -1
    bnez t0, 1b
    li t1, 1
    sw t1, go, t2
3:  lw t1, done
    beqz t1, 3b
    PASS
2:  {setup}
4:  lw t4, go
    {extra}
    beqz t4, 4b
    li t1, 1
    sw t1, done, t2
5:  j 5b
    .data
    .align 6
lock: .word 0
go: .word 0
done: .word 0
"""

# In the loop, a lock taken and released around the look at `go` (stores that leave
# memory as it was, as xv6's scheduler does).
LOCKED_LOOK = """
    la s1, lock
    li s2, 1
6:  amoswap.w.aq t3, s2, (s1)
    bnez t3, 6b
    amoswap.w.rl zero, zero, (s1)"""


def machine(source: str, harts: int = 2, seed: int = 0) -> Machine:
    m = Machine(64, smp=harts, smp_seed=seed, icount_shift=0)
    boot_bare(m, load_elf(build_asm(source, "rv64")))
    return m


def dword(m: Machine, symbol: str) -> int:
    return int.from_bytes(m.read_physical(m.symbols[symbol], 8), "little")


def finish(m: Machine) -> None:
    r = m.run(max_insns=100_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), r.message


def outcome(m: Machine) -> tuple[object, ...]:
    return (json.dumps([event_json(e) for e in m.events]),
            [int(h.state.instret) for h in m.harts], m.turns.clock_ns,
            m.turns.turns_run, m.turns.turns_yielded)


def test_a_hart_in_wfi_takes_no_turn_until_another_harts_msip_store_wakes_it() -> None:
    limit = 300_000
    runs = []
    for _ in range(2):
        m = machine(MSIP_WAKE.format(limit=limit))
        try:
            finish(m)
            # Hart 1 ran its first turn into wfi, then let every turn go by until the
            # store: it retired only its set-up and, woken, its report.
            assert m.turns.turns_yielded[1] > 10
            assert m.turns.turns_run[1] <= 3
            woke_instret = dword(m, "woke_instret")
            assert woke_instret < 20
            # Time is the instructions all harts ran: hart 0's count loop (2 per round)
            # and the rest of its turn (it runs on until the turn ends, then hart 1 is
            # drawn), in ticks of 100 ns at shift 0.
            hart0_then = 2 * limit
            woke_time = dword(m, "woke_time")
            assert hart0_then // 100 <= woke_time <= (hart0_then + QUANTUM_MAX) // 100 + 1
            runs.append((*outcome(m), woke_time, woke_instret))
        finally:
            m.close()
    assert runs[0] == runs[1]


def test_when_every_hart_waits_the_clock_skips_to_the_timer() -> None:
    due = 5_000_000                       # ticks: 0.5 s, 500 million instructions' worth
    runs = []
    for _ in range(2):
        m = machine(ALL_ASLEEP.format(due=due), harts=3)
        try:
            finish(m)
            assert dword(m, "woke_time") == due
            assert sum(int(h.state.instret) for h in m.harts) < 200
            assert m.turns.turns_run == [2, 1, 1]   # hart 0 again once its timer is due
            runs.append(outcome(m))
        finally:
            m.close()
    assert runs[0] == runs[1]


def test_a_hart_spinning_on_a_flag_is_parked_and_woken_by_the_store() -> None:
    limit = 3_000_000
    runs = []
    for _ in range(2):
        m = machine(SPINNER.format(limit=limit, setup="", extra=""))
        try:
            finish(m)
            assert m.turns.turns_yielded[1] > 50
            assert int(m.harts[1].state.instret) < 100_000 < 2 * limit
            runs.append(outcome(m))
        finally:
            m.close()
    assert runs[0] == runs[1]


def test_a_spinning_hart_takes_its_turns_without_parking() -> None:
    """The same program with the idle-loop proof turned off: hart 1 spins through its
    turns (what the test above saves)."""
    from privlab.machine import schedule

    m = machine(SPINNER.format(limit=3_000_000, setup="", extra=""))
    original = schedule.may_probe
    schedule.may_probe = lambda hart: False
    try:
        finish(m)
        assert m.turns.turns_yielded[1] == 0
        assert int(m.harts[1].state.instret) > 1_000_000
    finally:
        schedule.may_probe = original
        m.close()


def test_a_loop_that_reads_the_time_is_never_parked() -> None:
    m = machine(SPINNER.format(limit=1_000_000, setup="", extra="rdtime t5"))
    try:
        finish(m)
        assert m.turns.turns_yielded[1] == 0
        assert int(m.harts[1].state.instret) > 300_000
    finally:
        m.close()


def test_a_loop_that_stores_with_interrupts_off_is_never_parked() -> None:
    """Parked between its lock's take and release, it would hold the lock for good;
    with interrupts off the proof cannot tell, so such a loop spins on."""
    m = machine(SPINNER.format(limit=1_000_000, setup="", extra=LOCKED_LOOK))
    try:
        finish(m)
        assert m.turns.turns_yielded[1] == 0
    finally:
        m.close()


def test_a_loop_that_stores_with_interrupts_on_is_parked() -> None:
    """The same loop with MIE on (nothing enabled in mie, so nothing comes): kernels
    hold no spinlock there, and it is parked."""
    setup = "li t1, 1 << 3\n    csrs mstatus, t1"
    runs = []
    for _ in range(2):
        m = machine(SPINNER.format(limit=3_000_000, setup=setup, extra=LOCKED_LOOK))
        try:
            finish(m)
            assert m.turns.turns_yielded[1] > 50
            assert int(m.harts[1].state.instret) < 200_000
            runs.append(outcome(m))
        finally:
            m.close()
    assert runs[0] == runs[1]


def test_stopping_and_stepping_park_the_hart_as_one_run_does() -> None:
    """Runs cut into short stretches and a stretch of single steps give the same
    machine as one run: a proof stops and resumes with its turn."""
    source = SPINNER.format(limit=300_000, setup="", extra="")
    whole = machine(source)
    cut = machine(source)
    try:
        finish(whole)
        for _ in range(40):
            r = cut.run(max_insns=7_919)
            assert r.stop is Stop.BUDGET, r.message
        for _ in range(3_000):
            assert cut.step_machine().stop is Stop.STEP
        finish(cut)
        assert outcome(cut) == outcome(whole)
    finally:
        whole.close()
        cut.close()
