"""Deterministic scheduling of several harts: who runs next, and for how long.

The harts of a `--smp N` machine take turns on the host, one at a time. Each round
runs every hart once, in an order shuffled by a seeded generator, each for a quantum
of instructions drawn from the same generator: QUANTUM_MIN to QUANTUM_MAX (the mean
is about QUANTUM_MEAN). The generator is SplitMix64, written out in the core
(harness/native/turns.c, which also runs turns back to back) rather than Python's
`random`, so an interleaving is a pure function of the seed whatever the Python
version: the same image, input and `--smp-seed` give the same interleaving, and so the
same trace, every time.

`HartTurns` runs a machine of several harts by those turns: a hart whose turn ends in
wfi waits, yielding its turns until an interrupt would wake it, and when every hart
waits guest time skips to the first timer due.
"""

from __future__ import annotations

import copy
import ctypes
from collections.abc import Callable
from dataclasses import dataclass, field

from ..abi.csr import Csr
from ..abi.native_layout import MAX_HARTS, EventRecord, TurnState
from ..abi.unicorn_abi import UC_RISCV_REG_PRIV
from ..devices.uart import INPUT_POLL_INSNS
from ..errors import BadInput
from ..native.library import load_library
from .hart import EVENT_BUFFER, Hart
from .results import MAX_BUDGET_STEPS, TURN_OVER, RunResult, Stop
from .until import AtInstret, Until

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .machine import Machine

__all__ = ["DEFAULT_SMP_SEED", "MAX_HARTS", "QUANTUM_MAX", "QUANTUM_MIN", "HartTurns",
           "Schedule", "check_smp"]

DEFAULT_SMP_SEED = 0
QUANTUM_MIN = 2_000
QUANTUM_MAX = 18_000
QUANTUM_MEAN = (QUANTUM_MIN + QUANTUM_MAX) // 2
_M64 = (1 << 64) - 1


def check_smp(harts: int) -> None:
    """QEMU's virt board takes up to 8 harts in one socket."""
    if not 1 <= harts <= MAX_HARTS:
        raise BadInput(f"--smp must be 1 to {MAX_HARTS} harts, not {harts}")


@dataclass
class Schedule:
    """The sequence of (hart, quantum) turns for `harts` harts under `seed`."""

    harts: int
    seed: int = DEFAULT_SMP_SEED
    _state: int = field(init=False)
    _round: list[int] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        check_smp(self.harts)
        self._state = self.seed & _M64

    def store(self, t: TurnState) -> None:
        """Where the schedule is, into the core's turn state."""
        t.rng = self._state
        t.round_len = len(self._round)
        for i, k in enumerate(self._round):
            t.round[i] = k

    def load(self, t: TurnState) -> None:
        """Where the core's turn state left the schedule."""
        self._state = int(t.rng)
        self._round = [int(t.round[i]) for i in range(t.round_len)]

    def next_turn(self) -> tuple[int, int]:
        """The hart to run next and its quantum in instructions (drawn by the core's
        `turns_draw`, the one implementation, which its chains of turns use too)."""
        t = TurnState(harts=self.harts, quantum_min=QUANTUM_MIN, quantum_max=QUANTUM_MAX)
        self.store(t)
        hart, quantum = ctypes.c_uint32(), ctypes.c_uint64()
        load_library().turns_draw(ctypes.byref(t), ctypes.byref(hart), ctypes.byref(quantum))
        self.load(t)
        return hart.value, quantum.value


class HartTurns:
    """The turns of a machine's harts (`Machine.turns`): the schedule, the turn under
    way, which harts wait in wfi and the clock they all agree on at a switch. It runs
    the machine through `Machine.run`/`step` one turn at a time."""

    def __init__(self, machine: Machine, schedule: Schedule) -> None:
        self.m = machine
        self.schedule = schedule
        self.waiting = [False] * schedule.harts   # in wfi, yielding turns until woken
        self.clock_ns = 0                  # guest time all harts agree on at a switch
        self.in_turn = False               # Machine.run is one hart's turn of a run
        self.turn: tuple[int, int] | None = None   # (hart, instret its turn ends at)
        self.wfi_yield = False             # that turn ended in a wfi
        # Turns the core runs back to back (harness/native/turns.c): on for a run with
        # nothing to watch between turns but the schedule (`chain`).
        self.chaining = False
        self.allow_chain = True            # False: every switch in Python (tests compare)
        self.native = TurnState(harts=schedule.harts, quantum_min=QUANTUM_MIN,
                                quantum_max=QUANTUM_MAX)
        # The events of turns the core ends itself, made at the first chain: 2.6 MB that
        # a machine of one hart (most of them) never chains into.
        self._chain_events: ctypes.Array[EventRecord] | None = None
        self._handles = (ctypes.c_void_p * schedule.harts)(
            *(h._h.value for h in machine.harts))
        self._limits = (_M64, _M64, 0)     # insn_limit, look_at, poll_insns of this run
        self._lib = load_library()

    def total_instret(self) -> int:
        """Instructions every hart has retired, together: the machine's own count, which
        orders the moments of a run of several harts as one hart's instret does."""
        m = self.m
        return sum(int(h.state.instret) for h in m.harts)

    def next_hart(self) -> int:
        """The hart that runs the machine's next instruction (`step_machine`): the one
        whose turn is under way, or else the one the schedule draws next (looked at on
        a copy: the schedule does not move)."""
        m = self.m
        if m.smp == 1:
            return 0
        if self.turn is not None:
            k, end = self.turn
            if m.harts[k].state.instret < end or m.harts[k].in_block():
                return k
        sched = copy.deepcopy(self.schedule)
        for _ in range(64 * m.smp):
            k, _q = sched.next_turn()
            if not self.waiting[k] or self.wakeable(m.harts[k]):
                return k
        return int(m.hart.state.hart_id)

    def step(self) -> RunResult:
        """One instruction of the machine: with one hart, `step()`; with several, the
        next instruction in the schedule's order, of whichever hart's turn it is (which
        is then the current hart). Stepping through a turn ends it where a run would
        (at the first block start at or past its quantum), so any mix of steps and
        runs interleaves the harts exactly as one uninterrupted run does."""
        m = self.m
        if m.smp == 1:
            return m.step()
        return self.run(None, [], None, step=True)

    def run(self, max_insns: int | None, conditions: list[Until],
            on_stop: Callable[[], None] | None, step: bool = False) -> RunResult:
        """Several harts take turns, as the schedule says, until one of them ends the
        run (halt, condition, stuck), the host asks, or `max_insns` instructions (all
        harts together) have run. A turn that ends in wfi leaves the hart waiting:
        it yields its turns until an interrupt is pending and enabled in its mie.

        A turn outlives a run that stops inside it (`_turn`): the next run (or step)
        goes on with it, so stopping changes nothing of the interleaving. An AtInstret
        condition counts the instructions of all harts (`total_instret`). `step`: one
        instruction of the hart whose turn it is, then stop."""
        m = self.m
        ran = 0
        m.uart.look_for_input()           # fed since the last run
        live = bool(getattr(m.uart.source, "live", False))
        next_poll = INPUT_POLL_INSNS         # live input: looked at as often as one hart
        if m._codesync is not None:
            m._codesync.run_begins()
        targets = [c for c in conditions if isinstance(c, AtInstret)]
        rest: list[Until] = [c for c in conditions if not isinstance(c, AtInstret)]
        chain = self.allow_chain and not (step or conditions or on_stop is not None
                                          or m._tohost is not None)
        while True:
            if live and ran >= next_poll:
                next_poll = ran + INPUT_POLL_INSNS
                m.uart.look_for_input()
            if m._stop_wanted and m._report_stop():
                return m._result(Stop.USER)
            if max_insns is not None and ran >= max_insns:
                return m._result(Stop.BUDGET, "instruction budget exhausted")
            total = self.total_instret()
            at = next((c for c in targets if total >= c.instret), None)
            if at is not None:
                return m._result(Stop.EVENT, condition=at)
            if self.turn is not None:
                k, end = self.turn
                if m.harts[k].state.instret >= end and not m.harts[k].in_block():
                    self.end(k)
            if self.turn is None:
                if not step and m.checkpoint is not None and total >= m.next_checkpoint:
                    m.checkpoint()        # between two turns: nothing the guest sees
                begun = self.begin(rest)
                if isinstance(begun, RunResult):
                    return begun
                if not begun:
                    continue                 # a waiting hart's turn went by
            assert self.turn is not None
            k, end = self.turn
            hart = m.harts[k]
            m._select(k)
            before = self.total_instret()
            # The other harts stand still during this turn: their count, with this
            # hart's, is the machine's clock each event records (the count --at
            # instret:N uses).
            hart.state.others_instret = before - hart.state.instret
            self.in_turn = True
            if chain:
                # What Python must look at between turns, as machine-wide counts: the
                # core ends its chain of turns there (this loop's own tests, above).
                look = before + INPUT_POLL_INSNS
                if live:
                    look = min(look, before + max(0, next_poll - ran))
                if m.checkpoint is not None:
                    look = min(look, m.next_checkpoint)
                limit = _M64 if max_insns is None else before + max_insns - ran
                self._limits = (limit, look, INPUT_POLL_INSNS if live else 0)
            self.chaining = chain
            try:
                if step:
                    result = m.step()
                else:
                    left = None if max_insns is None else max_insns - ran
                    result = self.turn_run(hart, end, left, targets, rest, total, on_stop)
            finally:
                self.in_turn = False
                self.chaining = False
                s = m.hart.state               # a chain of turns may end on another hart
                ran += self.total_instret() - before
                self.clock_ns = (s.instret << s.icount_shift) + s.idle_ns
                if self.turn is not None:
                    k = self.turn[0]
            if self.wfi_yield:
                self.wfi_yield = False
                self.waiting[k] = True
                self.end(k)
                if step:
                    return m._result(Stop.STEP)
                continue
            if result is TURN_OVER and not step:
                continue
            return result

    def chain(self) -> int:
        """Run the current turn in the core, and the turns after it while nothing needs
        Python (harness/native/turns.c); returns the last engine's error code, with the
        hart it ran selected and the schedule where the core left it. The events of
        turns already over go to the log first: the current hart's follow."""
        m = self.m
        t = self.native
        assert self.turn is not None
        if self._chain_events is None:
            self._chain_events = (EventRecord * (4 * EVENT_BUFFER))()
            t.ev_buf = ctypes.addressof(self._chain_events)
            t.ev_cap = 4 * EVENT_BUFFER
        t.current, t.turn_end = self.turn
        self.schedule.store(t)
        for i, w in enumerate(self.waiting):
            t.waiting[i] = w
        t.insn_limit, t.look_at, t.poll_insns = self._limits
        t.attention = 0
        t.ran_mask = 0
        t.ev_len = 0
        for uc in m.ucs:
            uc.hook_exception = None
        sync = m._codesync.handle if m._codesync is not None else None
        began = int(t.chained)
        err = int(self._lib.turns_chain(ctypes.byref(t), self._handles, sync))
        k = int(t.current)
        if t.chained != began:                 # the core began turns of its own
            self.schedule.load(t)
            self.clock_ns = int(t.clock_ns)
            m._select(k)
            m._ran_since_step.update(j for j in range(self.schedule.harts)
                                     if t.ran_mask >> j & 1)
        self.turn = (k, int(t.turn_end))
        if t.ev_len:
            m.events.append_raw(ctypes.string_at(
                ctypes.addressof(self._chain_events), t.ev_len * ctypes.sizeof(EventRecord)))
        for uc in m.ucs:
            exc = uc.hook_exception
            if exc is not None:
                uc.hook_exception = None
                raise exc
        return err

    def attend(self) -> None:
        """Python must look before the core begins another turn (thread-safe)."""
        self.native.attention = 1

    def begin(self, conditions: list[Until]) -> RunResult | bool:
        """Draw the next turn and start it (`_turn`): False if it was a waiting hart's
        that nothing wakes yet; a result if the run ends here (stuck, or the trap that
        woke a hart matched a condition)."""
        m = self.m
        if all(self.waiting) and not any(self.wakeable(h) for h in m.harts):
            wake = [t for t in (self.wake_ns(h) for h in m.harts) if t is not None]
            if not wake:
                return m._result(Stop.ERROR, (
                    f"every hart waits in wfi and nothing can wake any of them (hart "
                    f"{m.hart.state.hart_id} at pc {m.hart.pc - 4:#x}): nothing "
                    "pending is enabled in mie and no timer is armed"))
            self.clock_ns = min(wake)       # time skips to the first timer due
        k, quantum = self.schedule.next_turn()
        hart = m.harts[k]
        self.set_clock(hart)
        hit = None
        if self.waiting[k]:
            if not self.wakeable(hart):
                return False
            self.waiting[k] = False
            m._select(k)
            first = len(m.events)
            hart.take_pending_interrupt()
            m._drain()
            hit = m._matched(conditions, first)   # the trap that woke it
        m._select(k)
        if m._codesync is not None:
            m._codesync.turn_begins(k)
        self.turn = (k, int(hart.state.instret) + quantum)
        if hit is not None:
            return m._result(Stop.EVENT, event=hit[0], condition=hit[1])
        return True

    def end(self, k: int) -> None:
        """Hart k's turn is over."""
        m = self.m
        # Switched out: its LR reservation goes, so no store by another hart to the
        # reservation set can go unnoticed (an SC may fail spuriously, as the spec
        # allows). Writing PRIV clears it (docs/unicorn.md).
        uc = m.ucs[k]
        uc.reg_write(UC_RISCV_REG_PRIV, int(uc.reg_read(UC_RISCV_REG_PRIV)))
        if m._codesync is not None:
            m._codesync.turn_ended(k)
        self.turn = None

    def turn_run(self, hart: Hart, end: int, left: int | None, targets: list[AtInstret],
                  rest: list[Until], total: int,
                  on_stop: Callable[[], None] | None) -> RunResult:
        """Run the current turn on (to its end, at most `left` instructions), stopping
        exactly at the first of `targets` (machine-wide instret) that falls in it."""
        m = self.m
        s = hart.state
        now = int(s.instret)
        offset = total - now                 # what the other harts have retired
        goal = min((c.instret - offset for c in targets), default=None)
        orig = min(targets, key=lambda c: c.instret) if targets else None
        if now >= end:                       # past its end, inside a block a run began
            return self.finish_block(hart, goal, orig, rest)
        quantum = end - now if left is None else min(end - now, left)
        if goal is not None and goal <= now + quantum:
            r = m.run(goal - now, until=[*rest, AtInstret(goal)], on_stop=on_stop)
        elif goal is not None and quantum == end - now and goal <= end + MAX_BUDGET_STEPS:
            # The goal may lie in the block the turn ends with: exactly to the turn's
            # end, then on through that block one instruction at a time.
            r = m.run(quantum, until=[*rest, AtInstret(end)], on_stop=on_stop)
            if r.stop is Stop.EVENT and isinstance(r.condition, AtInstret):
                return self.finish_block(hart, goal, orig, rest)
        else:
            r = m.run(quantum, until=rest, on_stop=on_stop)
        if r.stop is Stop.EVENT and isinstance(r.condition, AtInstret):
            return m._result(Stop.EVENT, condition=orig)
        return r

    def finish_block(self, hart: Hart, goal: int | None, orig: AtInstret | None,
                      rest: list[Until]) -> RunResult:
        """The turn's instructions are done but a run would finish the block it is in:
        step to that block's end (or to `goal`)."""
        m = self.m
        first = len(m.events)
        while hart.in_block():
            if goal is not None and hart.state.instret >= goal:
                return m._result(Stop.EVENT, condition=orig)
            r = m.step()
            if r.stop is not Stop.STEP:
                return r
            hit = m._matched(rest, first)
            if hit is not None:
                return m._result(Stop.EVENT, event=hit[0], condition=hit[1])
        if goal is not None and hart.state.instret >= goal:
            return m._result(Stop.EVENT, condition=orig)
        return TURN_OVER

    def set_clock(self, hart: Hart) -> None:
        """Guest time on `hart` reads the machine's clock: the instructions all harts
        have run (each 2^icount_shift ns), plus time skipped while all waited."""
        s = hart.state
        s.idle_ns = self.clock_ns - (s.instret << s.icount_shift)

    def wakeable(self, hart: Hart) -> bool:
        """An interrupt is pending and enabled in mie, now (wfi's wake-up condition)."""
        self.set_clock(hart)
        return bool(hart.mip() & hart.csr(Csr.MIE))

    def wake_ns(self, hart: Hart) -> int | None:
        """When a timer interrupt would wake the waiting `hart` (None: never)."""
        self.set_clock(hart)
        if not hart.wfi_wake():
            return None
        s = hart.state
        return (s.instret << s.icount_shift) + s.idle_ns
