"""The system calls a trap flow keeps (harness/trace/flow.py), made into SyscallRecords
only when they are read.

A traced run makes a hundred thousand calls, and what is shown of it is mostly counts
(the syscall summary) and a window of rows: building a record for every call as the
pairer (harness/native/pairer.c) reports it was a third of the cost of tracing. So a
CallList keeps each call as the pairer's CALL tuple, with what the flow learns later
(its owner, its return) in columns beside it, and makes a call's record the first time
something reads it; from then on the record is the call, and what the flow learns is
written to both. Read as a sequence it is a list of SyscallRecords.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from itertools import compress, repeat
from operator import is_
from typing import overload

from .pairer import (
    CALL,
    CALL_ARGS,
    CALL_EPC,
    CALL_INSTRET,
    CALL_NUMBER,
    CALL_SATP,
    CALL_SEQ,
    CALL_TID,
    RET,
    SEQ,
    C,
    X,
)
from .syscalls import CallSpec, SyscallRecord

__all__ = ["CallList", "record_of", "set_return"]

Owner = tuple[int, str]
_WORDS = CALL.size // 8   # a CALL struct is so many 64-bit words, each a field
_OUTCOMES = ("returned", "new image")   # by a RETURN action's C (1: into a new image)


def record_of(t: tuple[int, ...], specs: dict[int, CallSpec], xlen: int,
              who: Owner | None) -> SyscallRecord:
    """The record of the pairer's CALL tuple `t`, made by process `who` (if known)."""
    number = t[CALL_NUMBER]
    return SyscallRecord(number, specs.get(number), t[CALL_ARGS:], t[CALL_SEQ],
                         t[CALL_INSTRET], t[CALL_EPC], t[CALL_SATP], xlen,
                         who[0] if who else None, who[1] if who else None, t[CALL_TID])


def set_return(call: SyscallRecord, act: tuple[int, ...]) -> None:
    """What the pairer's RETURN action `act` says of `call`."""
    call.ret, call.exit_seq, call.exit_instret = act[RET], act[SEQ], act[X]
    call.outcome = _OUTCOMES[bool(act[C])]


class CallList(Sequence[SyscallRecord]):
    def __init__(self, specs: dict[int, CallSpec], xlen: int) -> None:
        self._specs = specs
        self._xlen = xlen
        self._raw = bytearray()                 # the pairer's CALL structs, one per call
        self._numbers: list[int] = []
        self._seqs: list[int] = []       # each call's ecall, in order (calls are numbered so)
        self._owners: list[Owner | None] = []            # (pid, name) of the caller
        # Address spaces with calls whose process is not known yet, and the names given
        # them later: satp -> [(n, owner)], each naming the calls before call #n that
        # had none (the first such entry for a call is its name).
        self._unnamed: set[int] = set()
        self._late: dict[int, list[tuple[int, Owner]]] = {}
        self._rets: list[int | None] = []
        self._exits: list[tuple[int, ...] | None] = []   # the pairer's RETURN action
        self._made: list[SyscallRecord | None] = []
        self._made_count = 0

    def add(self, raw: bytes, owners: dict[int, Owner]) -> None:
        """Calls made (the pairer's CALL structs, in order), each owned by its
        address space's process in `owners` now, if it has one there. The columns
        are read from the structs' words in C's loops (memoryview), and a call is
        unpacked whole only when it is made into a record."""
        n = len(raw) // CALL.size
        self._raw += raw
        words, signed = memoryview(raw).cast("Q"), memoryview(raw).cast("q")
        self._numbers.extend(words[CALL_NUMBER::_WORDS].tolist())
        self._seqs.extend(signed[CALL_SEQ::_WORDS].tolist())
        satps = words[CALL_SATP::_WORDS].tolist()
        new_owners = list(map(owners.get, satps))
        self._owners.extend(new_owners)
        self._unnamed.update(compress(satps, map(is_, new_owners, repeat(None))))
        self._rets.extend(repeat(None, n))
        self._exits.extend(repeat(None, n))
        self._made.extend(repeat(None, n))

    def made_at(self, seq: int) -> int | None:
        """The number of the call whose ecall is event #seq, if one is."""
        i = bisect_left(self._seqs, seq)
        return i if i < len(self._seqs) and self._seqs[i] == seq else None

    def returns(self) -> tuple[list[int | None], list[tuple[int, ...] | None],
                               list[SyscallRecord | None]]:
        """The columns a return writes, for the flow's loop over a run's events: call
        #n returned by the pairer's RETURN action `act` when rets[n] = act[RET];
        exits[n] = act; and, if made[n] is a record, set_return(made[n], act)."""
        return self._rets, self._exits, self._made

    def name_unnamed(self, owner: Callable[[int], Owner | None]) -> None:
        """Give each call whose process is not known the one `owner(satp)` names
        (asked once per address space)."""
        named = {}
        for satp in self._unnamed:
            who = owner(satp)
            if who is not None:
                named[satp] = who
                self._late.setdefault(satp, []).append((len(self._seqs), who))
        self._unnamed.difference_update(named)
        if self._made_count and named:
            for call in self._made:
                if call is not None and call.pid is None and call.satp in named:
                    call.pid, call.process = named[call.satp]

    def kinds(self) -> Counter[tuple[int, int | None]]:
        """How many calls were made of each (number, return value) (None: no return)."""
        return Counter(zip(self._numbers, self._rets, strict=True))

    def first_of(self, number: int) -> SyscallRecord:
        """The first call made with this number (ValueError if none was)."""
        return self[self._numbers.index(number)]

    def _make(self, i: int) -> SyscallRecord:
        t = CALL.unpack_from(self._raw, i * CALL.size)
        who, exit = self._owners[i], self._exits[i]
        if who is None:
            for upto, late in self._late.get(t[CALL_SATP], ()):
                if i < upto:
                    who = late
                    break
        call = record_of(t, self._specs, self._xlen, who)
        if exit is not None:
            set_return(call, exit)
        self._made[i] = call
        self._made_count += 1
        return call

    def __len__(self) -> int:
        return len(self._seqs)

    @overload
    def __getitem__(self, i: int) -> SyscallRecord: ...
    @overload
    def __getitem__(self, i: slice) -> list[SyscallRecord]: ...

    def __getitem__(self, i: int | slice) -> SyscallRecord | list[SyscallRecord]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self._seqs)))]
        if i < 0:
            i += len(self._seqs)
        if not 0 <= i < len(self._seqs):
            raise IndexError("call index out of range")
        call = self._made[i]
        return call if call is not None else self._make(i)

    def __iter__(self) -> Iterator[SyscallRecord]:
        made = self._made
        for i in range(len(self._seqs)):
            call = made[i]
            yield call if call is not None else self._make(i)

    def __bool__(self) -> bool:
        return bool(self._seqs)

    def __repr__(self) -> str:
        return f"CallList({len(self._seqs)} calls, {self._made_count} made)"
