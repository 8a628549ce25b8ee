"""Turns the core runs back to back (harness/native/turns.c): the same interleaving,
the same events and the same machine state as switching every turn in Python, with
devices, traps, wfi and stops on any hart; only far fewer returns to Python."""

from __future__ import annotations

import json
import threading
import time

import pytest
from kernel.test_smp_kernel import boot_smp

from machine.test_smp import machine, program
from privlab.machine import Machine, Stop
from privlab.machine.schedule import QUANTUM_MAX, QUANTUM_MIN, Schedule


def _state(m: Machine) -> tuple[object, ...]:
    """Everything an interleaving decides, to compare two runs by."""
    events = [json.dumps(e.to_json()) for e in m.events]
    harts = [(h.state.instret, h.pc, int(h.priv), h.state.idle_ns) for h in m.harts]
    t = m.turns
    return (events, harts, t.turn, t.clock_ns, t.schedule._state, list(t.schedule._round),
            list(t.waiting), m.console.text())


def _run(prog: str, *args: str, harts: int, seed: int, chain: bool,
         budget: int = 400_000_000) -> tuple[tuple[object, ...], int]:
    m = boot_smp(prog, *args, harts=harts, seed=seed)
    try:
        m.turns.allow_chain = chain
        r = m.run(max_insns=budget)
        assert (r.stop, r.exit_status) == (Stop.HALT, 0), m.console.text()[-1500:]
        return _state(m), int(m.turns.native.chained)
    finally:
        m.close()


@pytest.mark.parametrize(("prog", "args", "harts", "seed"), [
    ("forktree", (), 3, 1),          # fork, exit, wait on three harts: traps on each
    ("sleep", ("3",), 2, 5),          # a sleeping process: idle harts wait in wfi
])
def test_a_chain_of_turns_is_the_interleaving_python_makes(
        prog: str, args: tuple[str, ...], harts: int, seed: int) -> None:
    by_python, none = _run(prog, *args, harts=harts, seed=seed, chain=False)
    by_core, chained = _run(prog, *args, harts=harts, seed=seed, chain=True)
    assert none == 0
    assert chained > 100                     # the core did switch harts by itself
    assert by_core == by_python


def test_a_run_in_pieces_with_chains_is_the_run_in_one_piece() -> None:
    """A budget that ends inside a chain hands back exactly there: runs of odd lengths
    add up to the one long run, instruction for instruction."""
    whole, _ = _run("forktree", harts=3, seed=2, chain=True)
    m = boot_smp("forktree", harts=3, seed=2)
    try:
        while True:
            r = m.run(max_insns=777_777)
            if r.stop is not Stop.BUDGET:
                break
        assert (r.stop, r.exit_status) == (Stop.HALT, 0)
        assert _state(m) == whole
    finally:
        m.close()


def test_a_stop_asked_for_during_a_chain_ends_it_once() -> None:
    """request_stop from another thread (Ctrl-C) ends the chain within a turn, on the
    hart then running, and the next run goes on instead of stopping at once."""
    m = boot_smp("compute", "100000000007", harts=2, seed=0)
    try:
        timer = threading.Timer(0.3, m.request_stop)
        timer.start()
        start = time.monotonic()
        r = m.run(max_insns=50_000_000_000)
        timer.join()
        assert r.stop is Stop.USER
        assert time.monotonic() - start < 5
        assert m.turns.native.chained > 0
        before = sum(h.state.instret for h in m.harts)
        again = m.run(max_insns=1_000_000)
        assert again.stop is Stop.BUDGET
        assert sum(h.state.instret for h in m.harts) - before >= 1_000_000
    finally:
        m.close()


@pytest.mark.parametrize("chain", [True, False])
def test_a_stop_reported_while_it_is_still_being_asked_for_leaves_no_stop_behind(
        chain: bool) -> None:
    """The run loop may see request_stop's flag before request_stop has set the hart's
    USER stop (the asking thread can lose the interpreter between the two). The report
    waits for the whole request, so the USER stop it set does not end the next run at
    once. Here the asking thread pauses between its steps, as a thread switch would.
    Without chains of turns in the core, the report is the one Python makes between two
    turns (HartTurns.run)."""
    m = boot_smp("compute", "100000000007", harts=2, seed=0)
    m.turns.allow_chain = chain
    attend = m.turns.attend

    def slow_attend() -> None:
        attend()
        time.sleep(0.3)                # the chain returns and the loop reports meanwhile

    m.turns.attend = slow_attend       # type: ignore[method-assign]
    try:
        timer = threading.Timer(0.3, m.request_stop)
        timer.start()
        r = m.run(max_insns=50_000_000_000)
        timer.join()
        assert r.stop is Stop.USER
        assert [h.state.stop_reason for h in m.harts] == [0, 0]
        again = m.run(max_insns=1_000_000)
        assert again.stop is Stop.BUDGET
    finally:
        m.close()


def test_a_cancelled_stop_request_leaves_the_next_run_alone() -> None:
    """cancel_stop (the GDB stub's, for a request that came after its run ended)
    forgets the request whole: the next run is not stopped by the USER stop it set."""
    m = boot_smp("compute", "100000000007", harts=2, seed=0)
    try:
        m.request_stop()
        m.cancel_stop()
        assert [h.state.stop_reason for h in m.harts] == [0, 0]
        assert m.run(max_insns=1_000_000).stop is Stop.BUDGET
    finally:
        m.close()


def _splitmix_schedule(harts: int, seed: int, n: int) -> list[tuple[int, int]]:
    """The schedule docs/machine.md describes, computed here independently: SplitMix64
    (Steele, Lea and Flood's constants), rounds shuffled by Fisher-Yates and taken from
    the front, quanta of QUANTUM_MIN to QUANTUM_MAX."""
    mask, state = (1 << 64) - 1, seed & ((1 << 64) - 1)

    def below(k: int) -> int:
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        return (z ^ (z >> 31)) % k

    out: list[tuple[int, int]] = []
    while len(out) < n:
        order = list(range(harts))
        for i in range(harts - 1, 0, -1):
            j = below(i + 1)
            order[i], order[j] = order[j], order[i]
        for hart in order:
            out.append((hart, QUANTUM_MIN + below(QUANTUM_MAX - QUANTUM_MIN + 1)))
    return out[:n]


@pytest.mark.parametrize("harts", [1, 2, 3, 8])
@pytest.mark.parametrize("seed", [0, 7, (1 << 64) - 1])
def test_the_core_draws_the_documented_schedule(harts: int, seed: int) -> None:
    schedule = Schedule(harts, seed)
    assert [schedule.next_turn() for _ in range(300)] == _splitmix_schedule(harts, seed, 300)


def _spin(variant: int, chain: bool) -> tuple[tuple[object, ...], int]:
    m = machine(program("spin", "rv64", variant), 2, seed=3)
    try:
        m.turns.allow_chain = chain
        r = m.run(max_insns=50_000_000)
        assert (r.stop, r.exit_status) == (Stop.HALT, 0), r.message
        return _state(m), int(m.turns.native.chained)
    finally:
        m.close()


@pytest.mark.parametrize("variant", [0, 1, 2, 3])
def test_waiting_loops_in_a_chain_leave_when_python_would(variant: int) -> None:
    """spin.S: hart 1 waits on a flag (0), the same taking and dropping a lock each
    round (1), for the time CSR (2) or the CLINT's mtime (3) to pass a deadline, while
    hart 0 works. Chained or not, it leaves its loop at the same instruction: the
    minstret both harts print, the events, clock and schedule are the same."""
    by_python, none = _spin(variant, chain=False)
    by_core, chained = _spin(variant, chain=True)
    assert none == 0 and chained > 20
    assert by_core == by_python
    printed = sorted(int(w, 16) for w in by_core[-1].split())
    assert len(printed) == 2 and printed[1] > 600_000      # hart 0's WORK loop ran whole
