"""A trap flow keeps its system calls in a CallList (harness/trace/calllist.py): the
pairer's tuples, made into SyscallRecords only when read. What is read is the same
whenever it is read: before or after the call returned, before or after its process
was named, all of the calls or a window of them."""

from __future__ import annotations

from collections import Counter

import pytest

from privlab.api import Session
from privlab.build.images import Images
from privlab.inspect import SyscallSummary
from privlab.machine.events import RECORD
from privlab.trace.calllist import CallList
from privlab.trace.flow import Flow, FlowFilter
from privlab.trace.pairer import ACTION, CALL, Op
from privlab.trace.syscalls import SyscallRecord


def _call(c: SyscallRecord) -> tuple[object, ...]:
    return (c.number, c.args, c.entry_seq, c.entry_instret, c.epc, c.satp, c.tid, c.ret,
            c.exit_seq, c.exit_instret, c.outcome, c.child_seq, c.pid, c.process)


def made(calls: CallList) -> int:
    return sum(1 for c in calls._made if c is not None)


@pytest.fixture(scope="module")
def traced(images: Images) -> Session:
    s = Session.boot("forktree", ["2"], images=images, bundled_disk=False)
    s.run(20_000_000)
    return s


def test_calls_are_made_into_records_only_when_read(images: Images) -> None:
    # yield, get_time: 5 ms of guest time at 1 ns per instruction is thousands of calls
    s = Session.boot("sleep", ["5"], images=images, bundled_disk=False, icount_shift=0)
    s.run(50_000_000)
    ran = s.flow
    flow = Flow(ran.log, ran.specs, ran.xlen, ran.sbi, start=ran.start)
    flow.catch_up()
    flow.resolve_pids(s.tracer.process_roots())
    calls = flow.syscalls
    assert isinstance(calls, CallList) and len(calls) > 1000
    assert made(calls) <= 2          # the exit (which never returns) and what it ends
    summary = SyscallSummary(calls)
    # a record per call number, for its name; the counts come from the columns
    assert made(calls) <= len(set(calls._numbers)) + 2
    assert summary.made == SyscallSummary(list(ran.syscalls)).made
    rows = list(flow.rows(FlowFilter(seq=(len(flow) - 10, None))))
    assert made(calls) <= len(set(calls._numbers)) + 2 + 10
    assert [r.syscall for r in rows if r.syscall is not None]
    # named when the process table was read, made or not then
    assert [_call(c) for c in calls] == [_call(c) for c in ran.syscalls]
    assert all(c.pid is not None for c in calls)
    s.close()


def test_records_read_mid_run_agree_with_records_read_at_the_end(traced: Session) -> None:
    whole = traced.flow
    log, start = whole.log, whole.start
    raw = b"".join(chunk for _, chunk in log.raw_chunks(start))
    half = len(raw) // RECORD.size // 2 * RECORD.size

    early = Flow(log, whole.specs, whole.xlen, whole.sbi, start=start)
    early.feed_raw(start, raw[:half])
    pending = [c for c in early.syscalls if c.outcome == "pending"]   # made now
    assert pending, "some call is waiting for its return at the half"
    early.feed_raw(start + half // RECORD.size, raw[half:])
    late = Flow(log, whole.specs, whole.xlen, whole.sbi, start=start)
    late.catch_up()
    assert [_call(c) for c in early.syscalls] == [_call(c) for c in late.syscalls]
    assert any(c.outcome != "pending" for c in pending)     # their returns reached them
    # and the call at each event is the same record whichever way it was found
    for c in late.syscalls:
        assert late._call_at(c.entry_seq) is c
        if c.exit_seq is not None:
            assert late._call_at(c.exit_seq) is c


SV39 = 8 << 60   # satp's MODE: bit 63 set, which the columns must read unsigned


def _calls(*entries: tuple[int, int, int]) -> bytes:
    """CALL structs: (seq, satp, number) each, the rest made up."""
    return b"".join(CALL.pack(seq, 0, 100 + seq, 0x1000 + 4 * seq, satp, number,
                              seq, 2, 3, 4, 5, 6) for seq, satp, number in entries)


def _return(number: int, seq: int, ret: int, image: int = 0) -> tuple[int, ...]:
    return ACTION.unpack(ACTION.pack(Op.RETURN, image, seq, number, ret, 200 + seq, 0))


def _returned(calls: CallList, act: tuple[int, ...]) -> None:
    """What the flow's loop does with a RETURN action."""
    rets, exits, records = calls.returns()
    rets[act[3]], exits[act[3]] = act[4], act
    record = records[act[3]]
    if record is not None:
        record.ret, record.exit_seq, record.exit_instret = act[4], act[2], act[5]
        record.outcome = "new image" if act[1] else "returned"


def test_a_name_given_later_reaches_the_calls_made_before_it_only() -> None:
    calls = CallList({}, 64)
    calls.add(_calls((1, SV39 | 5, 64), (3, SV39 | 5, 64)), {})
    first = calls[0]                                     # made before it is named
    calls.name_unnamed(lambda satp: (7, "sh") if satp == SV39 | 5 else None)
    calls.add(_calls((9, SV39 | 5, 64), (11, 6, 93)), {})
    assert [(c.pid, c.process) for c in calls] == [(7, "sh"), (7, "sh"), (None, None),
                                                   (None, None)]
    assert first.pid == 7
    calls.name_unnamed(lambda satp: {SV39 | 5: (8, "init"), 6: (9, "cat")}[satp])
    assert [c.pid for c in calls] == [7, 7, 8, 9]
    calls.add(_calls((12, SV39 | 5, 64)), {SV39 | 5: (8, "init")})     # owned when made
    assert calls[-1].pid == 8


def test_a_return_reaches_a_call_made_before_or_after_it() -> None:
    calls = CallList({}, 64)
    calls.add(_calls((1, 5, 64), (3, 5, 221), (5, 5, 93)), {})
    early = calls[0]
    _returned(calls, _return(0, 2, 14))
    _returned(calls, _return(1, 4, 0, image=1))
    assert (early.ret, early.exit_seq, early.exit_instret, early.outcome) == \
        (14, 2, 202, "returned")
    assert (calls[1].ret, calls[1].exit_seq, calls[1].outcome) == (0, 4, "new image")
    assert (calls[2].ret, calls[2].outcome) == (None, "pending")
    assert calls.kinds() == Counter({(64, 14): 1, (221, 0): 1, (93, None): 1})


def test_a_call_list_reads_as_a_list() -> None:
    calls = CallList({}, 64)
    calls.add(_calls((1, 5, 64), (3, 5, 172), (8, 5, 64)), {})
    assert len(calls) == 3 and bool(calls) and not CallList({}, 64)
    assert [c.entry_seq for c in calls[1:]] == [3, 8] and calls[-1].entry_seq == 8
    assert calls[-1] is calls[2]
    assert calls.first_of(64) is calls[0] and calls.first_of(172) is calls[1]
    assert [calls.made_at(seq) for seq in (1, 2, 3, 8, 9)] == [0, None, 1, 2, None]
    assert calls[0].args == (1, 2, 3, 4, 5, 6) and calls[0].epc == 0x1004
    assert (calls[0].entry_instret, calls[0].satp, calls[0].tid) == (101, 5, 0)
    with pytest.raises(IndexError):
        calls[3]
    with pytest.raises(ValueError):
        calls.first_of(93)
