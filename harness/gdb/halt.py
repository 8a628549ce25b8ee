"""Stopping a running machine from a debugger, without disturbing what it computes.

A stop must land on a block boundary the core chose to be at: there the count of
retired instructions is exact and every instruction the core intercepts (CSR access,
xRET, wfi, fence) has been handled by it. `Machine.request_stop()` sets the core's stop
reason, which the core's per-instruction hooks also read: raised in the middle of a
block, it makes the rest of that block run without the core (an `sret` then changes
privilege behind its back and records no event). So the debugger stops the machine the
way an exhausted instruction budget does instead: the budget drops to zero and the core
stops at the start of the next block, exactly as for ``--max-insns``.

`Halter.run()` brackets `Machine.run()`; `request()` may be called from any thread (the
socket reader on Ctrl-C, a debugger attaching). The reasons collected during a run tell
the caller why a Stop.BUDGET result happened. (Watchpoints stop in the core itself,
before the access: watch.py.)
"""

from __future__ import annotations

import threading
import time
from enum import Enum

from ..abi.csr import Priv
from ..machine import Machine, RunResult, Stop

__all__ = ["Halter", "StopCause"]

UNLIMITED = (1 << 64) - 1
REPOKE = 0.05   # seconds


class StopCause(Enum):
    INTERRUPT = "interrupt"     # gdb sent Ctrl-C, or the client went away
    ATTACH = "attach"           # a debugger connected to a free-running machine


class Halter:
    def __init__(self, machine: Machine) -> None:
        self._m = machine
        self._lock = threading.Lock()
        self._running = False
        self._poked = False
        self._causes: set[StopCause] = set()
        self._runner: threading.Thread | None = None
        self._repoking = False
        self.runs = 0       # Machine.run calls made through this halter

    def request(self, cause: StopCause) -> None:
        """Stop the machine at its next block boundary (or before it starts, if a run
        is about to begin). Thread-safe."""
        with self._lock:
            self._causes.add(cause)
            if not self._running:
                return
            self._poke()
            if threading.current_thread() is not self._runner and not self._repoking:
                # From another thread, the core may have been recomputing its deadline
                # from the old budget at that very moment and overwrite ours: poke
                # again until the run ends.
                self._repoking = True
                threading.Thread(target=self._repoke, args=(self.runs,),
                                 name="privlab-gdb-halt", daemon=True).start()

    def _repoke(self, run: int) -> None:
        while True:
            time.sleep(REPOKE)
            with self._lock:
                if not self._running or self.runs != run:
                    self._repoking = False
                    return
                self._poke()

    def _poke(self) -> None:
        state = self._m.hart.state
        state.budget = 0
        self._m.hart.update()
        if self._m.smp > 1:
            # Between turns the budget poke would only end the turn: the schedule
            # looks at the machine's own stop request before every turn.
            self._m.request_stop()
        self._poked = True

    def pending(self) -> bool:
        with self._lock:
            return bool(self._causes)

    def take(self) -> set[StopCause]:
        """The causes requested since the last take()."""
        with self._lock:
            causes, self._causes = self._causes, set()
            return causes

    def run(self, max_insns: int | None) -> RunResult:
        """Machine.run(max_insns), unless a stop was requested before it began (then an
        immediate Stop.USER result with nothing executed)."""
        with self._lock:
            if self._causes:
                return self._idle_result()
            self._running = True
            self._runner = threading.current_thread()
            self.runs += 1
        try:
            return self._m.run(max_insns=max_insns)
        finally:
            with self._lock:
                self._running = False
                if self._poked:
                    # A request that came in after Machine.run restored the budget left
                    # it at zero; restore it again (step() and run() resync the core).
                    self._m.hart.state.budget = UNLIMITED
                    self._m.cancel_stop()
                    self._poked = False

    def _idle_result(self) -> RunResult:
        h = self._m.hart
        return RunResult(stop=Stop.USER, pc=h.pc, priv=Priv(h.priv), instret=h.state.instret)
