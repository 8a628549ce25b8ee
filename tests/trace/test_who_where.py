"""Every row of every trace view says who did what, and where: the process (the
thread once it has several, the satp for a process privlab cannot name, the kernel
for none), under --smp the hart, and the code location; runs of identical rows fold
into one row with a count."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from privlab.abi.csr import Priv
from privlab.cli.main import main
from privlab.trace.flow import FlowRow
from privlab.trace.fold import TIMES, Fold, Folder, fold_rows
from privlab.trace.perfetto import PROCESS_BASE
from privlab.trace.who import Threads

WHO = re.compile(r"  (pid \d+( tid \d+)?|kernel|satp 0x[0-9a-f]+)  (at|to) \S+$")


def _text(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["trace", *argv]) == 0
    return [line.rstrip() for line in capsys.readouterr().out.splitlines()]


def _masked(lines: list[str]) -> list[str]:
    """Rows with instret masked: the kernel's instruction counts are not what these
    tests are about."""
    return [re.sub(r"^(\s*\d+)\s+\d+  ", r"\1 #######  ", line) for line in lines]


def _events(lines: list[str]) -> list[str]:
    """The event column of a timeline's rows (seq, instret, lanes, path cut off)."""
    return [line[45:] for line in lines if re.match(r"\s+\d+\s+\d+  ", line)]


def test_forktree_timeline_names_the_process_of_every_fault_call_and_return(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The golden rows after pid 1's second fork, at the documented width: the
    parent's copy-on-write fault and its waitpid, then child pid 2's first return from
    fork, its own fault and its own fork."""
    lines = _masked(_text(capsys, "--range", "40:47", "--user", "forktree", "2"))
    assert lines[1:8] == _masked([
        "    40    2993044  ●━━━━━▶     ·     U▸S     store_page_fault  address 0x3fffffdf74"
        "  pid 1  at grow+0x28",
        "    41    2999202  ◀━━━━━●     ·     U       sret  pid 1  to grow+0x28",
        "    42    2999212  ●━━━━━▶     ·     U▸S     user_ecall  waitpid(2, 0x3fffffdf74)"
        "  pid 1  at waitpid+0x4",
        "    43    3001253  ◀━━━━━●     ·     U       sret  child's return from fork() #36"
        "  pid 2  to fork+0x8",
        "    44    3001260  ●━━━━━▶     ·     U▸S     store_page_fault  address 0x3fffffdf68"
        "  pid 2  at grow+0x2",
        "    45    3007418  ◀━━━━━●     ·     U       sret  pid 2  to grow+0x2",
        "    46    3007430  ●━━━━━▶     ·     U▸S     user_ecall  fork()  pid 2  at fork+0x4",
    ])


def test_every_row_of_the_whole_run_names_who_and_where(
        capsys: pytest.CaptureFixture[str]) -> None:
    lines = _text(capsys, "--unfold", "--user", "forktree", "2")
    events = _events(lines)
    assert len(events) == 108
    assert all(WHO.search(e) for e in events), [e for e in events if not WHO.search(e)]
    pids = {int(m[1]) for e in events if (m := re.search(r"  pid (\d+)  (at|to) ", e))}
    assert pids == set(range(1, 8))


def test_the_boots_identical_interrupts_fold_into_one_row_with_a_count(
        capsys: pytest.CaptureFixture[str]) -> None:
    folded = _masked(_text(capsys, "--range", "3:9", "--user", "hello"))
    assert folded[1:] == [
        "     3 #######  ·     ↻     ·     S▸S     s_external  kernel  at sleep+0xa8 / sret"
        f"  {TIMES}3"]
    unfolded = _masked(_text(capsys, "--unfold", "--range", "3:9", "--user", "hello"))
    assert unfolded[1:] == [
        "     3 #######  ·     ↻     ·     S▸S     s_external  kernel  at sleep+0xa8",
        "     4 #######  ·     ↻     ·     S       sret  kernel  to sleep+0xa8",
        "     5 #######  ·     ↻     ·     S▸S     s_external  kernel  at sleep+0xa8",
        "     6 #######  ·     ↻     ·     S       sret  kernel  to sleep+0xa8",
        "     7 #######  ·     ↻     ·     S▸S     s_external  kernel  at sleep+0xa8",
        "     8 #######  ·     ↻     ·     S       sret  kernel  to sleep+0xa8",
    ]


def _row(seq: int, trap: bool, path: tuple[Priv, ...], hart: int = 0, owner: int = 0,
         frm: Priv = Priv.S, to: Priv = Priv.S) -> FlowRow:
    return FlowRow(seq, seq * 10, trap, frm, to, True, 9, 9, 0x100, 0x200, 0, owner,
                   (0,) * 8, path, None if trap else seq - 1, seq if trap else seq - 1,
                   owner, None, "", hart=hart)


def _pairs(n: int, hart: int = 0, first: int = 0) -> list[FlowRow]:
    out = []
    for i in range(n):
        seq = first + 2 * i
        out += [_row(seq, True, (Priv.S, Priv.S), hart), _row(seq + 1, False, (Priv.S,), hart)]
    return out


def test_a_fold_holds_every_row_it_stands_for_and_a_unit_of_a_trap_and_its_return() -> None:
    items = fold_rows(_pairs(4), lambda r: (r.is_trap, r.who))
    assert len(items) == 1 and isinstance(items[0], Fold)
    fold = items[0]
    assert (fold.count, fold.size, [r.seq for r in fold.rows]) == (4, 2, list(range(8)))


def test_another_harts_rows_or_another_process_break_a_run() -> None:
    rows = _pairs(2) + _pairs(1, hart=1, first=4) + _pairs(1, first=6)
    items = fold_rows(rows, lambda r: (r.is_trap, r.hart))
    assert [type(i).__name__ for i in items] == ["Fold", "FlowRow", "FlowRow", "FlowRow",
                                                "FlowRow"]
    other = _pairs(5)
    other[4].owner = other[5].owner = 0x8000000000080412
    items = fold_rows(other, lambda r: (r.is_trap, r.who))
    assert [i.count if isinstance(i, Fold) else i.seq for i in items] == [2, 4, 5, 2]


def test_a_streamed_run_waits_until_a_different_row_or_a_flush() -> None:
    folder = Folder(lambda r: r.is_trap)
    assert folder.push(_pairs(3)) == [] and folder.pending == 6
    out = folder.flush()
    assert len(out) == 1 and isinstance(out[0], Fold) and out[0].count == 3
    assert folder.pending == 0


class _ThreadedFlow:
    def __init__(self, tids: dict[int, int], threaded: set[int]) -> None:
        self.tids = tids
        self.threaded = threaded


def test_rows_between_the_captured_ones_belong_to_the_thread_their_hart_last_entered() -> None:
    """Thread 1 is entered (#1, read live); its fault (#2, not read) and the kernel's
    SBI call inside it (#3) are thread 1's; an sret whose thread was not read (#5)
    leaves later rows without a thread rather than a guess."""
    space = 0x8000000000080412
    flow = _ThreadedFlow({1: 1}, {space})
    threads = Threads(flow)  # type: ignore[arg-type]
    rows = [_row(1, False, (Priv.U,), owner=space, to=Priv.U),
            _row(2, True, (Priv.U, Priv.S), owner=space, frm=Priv.U),
            _row(3, True, (Priv.U, Priv.S, Priv.M), owner=space, to=Priv.M),
            _row(5, False, (Priv.U,), owner=space, to=Priv.U),
            _row(6, True, (Priv.U, Priv.S), owner=space, frm=Priv.U)]
    for r in rows:
        threads.see(r)
        r.pid = 3
    assert [r.who for r in rows] == ["pid 3 tid 1", "pid 3 tid 1", "pid 3 tid 1", "pid 3",
                                     "pid 3"]
    assert flow.tids == {}


def test_threaddemo_rows_name_the_thread_once_the_process_has_two(
        capsys: pytest.CaptureFixture[str]) -> None:
    events = _events(_text(capsys, "--no-drive", "--syscall", "mutex_lock,yield",
                           "--user", "threaddemo"))
    assert [re.sub(r"  (at|to) \S+$", "", e) for e in events] == [
        "user_ecall  mutex_lock(0)  pid 1",
        "sret  → 0  mutex_lock  pid 1",
        "user_ecall  yield()  pid 1",
        "sret  enter pid 1 (threaddemo) thread 1  pid 1 tid 1",
        "user_ecall  mutex_lock(0)  pid 1 tid 1",
        "sret  → 0  yield  pid 1 tid 0",
    ]


def test_jsonl_rows_carry_owner_who_pid_and_location(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--format", "jsonl", "--range", "40:44", "--user", "forktree",
                 "2"]) == 0
    objs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    rows = [(o["seq"], o["who"], o["pid"], o["location"]) for o in objs if o["kind"] != "syscall"]
    assert rows == [(40, "pid 1", 1, "grow+0x28"), (41, "pid 1", 1, "grow+0x28"),
                    (42, "pid 1", 1, "waitpid+0x4"), (43, "pid 2", 2, "fork+0x8")]
    assert all(o["owner"] for o in objs if o["kind"] != "syscall")


def test_calls_name_where_each_was_made_and_under_smp_the_hart(
        capsys: pytest.CaptureFixture[str]) -> None:
    lines = _text(capsys, "--format", "calls", "--smp", "2", "--user", "forktree", "1")
    assert lines[0].split() == ["seq", "hart", "pid", "call", "result", "kernel", "insns",
                                "where"]
    assert all(re.search(r"  at (fork|waitpid|exit|write)\+0x4$", line) for line in lines[1:])
    assert {line.split()[1] for line in lines[1:]} <= {"0", "1"}


def test_a_trace_file_names_address_spaces_by_satp(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "run.trace"
    status = main(["run", "--quiet", "--input", "x", "--trace-out", str(trace), "--user",
                   "forktree", "1"])
    assert status == 0, capsys.readouterr().err
    capsys.readouterr()
    events = _events(_text(capsys, "--from", str(trace), "--cause", "store_page_fault"))
    assert events and all(re.search(r"  satp 0x8[0-9a-f]{15}  (at|to) 0x[0-9a-f]+$", e)
                          for e in events), events


def test_perfetto_has_a_track_group_per_process_whose_slices_nest_and_carry_csrs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "forktree.json"
    assert main(["trace", "--format", "perfetto", "-o", str(out), "--user", "forktree",
                 "2"]) == 0
    events = json.loads(out.read_text())["traceEvents"]
    groups = {e["pid"]: e["args"]["name"] for e in events
              if e["ph"] == "M" and e["name"] == "process_name"}
    assert groups == {1: "hart 0 (privlab)",
                      **{PROCESS_BASE + p: f"pid {p} forktree" for p in range(1, 8)}}
    slices = [e for e in events if e["ph"] == "X"]
    spans: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for e in slices:
        spans.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for track in spans.values():       # on every track, slices nest or follow each other
        track.sort(key=lambda s: (s[0], -s[1]))
        stack: list[float] = []
        for start, end in track:
            while stack and stack[-1] <= start + 1e-9:
                stack.pop()
            assert not stack or end <= stack[-1] + 1e-9
            stack.append(end)
    fault = next(e for e in slices if e["name"] == "store_page_fault"
                 and e["pid"] == PROCESS_BASE + 2)
    assert fault["args"]["who"] == "pid 2" and fault["args"]["at"].startswith("grow+0x")
    csrs = fault["args"]["csrs"]
    assert csrs["scause"] == "0xf" and csrs["stval"] == fault["args"]["tval"]
    assert csrs["sepc"] == fault["args"]["epc"]
    assert {"sstatus before", "sstatus after", "satp"} <= csrs.keys()
    runs = {e["name"] for e in slices if e["pid"] == PROCESS_BASE + 2 and e["cat"] == "run"}
    assert runs == {"running on hart 0"}
