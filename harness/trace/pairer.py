"""System calls paired with their returns by the native core (harness/native/pairer.c).

The pairer follows the rules harness/trace/flow.py describes over raw event records
and says what it concluded as actions, one tuple each (ACTION's fields, named by the
positions below), in the order flow.py must apply them to its SyscallRecords and notes.
"""

from __future__ import annotations

import ctypes
import struct
import weakref
from dataclasses import dataclass
from enum import IntEnum
from functools import cache

from ..native import load_library
from .events import RECORD
from .syscalls import CallSpec, signal_names

__all__ = ["ACTION", "ALARM", "CALL", "Op", "Paired", "Pairer", "call_flags", "catchable_signals"]

ACTION = struct.Struct("<IIqqqQQ")
"""struct pair_action: op, c, seq, id, ret, x, y (what each holds: Op)."""
OP, C, SEQ, ID, RET, X, Y = range(7)
CALL = struct.Struct("<qQQQQQ6Q")
"""struct pair_call: seq, tid, instret, epc, satp, number (a7), a0..a5."""
CALL_SEQ, CALL_TID, CALL_INSTRET, CALL_EPC, CALL_SATP, CALL_NUMBER, CALL_ARGS = range(7)
ALARM = 0
"""The signal number a handler started by a timer tick (an alarm) goes by."""


class Op(IntEnum):
    """pairer.c's ACT_* (see there for what each field holds)."""

    RETURN = 1        # call #id returned at seq with ret, x its instret (c: 1 a new image)
    NORETURN = 2      # call #id will not return (c: 1 it is complete at seq)
    FORGET = 3        # call #id is waited for no more: its thread went away
    CHILD = 4         # the sret at seq is fork #id's child's first return
    SBI = 5           # the ecall from S at seq is an SBI call (x: a7, y: a6)
    ENTER = 6         # the sret at seq first enters thread (y: satp, c: tid)
    DISOWN = 7        # address space y has no process any more (id: see Paired)
    MOVE = 8          # exec: the process of address space x now owns y (id: see Paired)
    SIG_ENTER = 9     # the sret at seq enters the handler for signal c (0: an alarm)
    SIG_BACK = 10     # the sret at seq is back from the handler for signal c
    SIG_RETURNED = 11  # the trap at seq is how the handler for signal c returned


# pairer.c's CALL_* bits
NORETURN, FORK, EXEC, KILL, SIGALARM, SIGRETURN = (1 << i for i in range(6))


def call_flags(spec: CallSpec) -> int:
    """What the pairing rules need to know of a call."""
    flags = NORETURN if spec.noreturn else 0
    flags |= {"fork": FORK, "exec": EXEC, "sigreturn": SIGRETURN}.get(spec.name, 0)
    if spec.name == "kill" and any(a.name == "signum" for a in spec.args):
        flags |= KILL
    if spec.name == "sigalarm" and len(spec.args) == 2:
        flags |= SIGALARM
    return flags


@dataclass(slots=True)
class Paired:
    """What one run of the pairer concluded: the calls made (CALL structs, numbered
    on from the calls of earlier runs; `calls(i, j)` unpacks some), the actions
    (ACTION tuples) in the order they apply, and `upto`: the calls made (in all runs)
    by the first DISOWN or MOVE, each of which gives in ID the count by the next one,
    or by the run's end. A call's record takes its process from the owner of its
    address space at its ecall."""

    raw_calls: bytes
    actions: list[tuple[int, ...]]
    upto: int

    def raw(self, i: int, j: int) -> bytes:
        """The CALL structs of this run's calls i to j (not included)."""
        return self.raw_calls[i * CALL.size:j * CALL.size]

    def calls(self, i: int, j: int) -> list[tuple[int, ...]]:
        """This run's calls i to j (not included), as CALL tuples."""
        return list(CALL.iter_unpack(self.raw(i, j)))


def _unpack(layout: struct.Struct, at: int | None, count: int) -> list[tuple[int, ...]]:
    if not count or at is None:
        return []
    return list(layout.iter_unpack(ctypes.string_at(at, count * layout.size)))


@cache
def catchable_signals() -> dict[int, str]:
    """The signals a handler can catch (abi.h's, but SIGKILL and SIGSTOP), by number."""
    return {n: name for n, name in signal_names().items()
            if name not in ("SIGKILL", "SIGSTOP")}


class Pairer:
    def __init__(self, specs: dict[int, CallSpec], xlen: int) -> None:
        self._lib = load_library()
        flags = bytearray(max(specs, default=-1) + 1)
        for number, spec in specs.items():
            if number >= 0:
                flags[number] = call_flags(spec)
        catchable = sum(1 << n for n in catchable_signals() if 0 <= n < 64)
        handle = self._lib.pairer_new(bytes(flags), len(flags), catchable, xlen)
        if not handle:
            raise MemoryError("no memory for a trap flow's call pairing")
        self._p = handle
        self._out = (ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p(),
                     ctypes.c_size_t(), ctypes.c_int64())
        weakref.finalize(self, self._lib.pairer_free, handle)

    def run(self, raw: bytes, first: int, tid: int = 0) -> Paired:
        """Pair the events `raw` holds (whole records, the first being #first), every
        event from or to U made by thread `tid` (0: not known)."""
        calls, ncalls, acts, nacts, upto = self._out
        if self._lib.pairer_run(self._p, raw, len(raw) // RECORD.size, first, tid,
                                *(ctypes.byref(x) for x in self._out)) < 0:
            raise MemoryError("no memory for a trap flow's call pairing")
        raw_calls = ctypes.string_at(calls.value, ncalls.value * CALL.size) \
            if ncalls.value and calls.value is not None else b""
        return Paired(raw_calls, _unpack(ACTION, acts.value, nacts.value), upto.value)

    def own(self, satp: int, pid: int) -> None:
        """Address space satp belongs to process pid."""
        if self._lib.pairer_own(self._p, satp, pid) < 0:
            raise MemoryError("no memory for a trap flow's call pairing")
