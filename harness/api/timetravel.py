"""Going back in time: periodic snapshots and deterministic re-execution.

A `History` records a snapshot of the machine every `every` instructions while it runs
(Machine.checkpoint, called between two blocks, which the guest cannot notice). To go
back to any earlier moment it restores the latest snapshot before it and runs forward
again to exactly that moment: a run is a pure function of its state, so the machine is
then exactly as it was the first time (registers, CSRs, RAM, devices, time, the
console, the event log).

The history has a budget (bytes: the page store plus each snapshot's own part;
DEFAULT_BUDGET, or PRIVLAB_HISTORY_BUDGET, or the `budget` given). When a snapshot
takes it past the budget, the history first thins its older half (every other
snapshot, while the re-execution between the ones kept stays under MAX_GAP_SECONDS),
then drops its oldest snapshots, and gives the pages no snapshot names any more back
to the host, until it holds at most TRIM_TO of the budget. So memory stays bounded
whatever the guest writes; what is lost is the far past: going back before the
oldest snapshot kept is refused with BadInput naming the window (`window()`), and
gdb's reverse commands stop at its start ("no more reverse-execution history").

A moment is a `Position`: (instructions retired, events logged). Both only grow along
a run, and no two moments a run stops at share both (an instruction retires, or a trap
or xRET is logged), so positions order the moments of a run.

With several harts (`--smp N`), the instructions are those of all harts together
(Machine.total_instret), a snapshot holds every hart and the schedule's state, and a
single step is one instruction of the machine in the schedule's order
(Machine.step_machine): a step back returns to the moment before the last instruction
any hart ran, on that hart. Snapshots are taken between two turns.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

from ..errors import BadInput
from ..machine import Stop
from ..machine.snapshot import MachineSnapshot, PageStore, restore_machine, take_snapshot
from ..machine.until import AfterTrap, AfterXret, AtInstret

if TYPE_CHECKING:
    from ..machine import Machine
    from ..machine.events import Event

__all__ = ["BUDGET_ENV", "DEFAULT_BUDGET", "DEFAULT_EVERY", "History", "Position",
           "ReverseResult", "history_budget", "parse_size"]

DEFAULT_EVERY = 2_000_000     # instructions between snapshots, at most
MIN_EVERY = 20_000            # and at least
TARGET_SECONDS = 0.1          # re-executing from one snapshot to the next: about this long
MAX_STEPS_TO_TARGET = 4096    # single steps after a run to an exact instret

DEFAULT_BUDGET = 1 << 30      # bytes of history: fits beside a browser on an 8 GB laptop
BUDGET_ENV = "PRIVLAB_HISTORY_BUDGET"
MIN_BUDGET = 16 << 20         # less would keep no useful window
TRIM_TO = 0.75                # a trim leaves at most this share of the budget
MAX_GAP_SECONDS = 2.0         # thinning keeps re-executing between snapshots under this


def parse_size(text: str) -> int:
    """`512M`, `2G`, `1.5G`, `800000000`: bytes (K, M, G, T are powers of 1024)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.IGNORECASE)
    if m is None:
        raise BadInput(f"not a size: {text!r} (try 512M or 2G)")
    scale = 1 << (10 * " KMGT".index(m.group(2).upper() or " "))
    return int(float(m.group(1)) * scale)


def history_budget(text: str | None = None) -> int:
    """The history budget: `text` if given, else $PRIVLAB_HISTORY_BUDGET, else
    DEFAULT_BUDGET; at least MIN_BUDGET."""
    if text is None:
        text = os.environ.get(BUDGET_ENV)
        if text is None or not text.strip():
            return DEFAULT_BUDGET
        where = f"{BUDGET_ENV}={text}"
    else:
        where = text
    try:
        n = parse_size(text)
    except BadInput:
        raise BadInput(f"history budget {where!r}: not a size (try 512M or 2G)") from None
    if n < MIN_BUDGET:
        raise BadInput(f"history budget {where!r} is below the least useful, "
                       f"{MIN_BUDGET >> 20} MiB")
    return n


def _bytes(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def instructions(n: int) -> str:
    """2,100,000,000 -> `2.1 G`; 35,000 -> `35 k`; 812 -> `812`."""
    for scale, unit in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return str(n)


class Position(NamedTuple):
    instret: int
    events: int


@dataclass
class ReverseResult:
    """Where a backward move ended. `begin`: it reached the first recorded moment
    without finding what it looked for (gdb's "no more reverse-execution history")."""

    position: Position
    pc: int
    begin: bool = False
    event: Event | None = None
    seconds: float = 0.0


_F = TypeVar("_F", bound=Callable[..., Any])


def _backward(move: _F) -> _F:
    """A backward move holds snapshots of its own while it runs: no trim meanwhile
    (the next forward checkpoint trims)."""
    @functools.wraps(move)
    def wrapper(self: History, *args: Any, **kwargs: Any) -> Any:
        outer = self._moving
        self._moving = True
        try:
            return move(self, *args, **kwargs)
        finally:
            self._moving = outer
    return cast(_F, wrapper)


@dataclass
class _AtSeq(AfterTrap):
    """Stops again at the trap numbered `seq` when a run is replayed."""
    seq: int = 0

    def matches(self, e: Event) -> bool:
        return e.seq == self.seq


@dataclass
class _AtSeqX(AfterXret):
    """Stops again at the xRET numbered `seq` when a run is replayed."""
    seq: int = 0

    def matches(self, e: Event) -> bool:
        return e.seq == self.seq


@dataclass
class History:
    """Snapshots of a machine taken every `every` instructions (fewer as they outgrow
    `budget`), so that any earlier moment can be restored and run forward to."""
    machine: Machine
    every: int = DEFAULT_EVERY
    on_restore: Callable[[], None] | None = None
    budget: int = field(default_factory=history_budget)
    store: PageStore = field(init=False)
    snaps: list[MachineSnapshot] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self._last = (0, time.perf_counter())   # instret and wall time at the last snapshot
        self._interval = self.every
        self._replaying = False
        if self.every < 1:
            raise BadInput(f"snapshot interval must be at least 1 instruction, not {self.every}")
        self.trims = 0                  # how often the budget made the history let go
        self.dropped = 0                # snapshots given up to it
        self._moving = False            # inside a backward move: its snapshots are in use
        self.store = PageStore(self.machine)
        self.checkpoint()
        self.machine.checkpoint = self.checkpoint
        self._replaying = False

    # -- recording -------------------------------------------------------------------
    def position(self) -> Position:
        return Position(self.machine.total_instret(), len(self.machine.events))

    @staticmethod
    def _pos(snap: MachineSnapshot) -> Position:
        return Position(snap.instret, snap.events)

    def _pace(self, instret: int) -> None:
        """The next snapshot's distance: `every` instructions at most, fewer where the
        guest runs slowly (devices, many traps), so that going back re-executes about
        TARGET_SECONDS at most whatever the program. Only where snapshots are cheap."""
        now = time.perf_counter()
        last_i, last_t = self._last
        self._last = (instret, now)
        if self.store.tracked and instret > last_i and now > last_t:
            rate = (instret - last_i) / (now - last_t)
            self._interval = int(min(self.every, max(min(MIN_EVERY, self.every),
                                                     rate * TARGET_SECONDS)))
        self.machine.next_checkpoint = instret + self._interval

    def checkpoint(self) -> None:
        """Snapshot now (called by the run loop every `every` instructions, or sooner
        where the guest runs slowly)."""
        pos = self.position()
        if self._replaying:
            self.machine.next_checkpoint = pos.instret + self._interval
        else:
            self._pace(pos.instret)
        if self.snaps and self._pos(self.snaps[-1]) >= pos:
            # Re-executing a stretch already recorded: its snapshots exist.
            i = bisect.bisect_right([self._pos(s) for s in self.snaps], pos)
            if i and self._pos(self.snaps[i - 1]) == pos:
                return
            if self._replaying:
                return
        snap = take_snapshot(self.machine, self.store)
        keys = [self._pos(s) for s in self.snaps]
        i = bisect.bisect_right(keys, pos)
        if i and keys[i - 1] == pos:
            self.snaps[i - 1] = snap
        else:
            self.snaps.insert(i, snap)
        if not self._moving and self.nbytes > self.budget:
            self.trim()

    # -- the budget ----------------------------------------------------------------------
    def trim(self, target: int | None = None) -> None:
        """Bring the history under `target` bytes (TRIM_TO of the budget): thin the
        older half, then drop the oldest snapshots, giving their pages back. The
        newest snapshot always stays."""
        goal = int(self.budget * TRIM_TO) if target is None else target
        self.trims += 1
        before = len(self.snaps)
        while self._thin() and self._collect() > goal:
            pass
        while self.nbytes > goal and len(self.snaps) > 1:
            # the oldest quarter (at least one), never the newest
            n = min(max(1, len(self.snaps) // 4), len(self.snaps) - 1)
            del self.snaps[:n]
            self._collect()
        self.dropped += before - len(self.snaps)

    def _collect(self) -> int:
        self.store.collect()
        return self.nbytes

    def _thin(self) -> bool:
        """Drop every other snapshot of the older half (the first kept) where the
        re-execution from the one before it to the one after stays under
        MAX_GAP_SECONDS. False: none could go."""
        half = len(self.snaps) // 2
        drop = {i for i in range(1, half, 2)
                if "branch" not in self.snaps[i].extra
                and self.snaps[i + 1].taken_at - self.snaps[i - 1].taken_at <= MAX_GAP_SECONDS}
        if not drop:
            return False
        self.snaps = [s for i, s in enumerate(self.snaps) if i not in drop]
        return True

    def reach(self) -> int:
        """How many instructions back the history reaches from now: to its oldest
        snapshot kept (all harts' instructions together)."""
        return max(0, self.position().instret - self.start.instret)

    def window(self) -> str:
        """What the history holds, for the UIs: `history kept: the last 2.1 G
        instructions (from instruction 812 M; 1.0 GiB budget, 0.6 GiB used)`."""
        start = self.start.instret
        lost = f", from instruction {instructions(start)}" if self.dropped else ""
        return (f"history kept: the last {instructions(self.reach())} instructions"
                f"{lost} ({_bytes(self.nbytes)} of a {_bytes(self.budget)} budget)")

    def forget_future(self) -> None:
        """The machine was changed from outside (a register, memory): snapshots after
        now no longer describe its future."""
        now = self.position()
        self.snaps = [s for s in self.snaps if self._pos(s) <= now] or self.snaps[:1]

    def branch(self, hart: int, before: Position) -> None:
        """Several harts: the machine ran hart `hart` outside the schedule's order from
        `before` (a debugger's step of one thread while the others stay): the recorded
        future after `before` no longer holds, and a snapshot of now starts the new
        one. Going back before it re-executes in the schedule's order, which is how
        the machine got to `before`."""
        self.snaps = [s for s in self.snaps if self._pos(s) <= before] or self.snaps[:1]
        snap = take_snapshot(self.machine, self.store)
        snap.extra["branch"] = (hart, before)
        if self._pos(snap) > self._pos(self.snaps[-1]):
            self.snaps.append(snap)

    def leave_branches(self) -> None:
        """Before a move in the schedule's order: snapshots ahead of now from the first
        `branch` on describe steps outside it, not this move's future."""
        now = self.position()
        cut = next((i for i, s in enumerate(self.snaps)
                    if self._pos(s) > now and "branch" in s.extra), None)
        if cut is not None:
            self.snaps = self.snaps[:cut]

    def hart_ahead(self) -> int:
        """The hart that ran the recorded instruction after now: the one a `branch`
        stepped from here, or else the schedule's next (Machine.next_hart)."""
        now = self.position()
        for snap in self.snaps:
            if "branch" in snap.extra and snap.extra["branch"][1] == now:
                return int(snap.extra["branch"][0])
        return self.machine.next_hart()

    def close(self) -> None:
        self.machine.checkpoint = None
        self.store.close()

    @property
    def nbytes(self) -> int:
        """Memory the history holds: the page store plus each snapshot's own part."""
        return self.store.nbytes + sum(s.nbytes for s in self.snaps)

    @property
    def start(self) -> Position:
        return self._pos(self.snaps[0])

    # -- restoring --------------------------------------------------------------------
    def _restore(self, snap: MachineSnapshot) -> None:
        restore_machine(self.machine, self.store, snap)
        self.machine.next_checkpoint = snap.instret + self._interval
        self._last = (snap.instret, time.perf_counter())
        if self.on_restore is not None:
            self.on_restore()

    def restore(self, snap: MachineSnapshot) -> None:
        self._restore(snap)

    def _snapshot_before(self, target: Position, strict: bool = False) -> MachineSnapshot:
        keys = [self._pos(s) for s in self.snaps]
        i = (bisect.bisect_left if strict else bisect.bisect_right)(keys, target)
        if i == 0:
            raise BadInput(self._before_start(f"instruction {target.instret}"))
        return self.snaps[i - 1]

    def _before_start(self, what: str) -> str:
        """The one line for a move to before the oldest snapshot kept."""
        why = (f"; the history budget ({_bytes(self.budget)}, {BUDGET_ENV}) let go of "
               "what came before" if self.dropped else "")
        return (f"{what} is before the recorded history, which starts at instruction "
                f"{self.start.instret}{why}")

    def _run(self, until: list[object]) -> Stop:
        m = self.machine
        saved = set(m.breakpoints)
        for a in saved:          # re-execution does not stop at the debugger's breakpoints
            for hart in m.harts:
                hart.set_breakpoint(a, False)
        m.breakpoints.clear()
        self._replaying = True
        try:
            return m.run(until=until).stop     # type: ignore[arg-type]
        finally:
            self._replaying = False
            for a in saved:
                m.set_breakpoint(a)

    @_backward
    def goto(self, target: Position) -> None:
        """Bring the machine to the moment `target` of the recorded run: the first
        moment with that instret, or one right after an event at it."""
        snap = self._snapshot_before(target)
        if target < self.position() or self.position() < self._pos(snap):
            self._restore(snap)
        self._forward_to(target.instret, target.events)
        if self.position() != target:
            raise BadInput(f"cannot reach instruction {target.instret}, event "
                           f"{target.events} again (reached {tuple(self.position())})")

    def _forward_to(self, instret: int, events: int) -> None:
        """Run to the first moment with `instret`, then on through the events at it
        until the log holds `events`."""
        m = self.machine
        if self.position().instret < instret:
            self._run([AtInstret(instret)])
        while len(m.events) < events:
            seq = len(m.events)
            stop = self._run([_AtSeq(seq=seq), _AtSeqX(seq=seq)])
            if stop is not Stop.EVENT:
                raise BadInput(f"cannot reach event #{seq} again: the run ended "
                               f"({stop.value})")

    # -- backward moves ---------------------------------------------------------------
    def _step_before(self, now: Position) -> tuple[Position, MachineSnapshot | None]:
        """The last moment before `now` that single steps reach from the first moment
        one instruction before it, with a snapshot of it where snapshots are cheap
        (the host tracks written pages), so that no second re-execution is needed."""
        back = 1
        while True:
            instret = max(now.instret - back, self.start.instret)
            snap = self.snaps[0] if instret == self.start.instret else \
                self._snapshot_before(Position(instret, 0))
            self._restore(snap)
            if self.position().instret < instret:
                self._run([AtInstret(instret)])
            if self.position() < now or instret == self.start.instret:
                break
            back *= 16                   # a run that could not stop short of `now`
        cheap = self.store.tracked
        last = self.position()
        last_snap = take_snapshot(self.machine, self.store) if cheap else None
        for _ in range(MAX_STEPS_TO_TARGET):
            r = self.machine.step_machine()
            p = self.position()
            if p >= now or r.stop is Stop.HALT:
                break
            last = p
            last_snap = take_snapshot(self.machine, self.store) if cheap else None
        return last, last_snap

    @_backward
    def step_back(self, n: int = 1) -> ReverseResult:
        """Back `n` single steps: to the moment a forward step left `n` steps ago."""
        t0 = time.perf_counter()
        if n < 1:
            raise BadInput(f"cannot step back {n} instructions")
        now = self.position()
        begin = False
        snap: MachineSnapshot | None = None
        for _ in range(n):
            if now <= self.start:
                begin = True
                break
            now, snap = self._step_before(now)
        if snap is not None and self._pos(snap) == now:
            self._restore(snap)
        else:
            self.goto(now)
        return ReverseResult(now, self.machine.hart.pc, begin,
                             seconds=time.perf_counter() - t0)

    @_backward
    def back_to_event(self, seq: int) -> ReverseResult:
        """To the moment right after event #seq (as run_until_event leaves it)."""
        t0 = time.perf_counter()
        if not 0 <= seq < len(self.machine.events):
            raise BadInput(f"no event #{seq} so far ({len(self.machine.events)} events)")
        e = self.machine.events[seq]
        if seq + 1 <= self.start.events:
            raise BadInput(self._before_start(f"event #{seq}"))
        snap = max((s for s in self.snaps if s.events <= seq), key=self._pos)
        self._restore(snap)
        self._forward_to(e.instret, seq + 1)
        return ReverseResult(self.position(), self.machine.hart.pc, event=e,
                             seconds=time.perf_counter() - t0)

    @_backward
    def back_to_instret(self, instret: int) -> ReverseResult:
        """To the first moment with `instret` (as run_until_instret leaves it)."""
        t0 = time.perf_counter()
        if instret < self.start.instret:
            raise BadInput(self._before_start(f"instruction {instret}"))
        self._restore(self._snapshot_before(Position(instret, 0)))
        self._forward_to(instret, 0)
        return ReverseResult(self.position(), self.machine.hart.pc,
                             seconds=time.perf_counter() - t0)

    @_backward
    def back_to_trap(self, match: Callable[[Event], bool] | None = None) -> ReverseResult:
        """To the moment right after the latest trap (or xRET/event `match` accepts)
        before now; to the start of the history (begin=True) if there is none."""
        from ..machine.events import TrapEvent
        t0 = time.perf_counter()
        now = self.position()
        log = self.machine.events
        accept = match or (lambda e: isinstance(e, TrapEvent))
        for seq in range(len(log) - 1, -1, -1):
            e = log[seq]
            if Position(e.instret, seq + 1) < now and accept(e) \
                    and Position(e.instret, seq + 1) >= self.start:
                r = self.back_to_event(seq)
                r.seconds = time.perf_counter() - t0
                return r
        self.goto(self.start)
        return ReverseResult(self.start, self.machine.hart.pc, begin=True,
                             seconds=time.perf_counter() - t0)

    @_backward
    def back_to_breakpoint(self, addrs: Iterable[int]) -> ReverseResult:
        """To the latest moment before now at which pc was one of `addrs`, about to
        execute it (gdb's reverse-continue); the start of the history if none."""
        t0 = time.perf_counter()
        bps = set(addrs)
        now = self.position()
        m = self.machine
        keys = [self._pos(s) for s in self.snaps]
        hi = bisect.bisect_left(keys, now)
        for j in range(hi - 1, -1, -1):
            end = keys[j + 1] if j + 1 < len(keys) and keys[j + 1] < now else now
            hits = self._hits(self.snaps[j], end, bps)
            if hits:
                self.goto(hits[-1])
                return ReverseResult(hits[-1], m.hart.pc, seconds=time.perf_counter() - t0)
        self.goto(self.start)
        return ReverseResult(self.start, m.hart.pc, begin=True,
                             seconds=time.perf_counter() - t0)

    def _hits(self, snap: MachineSnapshot, end: Position, bps: set[int]) -> list[Position]:
        """Moments in [snap, end) at which pc is in bps."""
        m = self.machine
        self._restore(snap)
        hits: list[Position] = []
        conds = [AtInstret(end.instret)]
        for a in bps:
            for hart in m.harts:
                hart.set_breakpoint(a)
        try:
            while self.position().instret < end.instret:
                p = self.position()
                if m.hart.pc in bps and p < end and (not hits or hits[-1] != p):
                    hits.append(p)
                self._replaying = True
                try:
                    r = m.run(until=conds)     # type: ignore[arg-type]
                finally:
                    self._replaying = False
                if r.stop not in (Stop.BREAKPOINT, Stop.EVENT, Stop.BUDGET):
                    break
        finally:
            for a in bps:
                if a not in m.breakpoints:
                    for hart in m.harts:
                        hart.set_breakpoint(a, False)
        for _ in range(MAX_STEPS_TO_TARGET):
            p = self.position()
            if p >= end:
                break
            if m.hart.pc in bps and (not hits or hits[-1] != p):
                hits.append(p)
            if m.step_machine().stop is Stop.HALT:
                break
        return hits
