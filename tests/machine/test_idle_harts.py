"""Idle harts (harness/machine/idle.py, schedule.py): a hart proven to spin in a loop
that changes nothing is parked and yields its turns until a page its loop reads
changes or an interrupt is pending and enabled; parking is a function of guest state."""

from __future__ import annotations

from machine.asm import build_asm
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_bare
from privlab.machine.schedule import QUANTUM_MAX

# Hart 1 waits for `go` taking and releasing a lock around each look (stores that
# leave memory as it was, as xv6's scheduler does); hart 0 counts to LIMIT, then sets
# `go`; hart 1 then adds one to `done`.
WAITER = """
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
2:  la s1, lock
    li s2, 1
4:  amoswap.w.aq t3, s2, (s1)
    bnez t3, 4b
    lw t4, go
    amoswap.w.rl zero, zero, (s1)
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


def run(extra: str = "", limit: int = 3_000_000) -> tuple[Machine, list[int]]:
    image = load_elf(build_asm(WAITER.format(limit=limit, extra=extra), "rv64"))
    m = Machine(64, smp=2)
    boot_bare(m, image)
    parked = []
    while True:
        r = m.run(max_insns=200_000)
        parked.append(m.turns.idle[1] is not None)
        if r.stop is not Stop.BUDGET:
            break
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), r.message
    return m, parked


def test_a_hart_spinning_on_a_lock_and_a_flag_is_parked_then_woken_by_the_store() -> None:
    m, parked = run()
    try:
        assert any(parked)                              # parked while hart 0 counted
        assert m.harts[1].state.instret < 4 * QUANTUM_MAX   # its watched and proving turns
        assert m.turns.idle[1] is None                  # woken by `go`, then it finished
    finally:
        m.close()


def test_parking_is_the_same_on_every_run() -> None:
    a, pa = run()
    b, pb = run()
    try:
        assert pa == pb
        assert [h.state.instret for h in a.harts] == [h.state.instret for h in b.harts]
    finally:
        a.close()
        b.close()


def test_a_loop_that_reads_the_time_is_never_parked() -> None:
    m, parked = run(extra="rdtime t5\n    li t5, 0")
    try:
        assert not any(parked)
        assert m.harts[1].state.instret > 1_000_000      # it spun all along
    finally:
        m.close()
