"""A tracer attached to a machine: the trap flow, syscalls and their memory arguments.

Two ways to run, chosen by `capture`:

- capture=False: nothing extra happens while the guest runs; the flow is computed
  from the event log afterwards (or whenever it is read). Pointer arguments are read
  only for events the machine happens to be stopped at.
- capture=True: the run also stops at every ecall from U and every xRET (the
  `conditions()` below, which never end a run), so the strings and buffers of every
  call are read at the exact moment, and each call is tied to the kernel's pid.
  Each stop costs a return to Python: use it for teaching-sized programs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..abi.csr import Exc
from ..kernelinfo.mirrors import KernelInfo
from ..machine.events import Event
from ..machine.machine import Machine
from ..machine.rawevents import record_of
from ..machine.until import AfterTrap, AfterXret, Until
from .capture import LiveCapture, is_live
from .flow import Flow
from .sbi import SbiNames
from .syscalls import CallSpec, SyscallRecord

__all__ = ["KernelLoader", "SyscallHook", "Tracer"]

SyscallHook = Callable[[SyscallRecord], None]
KernelLoader = Callable[[], KernelInfo | None]


@dataclass
class _EcallProbe(AfterTrap):
    """Stops at each ecall from U so the tracer can read memory. Ends a run only once
    the tracer has captured as many calls as it was asked to (Session.run then goes
    on without capture)."""

    tracer: Tracer | None = None

    def matches(self, e: Event) -> bool:
        return self.tracer is not None and self.tracer.capture_exhausted


@dataclass
class _XretProbe(AfterXret):
    """Stops at each xRET so the tracer can read what a call returned; never ends a run."""

    def matches(self, e: Event) -> bool:
        return False


class Tracer:
    def __init__(self, machine: Machine, specs: dict[int, CallSpec], *,
                 kernel: KernelLoader | None = None, sbi: SbiNames | None = None,
                 capture: bool = False, capture_limit: int | None = None) -> None:
        """`kernel` returns the kernel's DWARF mirrors (loaded only when first needed);
        with `capture`, at most `capture_limit` calls are captured (None: all)."""
        self.machine = machine
        self.capture = capture
        self.capture_limit = capture_limit
        self.capture_exhausted = False
        self._kernel = kernel or (lambda: None)
        self._flow_args = (specs, sbi, machine.hart.priv)
        self.flow = Flow(machine.events, specs, machine.xlen, sbi, initial=machine.hart.priv)
        self._start = self.flow.start       # the first event analysed, kept across rewinds
        self._live = LiveCapture(machine, self._kernel)
        self._hooks: list[SyscallHook] = []
        self._unsubscribe: Callable[[], None] | None = None
        self._synced = -1
        if capture:
            self._subscribe()

    def _subscribe(self) -> None:
        if self._unsubscribe is None:
            self.flow.catch_up()
            self._unsubscribe = self.machine.events.subscribe(self._on_event)

    def _on_event(self, e: Event) -> None:
        live = self._live if self.capture and is_live(self.machine, e) else None
        done = self.flow.feed(e.seq, record_of(e), live)
        if self.capture_limit is not None and self.flow.calls_made >= self.capture_limit:
            self.capture_exhausted = True
        if done is not None:
            for fn in list(self._hooks):
                fn(done)

    def on_syscall(self, fn: SyscallHook) -> Callable[[], None]:
        """Call fn(call) as each system call completes (returns, or for exit, is made).
        Returns a function that removes fn."""
        self._subscribe()
        self._hooks.append(fn)
        return lambda: self._hooks.remove(fn)

    def conditions(self) -> list[Until]:
        """Extra `until` conditions a run needs for capture (none without it)."""
        if not self.capture:
            return []
        return [_EcallProbe(code=int(Exc.USER_ECALL), interrupt=False, tracer=self), _XretProbe()]

    def stop_capture(self) -> None:
        """Go on without stopping at calls (after `capture_limit` of them)."""
        self.capture = False
        if not self._hooks:
            self.close()

    def ended_capture(self, condition: object) -> bool:
        """Did a run end only because the capture limit was reached?"""
        return isinstance(condition, _EcallProbe)

    def sync(self) -> None:
        """Bring the flow up to date with the log; name processes from the kernel's
        process table where the run could not. If the machine sits right after the
        last event, that one is fed live, so its memory arguments are read."""
        log = self.machine.events
        if self._unsubscribe is None and len(log) > self.flow.next_seq:
            self.flow.catch_up(len(log) - 1)
            last = log[len(log) - 1]
            self.flow.feed(last.seq, record_of(last),
                           self._live if is_live(self.machine, last) else None)
        self.flow.catch_up()
        if self._synced == len(self.machine.events):
            return
        self._synced = len(self.machine.events)
        roots = self.process_roots()
        if roots:
            self.flow.resolve_pids(roots)

    def stream(self) -> Flow:
        """Trace from now on without keeping the run: a flow that keeps no calls nor
        per-event state (fed and stepped by harness/trace/stream.py), and a log that
        keeps only its tail. Rewinding is not possible after this."""
        specs, sbi, _ = self._flow_args
        self.machine.events.keep = False
        self.flow = Flow(self.machine.events, specs, self.machine.xlen, sbi,
                         initial=self.machine.hart.priv, retain=False)
        self._synced = len(self.machine.events)
        return self.flow

    def process_roots(self) -> dict[int, tuple[int, str]]:
        """The kernel's process table now: page-table root -> (pid, name) (empty
        when there is no kernel to read, or it cannot be read)."""
        kernel = self._kernel()
        if kernel is None:
            return {}
        try:
            return kernel.process_roots(self.machine.memory)
        except Exception:   # a kernel mid-boot may hold anything: naming is best effort
            return {}

    def rewind(self) -> None:
        """The machine went back in time (harness/api/timetravel.py): the flow is
        rebuilt from the log as it now is, from the event it first started at (the rows
        before the moment gone back to stay), when next asked for."""
        specs, sbi, initial = self._flow_args
        start = min(self._start, len(self.machine.events))
        self.flow = Flow(self.machine.events, specs, self.machine.xlen, sbi, initial=initial,
                         start=start)
        self._synced = -1
        if self._unsubscribe is not None:
            self.flow.catch_up()

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
