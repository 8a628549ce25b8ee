"""System calls paired with their returns by the trace library's C (harness/trace/pairer.c).

The pairer follows the rules harness/trace/flow.py describes over raw event records
and says what it concluded as actions, one tuple each (ACTION's fields, named by the
positions below), in the order flow.py must apply them to its SyscallRecords and notes.
"""

from __future__ import annotations

import ctypes
import struct
import weakref
from dataclasses import dataclass
from functools import cache

from ..abi.pairing import ACTION, ACTION_FIELDS, ALARM, CALL, CALL_FIELDS, CallKind, Op
from ..machine.events import RECORD
from .library import load_trace_library
from .syscalls import CallSpec, signal_names

__all__ = ["ACTION", "ALARM", "CALL", "Op", "Paired", "Pairer", "call_flags", "catchable_signals"]

OP, C, SEQ, ID, RET, X, Y = range(len(ACTION_FIELDS))
"""Positions in an ACTION tuple (abi/pairing.py says what each holds, by Op)."""
CALL_SEQ, CALL_TID, CALL_INSTRET, CALL_EPC, CALL_SATP, CALL_NUMBER, CALL_ARGS = \
    range(len(CALL_FIELDS))
"""Positions in a CALL tuple; the six arguments are the last six values."""


def call_flags(spec: CallSpec) -> int:
    """What the pairing rules need to know of a call."""
    flags = CallKind.NORETURN if spec.noreturn else CallKind(0)
    flags |= {"fork": CallKind.FORK, "exec": CallKind.EXEC,
              "sigreturn": CallKind.SIGRETURN}.get(spec.name, CallKind(0))
    if spec.name == "kill" and any(a.name == "signum" for a in spec.args):
        flags |= CallKind.KILL
    if spec.name == "sigalarm" and len(spec.args) == 2:
        flags |= CallKind.SIGALARM
    return int(flags)


@dataclass(slots=True)
class Paired:
    """What one run of the pairer concluded: the calls made (CALL structs, numbered
    on from the calls of earlier runs; `calls(i, j)` unpacks some), the actions
    (ACTION structs; `actions` as tuples) in the order they apply, and `upto`: the
    calls made (in all runs) by the first DISOWN or MOVE, each of which gives in ID the
    count by the next one, or by the run's end. A call's record takes its process from
    the owner of its address space at its ecall."""

    raw_calls: bytes
    raw_actions: bytes       # the ACTION structs, unpacked when `actions` is first read
    upto: int
    _actions: list[tuple[int, ...]] | None = None

    @property
    def actions(self) -> list[tuple[int, ...]]:
        if self._actions is None:
            self._actions = list(ACTION.iter_unpack(self.raw_actions))
        return self._actions

    def has(self, ops: frozenset[int]) -> bool:
        """Whether any of the run's actions is one of these ops."""
        words = ACTION.size // 4           # op is each record's first 32-bit word
        return not ops.isdisjoint(memoryview(self.raw_actions).cast("I")[::words])

    def raw(self, i: int, j: int) -> bytes:
        """The CALL structs of this run's calls i to j (not included)."""
        return self.raw_calls[i * CALL.size:j * CALL.size]

    def calls(self, i: int, j: int) -> list[tuple[int, ...]]:
        """This run's calls i to j (not included), as CALL tuples."""
        return list(CALL.iter_unpack(self.raw(i, j)))


def _copy(at: int | None, count: int, layout: struct.Struct) -> bytes:
    """`count` records of `layout` at address `at` (the pairer's, until its next run)."""
    return ctypes.string_at(at, count * layout.size) if count and at is not None else b""


@cache
def catchable_signals() -> dict[int, str]:
    """The signals a handler can catch (abi.h's, but SIGKILL and SIGSTOP), by number."""
    return {n: name for n, name in signal_names().items()
            if name not in ("SIGKILL", "SIGSTOP")}


class Pairer:
    def __init__(self, specs: dict[int, CallSpec], xlen: int) -> None:
        self._lib = load_trace_library()
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
        return Paired(_copy(calls.value, ncalls.value, CALL),
                      _copy(acts.value, nacts.value, ACTION), upto.value)

    def own(self, satp: int, pid: int) -> None:
        """Address space satp belongs to process pid."""
        if self._lib.pairer_own(self._p, satp, pid) < 0:
            raise MemoryError("no memory for a trap flow's call pairing")
