"""System calls are paired with their returns natively (harness/native/pairer.c), in
runs of any length: a flow fed a whole run at once, one event at a time, or in chunks
that cut anywhere, pairs every call the same way and notes the same events (forks and
their children, exits, exec, signal and alarm handlers, threads)."""

from __future__ import annotations

import random

import pytest

from privlab.api import Session
from privlab.build.images import Images
from privlab.machine.events import RECORD
from privlab.trace.flow import Flow
from privlab.trace.syscalls import SyscallRecord


def _call(c: SyscallRecord) -> tuple[object, ...]:
    """All a call is but its process (the session's flow names processes from the
    kernel's table; a flow fed events alone cannot)."""
    return (c.number, c.args, c.entry_seq, c.entry_instret, c.epc, c.satp, c.tid, c.ret,
            c.exit_seq, c.exit_instret, c.outcome, c.child_seq)


def _outcome(flow: Flow) -> tuple[object, ...]:
    return ([(_call(c), c.pid) for c in flow.syscalls], flow.notes, flow.signal_notes,
            flow.pids, flow.calls_made)


RUNS = [
    ("forktree", ["2"]),                                   # fork, exit, waitpid
    ("sigtests", ["handler_may_return", "handler_blocks_its_signal"]),
    ("lab_alarm", ["count", "tok", "1", "400000"]),        # alarm handlers
    ("threaddemo", []),                                     # threads
    ("usertests", []),                                      # exec, a bit of everything
]


@pytest.mark.parametrize("program, args", RUNS, ids=[p for p, _ in RUNS])
def test_any_chunking_pairs_the_same(images: Images, program: str, args: list[str]) -> None:
    s = Session.boot(program, args, images=images, bundled_disk=False)
    s.run(20_000_000)
    whole = s.flow
    whole.catch_up()
    assert whole.syscalls, "the run made system calls"
    assert any(c.outcome == "returned" for c in whole.syscalls)
    log, start = whole.log, whole.start
    raw = b"".join(chunk for _, chunk in log.raw_chunks(start))

    def fresh_flow() -> Flow:
        return Flow(log, whole.specs, whole.xlen, whole.sbi, start=start)

    at_once = fresh_flow()
    at_once.catch_up()
    one_by_one = fresh_flow()
    for seq, rec in enumerate(RECORD.iter_unpack(raw), start):
        one_by_one.feed(seq, rec)
    rng = random.Random(7)
    chunked = fresh_flow()
    at, size = 0, RECORD.size
    while at < len(raw):
        n = rng.choice((1, 2, 3, 17, 100, 1000))
        chunked.feed_raw(start + at // size, raw[at:at + n * size])
        at += n * size
    assert _outcome(one_by_one) == _outcome(at_once) == _outcome(chunked)
    assert [_call(c) for c in at_once.syscalls] == [_call(c) for c in whole.syscalls]
    s.close()


def test_a_flow_that_keeps_nothing_hands_every_call_over_once(images: Images) -> None:
    """retain=False (streaming): each call is in `fresh` at its ecall and again at its
    return, then the flow forgets it; what it saw is what a retaining flow keeps."""
    s = Session.boot("forktree", ["2"], images=images, bundled_disk=False)
    s.run(20_000_000)
    whole = s.flow
    whole.catch_up()
    raw = b"".join(chunk for _, chunk in whole.log.raw_chunks(whole.start))
    lean = Flow(whole.log, whole.specs, whole.xlen, whole.sbi, start=whole.start,
                retain=False)
    lean.feed_raw(whole.start, raw)
    made = {c.entry_seq: c for c in lean.fresh.values()}
    assert [_call(c) for _, c in sorted(made.items())] == [_call(c) for c in whole.syscalls]
    ended = {seq for seq, c in lean.fresh.items() if c.exit_seq == seq}
    assert ended == {c.exit_seq for c in whole.syscalls if c.exit_seq is not None}
    assert lean.syscalls == []
    # what is still waited for: calls that never returned, or forks whose child has
    # not run yet
    assert all(c.outcome == "pending" or c.child_seq is None
               for c in lean._waiting.values())
    s.close()
