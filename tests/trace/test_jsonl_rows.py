"""`privlab trace --format jsonl` formats its rows in bulk (harness/trace/jsonl.py's
RowsJsonl: each event by jsonl.c from its record, who and where and the system-call
lines made once per combination): byte for byte the lines json.dumps makes of
`row_json` and `syscall_json` one row at a time, the formatter it replaced, which
stays here as the reference."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import ClassVar

import pytest
from machine.asm import build_asm
from test_abi_xv6 import XV6_CALLS

from privlab.abi.csr import Exc, Priv, encode_cause
from privlab.cli.main import main
from privlab.trace import jsonl
from privlab.trace.flow import FlowRow
from privlab.trace.jsonl import RowsJsonl, row_json, syscall_json, write_jsonl
from privlab.trace.syscalls import CallSpec, SyscallRecord


def reference(rows: list[FlowRow], harts: int, locate: object) -> str:
    """The lines `privlab trace --format jsonl` wrote before RowsJsonl: a json.dumps of
    each row's object, then of the call it completes."""
    out = []
    for row in rows:
        out.append(json.dumps(row_json(row, harts, locate)) + "\n")  # type: ignore[arg-type]
        call = row.syscall
        if call is not None and (call.exit_seq == row.seq or
                                 (call.outcome == "noreturn" and call.entry_seq == row.seq)):
            out.append(json.dumps(syscall_json(call)) + "\n")
    return "".join(out)


class Checked(RowsJsonl):
    """RowsJsonl that also keeps the reference's lines for every batch it is handed."""

    want: ClassVar[list[str]] = []
    batches = 0

    def write(self, rows: list[FlowRow]) -> None:  # type: ignore[override]
        Checked.want.append(reference(rows, self._harts, self._locate))
        Checked.batches += 1
        super().write(rows)


def traced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[str, str]:
    """`privlab trace --format jsonl ARGV -o FILE`: what it wrote, and what the
    reference makes of the same rows."""
    Checked.want, Checked.batches = [], 0
    monkeypatch.setattr(jsonl, "RowsJsonl", Checked)
    out = tmp_path / "rows.jsonl"
    assert main(["trace", "--format", "jsonl", "-o", str(out), *argv]) == 0
    assert Checked.batches > 0
    return out.read_text(), "".join(Checked.want)


@pytest.mark.parametrize("argv", [
    ["--user", "hello"],                          # captured strings in the call lines
    ["--smp", "2", "--user", "forktree", "3"],    # "hart", processes named as they come
    ["--user", "threaddemo"],                     # "tid"
    ["--no-capture", "--user", "forktree", "2"],  # pointers as addresses
    ["--pid", "2", "--cause", "user_ecall,store_page_fault", "--user", "forktree", "2"],
], ids=["hello", "smp2-forktree", "threads", "no-capture", "filtered"])
def test_trace_jsonl_is_the_per_row_reference_byte_for_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    got, want = traced(tmp_path, monkeypatch, *argv)
    assert got == want
    objs = [json.loads(line) for line in got.splitlines()]
    assert any(o["kind"] == "syscall" for o in objs)
    assert all("location" in o and "who" in o for o in objs if o["kind"] != "syscall")


def test_a_foreign_kernels_calls_under_another_abi_are_the_reference_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # xv6's write(1, "hi\n", 3) and exit(0), which never returns: its line follows the
    # ecall's; rows of a bare-metal program belong to "user".
    got, want = traced(tmp_path, monkeypatch, "--abi", "xv6", "--bios", "none", "--kernel",
                       str(build_asm(XV6_CALLS)))
    assert got == want
    calls = [json.loads(line) for line in got.splitlines() if '"kind": "syscall"' in line]
    assert [(c["name"], c["call"], c["outcome"]) for c in calls] == [
        ("write", 'write(1, "hi\\n", 3)', "returned"), ("exit", "exit(0)", "noreturn")]


def test_a_trace_file_shown_as_jsonl_is_the_reference_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "run.trace"
    assert main(["run", "--quiet", "--input", "x", "--trace-out", str(trace), "--user",
                 "forktree", "2"]) == 0
    capsys.readouterr()
    got, want = traced(tmp_path, monkeypatch, "--from", str(trace))
    assert got == want and '"who": "satp 0x' in got


def test_a_row_is_not_formatted_by_json_dumps_once_its_combination_was_seen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 3000 ecalls and their srets of one process at two places: json.dumps makes the
    # members after the event once per combination, not once a row.
    spec = CallSpec(64, "write", (), "long", False)
    rows = []
    for i in range(3000):
        call = SyscallRecord(64, spec, (1, 2, 3, 4, 5, 6), 2 * i, 100 * i, 0x1000,
                             0x8000_0000_0008_0001, 64, pid=3, process="p", ret=i,
                             exit_seq=2 * i + 1,
                             exit_instret=100 * i + 50, outcome="returned")
        rows += [FlowRow(2 * i, 100 * i, True, Priv.U, Priv.S, False, int(Exc.USER_ECALL),
                         int(Exc.USER_ECALL), 0x1000, 0x8020_0000, 0, call.satp, (1,) * 8,
                         (Priv.U, Priv.S), None, 2 * i, call.satp, call, "", pid=3),
                 FlowRow(2 * i + 1, 100 * i + 50, False, Priv.S, Priv.U, False, 1, 0, 0x8020_0040,
                         0x1004, 0, call.satp, (i,) * 8, (Priv.U,), 2 * i, 2 * i, call.satp,
                         call, "", pid=3)]
    out = io.StringIO()
    writer = RowsJsonl(out)
    dumps: list[object] = []
    real = json.dumps

    def counted(obj: object, **kw: object) -> str:
        dumps.append(obj)
        return real(obj, **kw)      # type: ignore[arg-type]

    monkeypatch.setattr(jsonl.json, "dumps", counted)
    writer.write(rows[:2000])
    writer.write(rows[2000:])
    assert len(dumps) == 2 and writer.lines == 9000
    monkeypatch.setattr(jsonl.json, "dumps", real)
    assert out.getvalue() == reference(rows, 1, None)
    assert '"location": "0x1004"}' in out.getvalue().splitlines()[1]
    whole = io.StringIO()           # write_jsonl: the same, any number of rows
    assert write_jsonl(iter(rows), whole) == 9000 and whole.getvalue() == out.getvalue()


def test_a_cause_harness_abi_does_not_name_is_formatted_in_python_between_rows() -> None:
    # code 60 is reserved: jsonl.c stops before its row, Python writes "reserved_60"
    # with the row's members, the C goes on with the rest; on three harts each names
    # its hart.
    def row(seq: int, interrupt: bool, code: int, frm: Priv, to: Priv) -> FlowRow:
        return FlowRow(seq, seq * 7, True, frm, to, interrupt, code,
                       encode_cause(interrupt, code, 64), 0x80 + seq, 0x100, 0, 0, (0,) * 8,
                       (frm, to), None, seq, 0, None, "", hart=seq % 3)
    rows = [row(5, False, int(Exc.USER_ECALL), Priv.U, Priv.S),
            row(6, True, 60, Priv.S, Priv.M), row(7, False, int(Exc.BREAKPOINT), Priv.S, Priv.M)]
    out = io.StringIO()
    writer = RowsJsonl(out, harts=3)
    writer.write(rows)
    assert out.getvalue() == reference(rows, 3, None)
    assert '"name": "reserved_60"' in out.getvalue() and writer.lines == 3
    assert '"hart": 2, "owner": 0, "who": "user"' in out.getvalue()


def test_a_row_written_in_python_keeps_its_place_in_a_file(tmp_path: Path) -> None:
    # In a file, jsonl.c's lines go to the binary file beneath and Python's through the
    # text layer: the reserved cause's line must come out between the other two.
    def row(seq: int, code: int) -> FlowRow:
        return FlowRow(seq, seq * 7, True, Priv.S, Priv.M, True, code,
                       encode_cause(True, code, 64), 0x80 + seq, 0x100, 0, 0, (0,) * 8,
                       (Priv.S, Priv.M), None, seq, 0, None, "")
    rows = [row(5, int(Exc.USER_ECALL)), row(6, 60), row(7, int(Exc.BREAKPOINT))]
    path = tmp_path / "rows.jsonl"
    with path.open("w") as out:
        writer = RowsJsonl(out)
        writer.write(rows)
        writer.close()
    assert path.read_text() == reference(rows, 1, None)
    assert [json.loads(line)["seq"] for line in path.read_text().splitlines()] == [5, 6, 7]
