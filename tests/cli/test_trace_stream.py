"""`privlab trace` streams: rows are printed as the run makes them,
the run keeps no event nor call (memory bounded whatever its length), and the rows
are the ones the whole-run flow (Flow.rows) gives."""

from __future__ import annotations

import gc
import re
import subprocess
import sys

import pytest

from privlab.api import Session
from privlab.build.images import Images
from privlab.inspect.calltable import CallsWriter
from privlab.paths import REPO_ROOT
from privlab.theme import make_console
from privlab.trace.flow import FlowFilter, FlowRow
from privlab.trace.stream import HOLD, FlowStream
from privlab.trace.syscalls import SyscallRecord

PRIVLAB = [sys.executable, "-m", "privlab"]
FOREVER = ["--max-insns", "100000000000"]


def _key(r: FlowRow) -> tuple[object, ...]:
    call = r.syscall
    return (r.seq, r.name, r.path, r.returns_from, r.root, r.owner, r.note, r.signal,
            None if call is None else (call.entry_seq, call.pid, str(call)))


def _both(images: Images, program: str, args: list[str], filt: FlowFilter,
          **only: int) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """The rows of one run as Flow.rows gives them at its end, and as FlowStream
    gives them while it runs (`only`: pid= or satp=)."""
    whole = Session.boot(program, args, images=images, capture=True)
    whole.run()
    flow = whole.flow
    owners: frozenset[int] | None = None
    if "pid" in only:
        owners = frozenset(flow.spaces[only["pid"]])
    batch = [_key(r) for r in flow.rows(FlowFilter(filt.causes, filt.syscalls, owners,
                                                   filt.seq, filt.instret))]
    whole.close()
    s = Session.boot(program, args, images=images, capture=True)
    got: list[FlowRow] = []
    stream = FlowStream(s.tracer.stream(), filt, got.extend, roots=s.tracer.process_roots,
                        **only)
    s.events.subscribe_raw(stream.feed_chunk)
    s.run()
    stream.finish()
    s.close()
    return batch, [_key(r) for r in got]


@pytest.mark.parametrize("program, args, filt, only", [
    ("forktree", ["2"], FlowFilter(), {}),
    ("forktree", ["2"], FlowFilter(causes=frozenset({"user_ecall", "s_timer"})), {}),
    ("forktree", ["2"], FlowFilter(syscalls=frozenset({"waitpid"})), {}),
    ("forktree", ["2"], FlowFilter(), {"pid": 2}),
    ("hello", [], FlowFilter(seq=(10, 30), instret=(0, 3_100_000)), {}),
    ("sigtests", ["handler_may_return", "handler_blocks_its_signal"], FlowFilter(), {}),
], ids=["all", "causes", "syscall", "pid", "ranges", "signals"])
def test_streamed_rows_are_the_whole_runs_rows(images: Images, program: str,
                                               args: list[str], filt: FlowFilter,
                                               only: dict[str, int]) -> None:
    batch, streamed = _both(images, program, args, filt, **only)
    assert batch and streamed == batch


def _alive(kind: type) -> int:
    return sum(1 for o in gc.get_objects() if type(o) is kind)


def test_a_long_trace_keeps_a_bounded_number_of_rows_and_calls(images: Images) -> None:
    """60 M instructions of usertests: ~90,000 events and thousands of calls pass
    through; the log, the flow and the stream keep at most HOLD rows and their calls."""
    # At 1 ns per instruction usertests' sleeps yield in a loop: a dense stream of calls.
    s = Session.boot("usertests", images=images, capture=True, capture_limit=2000,
                     icount_shift=0)
    flow = s.tracer.stream()
    peaks = {"rows": 0, "calls": 0}
    shown = [0]
    gc.collect()    # rows and calls other tests left alive are not this run's
    before = {"rows": _alive(FlowRow), "calls": _alive(SyscallRecord)}

    def sink(rows: list[FlowRow]) -> None:
        shown[0] += len(rows)
        if shown[0] // 5000 != (shown[0] - len(rows)) // 5000:   # now and then
            peaks["rows"] = max(peaks["rows"], _alive(FlowRow) - before["rows"])
            peaks["calls"] = max(peaks["calls"], _alive(SyscallRecord) - before["calls"])

    stream = FlowStream(flow, FlowFilter(), sink, roots=s.tracer.process_roots)
    s.events.subscribe_raw(stream.feed_chunk)
    s.run(60_000_000)
    stream.finish()
    assert stream.seen > 80_000 and flow.calls_made > 10_000
    assert shown[0] == stream.seen
    # Rows are handed over HOLD at a time at most; a call lives as long as its rows
    # (an ecall's and an sret's: half a batch) or while it is pending (a few).
    assert 0 < peaks["rows"] <= HOLD + 1 and 0 < peaks["calls"] <= HOLD // 2 + 100
    assert len(s.events) == stream.seen + flow.start and list(s.events.raw_chunks()) == []
    assert flow.syscalls == [] and len(flow.fresh) == 0 and len(flow.notes) < 10
    assert sum(stream.made.values()) == flow.calls_made
    s.close()


def test_a_call_that_waits_long_is_printed_unfinished_then_resumed(
        images: Images, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("privlab.inspect.calltable.WINDOW", 1)
    s = Session.boot("forktree", ["1"], images=images, capture=True)
    writer = CallsWriter(make_console(color=False))
    stream = FlowStream(s.tracer.stream(), FlowFilter(), writer.write,
                        roots=s.tracer.process_roots)
    s.events.subscribe_raw(stream.feed_chunk)
    s.run()
    stream.finish()
    writer.close()
    s.close()
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert lines[0] == "seq pid call result kernel insns where"
    # The kernel's instruction count per call (last column) moves with every kernel
    # change: checked to be there, not its value.
    rows = [line.split(" ", 1)[1] for line in lines[1:]]
    counted = [re.sub(r" \d+$", " N", r) for r in rows]
    assert counted == [
        "1 fork() 2 N", "1 fork() 3 N", "1 waitpid(2, 0x3fffffdf74) <unfinished>",
        "2 exit(1) does not return", "1 <... waitpid resumed> 2 status=1 N",
        "3 exit(1) does not return", "1 waitpid(3, 1) 3 status=1 N",
        '1 write(1, "forktree: 3 of 3 processes\\n", 27) 27 N',
        "1 exit(0) does not return"]


def _first_lines(args: list[str], n: int) -> tuple[list[str], int | None]:
    """The first n lines `privlab trace ARGS` prints on a pipe, and its exit status
    when the last of them arrived (None: still running)."""
    proc = subprocess.Popen([*PRIVLAB, "trace", *args], cwd=REPO_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    try:
        lines = [proc.stdout.readline() for _ in range(n)]
        return [line.rstrip("\n") for line in lines], proc.poll()
    finally:
        proc.kill()
        proc.communicate()


@pytest.mark.parametrize("args, first", [
    ([*FOREVER, "--user", "compute", "100000000000"],
     "     0         62  ·     ◀━━━━━●     S       mret  kernel  to _entry"),
    (["--format", "jsonl", *FOREVER, "--user", "compute", "100000000000"],
     '{"kind": "xret", "seq": 0, "instret": 62, "insn": "mret", "from": "M", "to": "S", '),
], ids=["text", "jsonl"])
def test_the_first_rows_arrive_while_the_guest_runs(args: list[str], first: str) -> None:
    """compute runs for hours under this budget: rows that arrive come as it runs."""
    lines, status = _first_lines(args, 2)
    assert status is None
    got = lines[1] if args[1] != "jsonl" else lines[0][:len(first)]
    assert got == first
