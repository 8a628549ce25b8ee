"""Snapshots and going back in time on several harts: a snapshot holds every
hart, the schedule's state and the turn under way, so a run from a restored snapshot
interleaves the harts exactly as the first run did (same events, same RAM, same
counts); a step is one instruction of the machine in the schedule's order, and a step
back returns to the moment before it, on the hart that ran it.

The programs are tests/conformance/smp/race.S (two harts incrementing one counter,
plain or with LR/SC) and ipi.S (an IPI through msip: traps in the event log)."""

from __future__ import annotations

import json

import pytest

from machine.test_smp import ITER, LRSC, PLAIN, machine, program, word
from privlab.api.timetravel import History, Position
from privlab.machine import Machine, Stop
from privlab.machine.events import event_json
from privlab.machine.snapshot import PageStore, restore_machine, take_snapshot
from privlab.machine.until import AtInstret

RUN = 20_000_000
RAM_CHECKED = 1 << 20          # the programs live in the first MiB


def events(m: Machine) -> list[str]:
    return [json.dumps(event_json(e, m.smp)) for e in m.events]


def outcome(m: Machine) -> tuple[list[str], list[int], bytes, bytes]:
    """Everything a run leaves: events, each hart's instret, RAM, the console."""
    return (events(m), [int(h.state.instret) for h in m.harts],
            m.read_physical(m.memory.ram_base, RAM_CHECKED), bytes(m.console.data))


def reference(variant: int, seed: int) -> tuple[list[str], list[int], bytes, bytes]:
    m = machine(program("race", "rv64", variant), 2, seed)
    assert m.run(max_insns=RUN).stop is Stop.HALT
    return outcome(m)


@pytest.mark.parametrize("variant", [PLAIN, LRSC])
@pytest.mark.parametrize("seed", [0, 5])
def test_a_restored_snapshot_runs_on_exactly_as_the_first_run(variant: int,
                                                             seed: int) -> None:
    ref = reference(variant, seed)
    m = machine(program("race", "rv64", variant), 2, seed)
    assert m.run(max_insns=7_777).stop is Stop.BUDGET      # stopped inside a turn
    for _ in range(37):
        assert m.step_machine().stop is Stop.STEP
    store = PageStore(m)
    snap = take_snapshot(m, store)
    assert snap.instret == m.total_instret() == sum(snap.schedule["turn"][:0]) + \
        sum(int(h.state.instret) for h in m.harts)
    assert len(snap.harts) == 2
    assert m.run(max_insns=RUN).stop is Stop.HALT
    first = outcome(m)
    restore_machine(m, store, snap)
    assert m.total_instret() == snap.instret
    assert m.run(max_insns=RUN).stop is Stop.HALT
    again = outcome(m)
    assert again == first
    assert first == ref          # stopping and stepping changed nothing of the run
    counter = int.from_bytes(first[2][m.symbols["counter"] - m.memory.ram_base:][:4],
                             "little")
    if variant == LRSC:
        assert counter == 2 * ITER
    store.close()


def test_plain_race_loses_the_same_updates_after_a_restore() -> None:
    """Seed 0 loses updates on plain increments; from a snapshot taken before the
    harts first meet, the same ones are lost again."""
    m = machine(program("race", "rv64", PLAIN), 2, 0)
    store = PageStore(m)
    snap = take_snapshot(m, store)
    m.run(max_insns=RUN)
    lost = 2 * ITER - word(m, "counter")
    assert lost > 0
    restore_machine(m, store, snap)
    m.run(max_insns=RUN)
    assert 2 * ITER - word(m, "counter") == lost
    store.close()


def test_stepping_the_machine_interleaves_as_a_run_does() -> None:
    """Turns stepped through end where a run's end (the first block start at or past
    the quantum): stepping the whole program gives the run's counts and counter."""
    ref = reference(PLAIN, 3)
    m = machine(program("race", "rv64", PLAIN), 2, 3)
    harts_seen = set()
    while True:
        r = m.step_machine()
        harts_seen.add(int(m.hart.state.hart_id))
        if r.stop is not Stop.STEP:
            break
    assert r.stop is Stop.HALT
    assert harts_seen == {0, 1}
    assert outcome(m) == ref


def test_ipi_events_are_the_same_after_a_restore() -> None:
    m = machine(program("ipi"), 2, 1)
    store = PageStore(m)
    m.run(max_insns=3_000)
    snap = take_snapshot(m, store)
    r = m.run(max_insns=RUN)
    assert r.stop is Stop.HALT
    first = outcome(m)
    assert any('"hart": 1' in e and '"m_software"' in e for e in first[0])   # the IPI
    assert first[3].splitlines()[2] == b"00000003"
    restore_machine(m, store, snap)
    assert m.run(max_insns=RUN).stop is Stop.HALT
    assert outcome(m) == first
    store.close()


def test_step_back_on_two_harts_returns_to_each_earlier_moment() -> None:
    """Forward steps record (hart, pc, registers); stepping back visits them again in
    reverse, each on the hart that was about to run it."""
    m = machine(program("race", "rv64", LRSC), 2, 2)
    h = History(m, every=5_000)
    m.run(until=AtInstret(12_000))      # past a turn or two (and snapshots)
    assert m.total_instret() == 12_000
    k, end = m.turns.turn                    # to 60 instructions short of this turn's end
    m.run(until=AtInstret(12_000 + end - int(m.harts[k].state.instret) - 60))
    assert m.turns.waiting == [False, False]
    seen: list[tuple[Position, int, int, list[int]]] = []
    for _ in range(120):
        seen.append((h.position(), int(m.hart.state.hart_id), m.hart.pc,
                     [m.hart.x(i) for i in range(32)]))
        assert m.step_machine().stop is Stop.STEP
    assert {s[1] for s in seen} == {0, 1}       # the steps crossed a turn switch
    for pos, _hart, _pc, _regs in reversed(seen):
        r = h.step_back()
        assert r.position == pos and not r.begin
        assert h.position() == pos
    # the state at each moment: the hart that ran next, its pc and registers
    for pos, hart, pc, regs in seen[::13]:
        h.goto(pos)
        assert h.position() == pos
        assert m.harts[hart].pc == pc
        assert [m.harts[hart].x(i) for i in range(32)] == regs
    h.close()


def test_step_back_across_a_turn_switch_names_the_other_hart() -> None:
    """The moment before a switch is on the hart whose turn ended."""
    m = machine(program("race", "rv64", PLAIN), 2, 4)
    h = History(m, every=5_000)
    assert m.step_machine().stop is Stop.STEP
    first = int(m.hart.state.hart_id)
    for _ in range(40_000):
        before = h.position()
        pc = m.hart.pc
        assert m.step_machine().stop is Stop.STEP
        if int(m.hart.state.hart_id) != first:
            break
    else:
        pytest.fail("no turn switch in 40,000 steps")
    r = h.step_back()
    assert r.position == before
    assert m.total_instret() == before.instret
    assert m.hart.state.hart_id == first and m.hart.pc == pc
    h.close()


def test_history_runs_back_to_an_instret_of_all_harts() -> None:
    m = machine(program("race", "rv64", PLAIN), 2, 6)
    h = History(m, every=3_000)
    m.run(until=AtInstret(21_000))
    at = [int(x.state.instret) for x in m.harts]
    assert sum(at) == 21_000
    ram = m.read_physical(m.memory.ram_base, RAM_CHECKED)
    assert m.run(max_insns=RUN).stop is Stop.HALT
    end = outcome(m)
    h.back_to_instret(21_000)
    assert [int(x.state.instret) for x in m.harts] == at
    assert m.read_physical(m.memory.ram_base, RAM_CHECKED) == ram
    assert m.run(max_insns=RUN).stop is Stop.HALT
    assert outcome(m) == end
    h.close()
