"""The binary trace file: `privlab run --trace-out FILE` writes the core's records,
`read_trace` and `privlab trace --from FILE` read them back, event for event what the
JSON Lines export of the same run holds."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from privlab.abi.csr import Priv
from privlab.errors import BadInput
from privlab.machine.events import RECORD
from privlab.machine.tracefile import MAGIC, TraceWriter, read_trace


def privlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "privlab", *args], capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def hello_traces(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same run of hello, traced to a trace file and to JSON Lines."""
    d = tmp_path_factory.mktemp("traces")
    binary, jsonl = d / "hello.trace", d / "hello.jsonl"
    for out in (binary, jsonl):
        p = privlab("run", "--quiet", "--trace-out", str(out), "--user", "hello")
        assert p.returncode == 0, p.stderr
    return binary, jsonl


def test_trace_file_holds_every_event_of_the_jsonl_export(
        hello_traces: tuple[Path, Path]) -> None:
    binary, jsonl = hello_traces
    assert binary.read_bytes().startswith(MAGIC)
    tf = read_trace(binary)
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert (tf.xlen, tf.initial, tf.trailing_bytes) == (64, Priv.M, 0)
    assert [e.to_json() for e in tf.events] == lines
    first = lines[0]
    assert (first["kind"], first["insn"], first["from"], first["to"]) == ("xret", "mret", "M", "S")
    # No JSON per event: the file is the records behind a short header.
    assert binary.stat().st_size < len(lines) * RECORD.size + 2048


def test_trace_from_file_exports_the_same_events(hello_traces: tuple[Path, Path]) -> None:
    binary, jsonl = hello_traces
    p = privlab("trace", "--from", str(binary), "--format", "jsonl")
    assert p.returncode == 0, p.stderr
    events = [json.loads(line) for line in p.stdout.splitlines()
              if '"kind": "syscall"' not in line]
    recorded = [json.loads(line) for line in jsonl.read_text().splitlines()]
    # the same events, field for field; the view adds who each belongs to and where
    assert [{k: e[k] for k in r} for e, r in zip(events, recorded, strict=True)] == recorded
    assert all(set(e) - set(r) <= {"owner", "who", "pid", "tid", "location"}
               for e, r in zip(events, recorded, strict=True))
    calls = [json.loads(line) for line in p.stdout.splitlines() if '"kind": "syscall"' in line]
    assert [(c["name"], c["args"][0], c["ret"]) for c in calls] == \
        [("write", 1, 14), ("exit", 0, None)]


def test_trace_from_file_text_shows_the_lanes_and_calls(hello_traces: tuple[Path, Path]) -> None:
    p = privlab("trace", "--from", str(hello_traces[0]), "--syscall", "write")
    assert p.returncode == 0, p.stderr
    rows = p.stdout.splitlines()
    assert rows[0].split() == ["seq", "instret", "U", "S", "M", "path", "event"]
    ecall = next(r for r in rows if "user_ecall" in r)
    assert "U▸S" in ecall and "write(1, 0x" in ecall and ", 14)" in ecall
    assert any("sret  → 14  write  satp 0x" in r for r in rows)   # no process names in a file
    assert any("sbi DBCN.WRITE" in r and "U▸S▸M" in r for r in rows)


def test_a_cut_short_file_keeps_its_whole_events(hello_traces: tuple[Path, Path],
                                                 tmp_path: Path) -> None:
    data = hello_traces[0].read_bytes()
    cut = tmp_path / "cut.trace"
    cut.write_bytes(data[:-10])
    whole = read_trace(hello_traces[0])
    tf = read_trace(cut)
    assert (len(tf.events), tf.trailing_bytes) == (len(whole.events) - 1, RECORD.size - 10)
    p = privlab("trace", "--from", str(cut), "--format", "calls")
    assert p.returncode == 0
    assert p.stderr.strip() == (f"privlab: {cut}: the run that wrote it was cut short "
                                f"({RECORD.size - 10} bytes of an unfinished event ignored)")


@pytest.mark.parametrize(("content", "message"), [
    (b'{"kind": "xret"}\n', "not a privlab trace file"),
    (MAGIC + b"\x02\x00\x00\x00\x02\x00\x00\x00{}", "trace format version 2; this privlab "
                                                    "reads version 1"),
    (MAGIC + b"\x01\x00\x00\x00\x02\x00\x00\x00{}", "damaged trace header (no 'xlen')"),
])
def test_foreign_or_damaged_files_are_one_line_errors(tmp_path: Path, content: bytes,
                                                      message: str) -> None:
    bad = tmp_path / "bad.trace"
    bad.write_bytes(content)
    with pytest.raises(BadInput, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_trace(bad)
    p = privlab("trace", "--from", str(bad))
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr.count("\n") == 1 and message in p.stderr


def test_records_of_another_layout_are_refused(hello_traces: tuple[Path, Path],
                                               tmp_path: Path) -> None:
    data = hello_traces[0].read_bytes()
    other = tmp_path / "other.trace"
    other.write_bytes(data.replace(b'["a7","uint64_t"]', b'["a8","uint64_t"]', 1))
    with pytest.raises(BadInput, match="are not this privlab's"):
        read_trace(other)


def test_from_runs_nothing_and_names_no_pids(hello_traces: tuple[Path, Path]) -> None:
    p = privlab("trace", "--from", str(hello_traces[0]), "--user", "hello")
    assert (p.returncode, p.stderr.strip()) == (
        2, "privlab: --from shows a recorded trace and runs nothing: drop --user")
    p = privlab("trace", "--from", str(hello_traces[0]), "--pid", "1")
    assert p.returncode == 2 and "use --satp instead of --pid" in p.stderr


def test_writer_follows_a_rewound_run() -> None:
    """gdb's reverse execution hands events again from an earlier seq: the file then
    holds the timeline the run ends on."""
    def records(*tags: int) -> bytes:
        return b"".join(RECORD.pack(*([t] + [0] * (len(RECORD.unpack(bytes(RECORD.size)))
                                                    - 1))) for t in tags)
    out = io.BytesIO()
    w = TraceWriter(out, 64, Priv.M)
    w.write(0, records(10, 11, 12))
    w.write(1, records(21))
    w.write(2, records(22, 23))
    path_bytes = out.getvalue()
    body = path_bytes[-4 * RECORD.size:]
    assert [rec[0] for rec in RECORD.iter_unpack(body)] == [10, 21, 22, 23]
    assert w.events == 4
    with pytest.raises(BadInput, match="never handed over"):
        w.write(6, records(30))


def test_trace_from_file_writes_the_perfetto_and_html_exports(
        hello_traces: tuple[Path, Path], tmp_path: Path) -> None:
    events = len(read_trace(hello_traces[0]).events)
    for fmt, name in (("perfetto", "t.json"), ("html", "t.html")):
        out = tmp_path / name
        p = privlab("trace", "--from", str(hello_traces[0]), "--format", fmt, "-o", str(out))
        assert (p.returncode, p.stderr.strip()) == (
            0, f"privlab: wrote {fmt} trace of {events} events to {out}")
    trace = json.loads((tmp_path / "t.json").read_text())
    assert sum(1 for e in trace["traceEvents"] if e.get("name") == "write") >= 1
    assert (tmp_path / "t.html").read_text().startswith("<!DOCTYPE html>")


def test_a_perfetto_trace_records_the_runs_pace(hello_traces: tuple[Path, Path],
                                                tmp_path: Path) -> None:
    """Its time axis counts instructions, one a nanosecond, whatever the pace: the
    pace the guest's clock ran at (2^N ns an instruction) is recorded beside it, from
    the live run or from the trace file's header."""
    def other(*args: str) -> dict[str, object]:
        out = tmp_path / "t.json"
        p = privlab("trace", "--format", "perfetto", "-o", str(out), *args)
        assert p.returncode == 0, p.stderr
        data: dict[str, object] = json.loads(out.read_text())["otherData"]
        return data

    axis = "ts: instructions retired, 1 instruction = 1 ns"
    assert other("--user", "hello") == {"source": "privlab", "clock": axis,
                                        "icount_shift": 5, "guest_ns_per_instruction": 32}
    assert other("--icount-shift", "3", "--user", "hello")["guest_ns_per_instruction"] == 8
    assert other("--from", str(hello_traces[0]))["icount_shift"] == 5
    coarse = tmp_path / "coarse.trace"
    p = privlab("run", "--quiet", "--icount-shift", "2", "--trace-out", str(coarse),
                "--user", "hello")
    assert p.returncode == 0, p.stderr
    assert other("--from", str(coarse))["icount_shift"] == 2


def test_the_file_records_the_runs_clock(hello_traces: tuple[Path, Path],
                                         tmp_path: Path) -> None:
    """The header says the pace the run had (2^N ns an instruction): the default's, or
    --icount-shift's; a file written before the clock was recorded reads as None."""
    from privlab.machine.tracefile import open_trace
    from privlab.pace import DEFAULT_ICOUNT_SHIFT

    binary, _ = hello_traces
    assert read_trace(binary).icount_shift == DEFAULT_ICOUNT_SHIFT == 5
    coarse = tmp_path / "coarse.trace"
    p = privlab("run", "--quiet", "--icount-shift", "3", "--trace-out", str(coarse),
                "--user", "hello")
    assert p.returncode == 0, p.stderr
    assert open_trace(coarse).icount_shift == 3
    old = tmp_path / "old.trace"
    with old.open("wb") as f:
        TraceWriter(f, 64, Priv.M)
    raw = old.read_bytes().replace(b',"icount_shift":5', b"")
    header = raw[16:]                            # magic, version, length: 16 bytes
    old.write_bytes(raw[:12] + len(header).to_bytes(4, "little") + header)
    assert open_trace(old).icount_shift is None
