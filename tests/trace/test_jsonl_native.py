"""`privlab run --trace-out FILE.jsonl` formats its lines from the core's records in C
(harness/trace/jsonl.c): byte for byte what json.dumps(event_json(...)) makes of the
same events, the formatter it replaced, which stays here as the reference."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from privlab.abi.csr import Exc, Priv, encode_cause
from privlab.machine.events import RECORD, EventLog, event_json
from privlab.machine.rawevents import FIELD_NAMES, TRAP, XRET
from privlab.machine.tracefile import read_trace
from privlab.trace.jsonl import JsonlWriter


def reference(log: EventLog) -> bytes:
    """The per-event Python formatter `--trace-out FILE.jsonl` used before jsonl.c."""
    return "".join(json.dumps(event_json(ev, log.harts)) + "\n" for ev in log).encode()


def run(tmp_path: Path, out: str, *args: str) -> Path:
    path = tmp_path / out
    proc = subprocess.run([sys.executable, "-m", "privlab", "run", "--quiet",
                           "--trace-out", str(path), *args],
                          capture_output=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    return path


def test_a_two_hart_kernel_run_gives_the_reference_lines_byte_for_byte(
        tmp_path: Path) -> None:
    # The bundled firmware and kernel on two harts: forktree's calls from U, the
    # kernel's SBI calls from S, device interrupts, page faults, mret and sret; the same
    # run twice (runs are deterministic), once as records, once as JSON Lines.
    args = ["--smp", "2", "--user", "forktree", "3"]
    records = read_trace(run(tmp_path, "t.trace", *args)).events
    lines = run(tmp_path, "t.jsonl", *args).read_bytes()
    assert lines == reference(records)
    kinds = Counter((ev.kind, getattr(ev, "name", getattr(ev, "insn", ""))) for ev in records)
    assert {("trap", "user_ecall"), ("trap", "supervisor_ecall"), ("trap", "store_page_fault"),
            ("trap", "s_external"), ("xret", "mret"), ("xret", "sret")} <= set(kinds)
    assert b'"interrupt": true' in lines and b'"interrupt": false' in lines
    assert {ev.hart for ev in records} == {0, 1}
    assert b'"hart": 1}' in lines


def record(**fields: int) -> bytes:
    values = dict.fromkeys(FIELD_NAMES, 0) | fields
    return RECORD.pack(*(values[name] for name in FIELD_NAMES))


def test_a_cause_harness_abi_does_not_name_is_formatted_in_python_between_batches() -> None:
    # code 60 is reserved: the C stops before it, Python writes "reserved_60", the C
    # goes on with the rest; numbers as large as 64 bits take.
    top = (1 << 64) - 1
    raw = (record(kind=TRAP, code=int(Exc.USER_ECALL), cause=int(Exc.USER_ECALL),
                  priv_from=int(Priv.U), priv_to=int(Priv.S), instret=top, epc=top)
           + record(kind=TRAP, code=60, cause=encode_cause(True, 60, 64), interrupt=1,
                    priv_from=int(Priv.S), priv_to=int(Priv.M))
           + record(kind=XRET, code=0, priv_from=int(Priv.M), priv_to=int(Priv.S), pc=top)
           + record(kind=XRET, code=1, priv_from=int(Priv.S), priv_to=int(Priv.U), hart=2))
    for harts in (1, 3):
        log = EventLog()
        log.harts = harts
        log.append_raw(raw)
        out = io.BytesIO()
        writer = JsonlWriter(out, harts)
        writer.write(7, raw)
        want = reference(log).replace(b'"seq": 0', b'"seq": 7').replace(b'"seq": 1', b'"seq": 8')
        want = want.replace(b'"seq": 2', b'"seq": 9').replace(b'"seq": 3', b'"seq": 10')
        assert out.getvalue() == want
        assert b'"name": "reserved_60"' in want and writer.lines == 4


def test_a_background_writer_writes_the_same_bytes_and_close_waits_for_them() -> None:
    ecall = record(kind=TRAP, code=int(Exc.USER_ECALL), cause=int(Exc.USER_ECALL),
                   priv_from=int(Priv.U), priv_to=int(Priv.S))
    sret = record(kind=XRET, code=1, priv_from=int(Priv.S), priv_to=int(Priv.U))
    raw = (ecall + sret) * 2500
    size = RECORD.size
    outs = []
    for background in (False, True):
        out = io.BytesIO()
        writer = JsonlWriter(out, background=background)
        for first in range(0, 5000, 700):        # batches as the core hands them over
            writer.write(first, raw[first * size:(first + 700) * size])
        writer.close()
        outs.append(out.getvalue())
    log = EventLog()
    log.append_raw(raw)
    assert outs[0] == outs[1] == reference(log)
    assert outs[1].count(b"\n") == 5000


def test_a_background_writer_raises_a_write_error_in_the_runs_thread() -> None:
    class Full(io.BytesIO):
        def write(self, data: object) -> int:
            raise OSError(28, "No space left on device")

    writer = JsonlWriter(Full(), background=True)
    writer.write(0, record(kind=XRET, code=1, priv_from=int(Priv.S), priv_to=int(Priv.U)))
    with pytest.raises(OSError, match="No space left"):
        writer.close()
