"""Exporters: Chrome/Perfetto trace JSON checked at the schema level, and the HTML
sequence diagram rendered in headless Chromium (skipped when it is not installed)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import zlib
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from privlab.abi.csr import Priv
from privlab.api import Session
from privlab.theme import PALETTE
from privlab.trace.flow import FlowFilter
from privlab.trace.html import render_html
from privlab.trace.perfetto import PROCESS_BASE, TRACKS, chrome_trace

PHASES = {"X", "M", "s", "f"}


@pytest.fixture
def traced(hello: Session) -> Session:
    hello.run()
    return hello


def _slices(trace: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in trace["traceEvents"] if e["ph"] == "X"]


def test_perfetto_json_schema(traced: Session) -> None:
    trace = json.loads(json.dumps(chrome_trace(traced.flow.rows())))
    assert trace["displayTimeUnit"] == "ns" and isinstance(trace["traceEvents"], list)
    for e in trace["traceEvents"]:
        assert e["ph"] in PHASES and isinstance(e["name"], str)
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        if e["ph"] != "M":
            assert isinstance(e["ts"], int | float) and e["ts"] >= 0
        if e["ph"] == "X":
            assert isinstance(e["dur"], int | float) and e["dur"] >= 0
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] in ("thread_name", "process_name")}
    assert names == {(1, 0): "hart 0 (privlab)", (1, TRACKS[Priv.U]): "U-mode (user)",
                     (1, TRACKS[Priv.S]): "S-mode (kernel)",
                     (1, TRACKS[Priv.M]): "M-mode (firmware)",
                     (PROCESS_BASE + 1, 0): "pid 1 hello", (PROCESS_BASE + 1, 1): "thread"}


def test_perfetto_slices_nest_properly_on_each_track(traced: Session) -> None:
    by_tid: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    for e in _slices(chrome_trace(traced.flow.rows())):
        by_tid[e["pid"], e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_tid.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack: list[float] = []
        for start, end in spans:
            while stack and stack[-1] <= start + 1e-9:
                stack.pop()
            assert not stack or end <= stack[-1] + 1e-9, "slices overlap without nesting"
            stack.append(end)


def test_perfetto_write_is_a_syscall_slice_on_the_s_track_with_its_result(
        traced: Session) -> None:
    trace = chrome_trace(traced.flow.rows())
    write = next(e for e in _slices(trace) if e["name"] == "write")
    call = traced.syscalls[0]
    assert (write["cat"], write["pid"], write["tid"]) == ("syscall", 1, TRACKS[Priv.S])
    assert write["args"]["call"] == 'write(1, "Hello, world!\\n", 14)' and \
        write["args"]["ret"] == 14
    assert write["ts"] == call.entry_instret / 1000 and call.exit_instret is not None
    assert write["dur"] == pytest.approx((call.exit_instret - call.entry_instret) / 1000)
    sbi = next(e for e in _slices(trace) if e["name"] == "sbi DBCN.WRITE")
    assert sbi["tid"] == TRACKS[Priv.M] and write["ts"] < sbi["ts"] < write["ts"] + write["dur"]
    flows = [e for e in trace["traceEvents"] if e["ph"] in "sf"]
    assert {e["id"] for e in flows if e["ph"] == "s"} == {e["id"] for e in flows if e["ph"] == "f"}


def test_perfetto_runs_start_where_the_rows_say_and_carry_process_names(
        traced: Session) -> None:
    """Unfiltered, the firmware's run starts at reset; from a filtered start nothing
    claims to have run since reset. U-mode runs are named by process."""
    names = {satp: f"pid {pid} {name}" for satp, (pid, name) in traced.flow.named.items()}
    runs = [e for e in _slices(chrome_trace(traced.flow.rows(), names)) if e["cat"] == "run"]
    assert (runs[0]["name"], runs[0]["ts"]) == ("firmware", 0)
    assert "pid 1 hello" in {e["name"] for e in runs if e["tid"] == TRACKS[Priv.U]}
    write = next(r for r in traced.flow.rows() if r.syscall and r.syscall.name == "write")
    filtered = chrome_trace(traced.flow.rows(FlowFilter(seq=(write.seq, None))), names)
    starts = [e["ts"] for e in _slices(filtered)]
    assert min(starts) == write.instret / 1000


def test_html_is_self_contained(traced: Session) -> None:
    page = render_html(traced.flow.rows(), "hello")
    assert page.startswith("<!DOCTYPE html>")
    for banned in ("http://", "https://", "<link", "src=", "@import", "url(http"):
        assert banned not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert page.count('<div class="event" ') == len(traced.flow)


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run_chromium(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    exe = _chromium()
    assert exe is not None
    return subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--no-first-run", f"--user-data-dir={tmp / 'profile'}", *args],
        capture_output=True, text=True, timeout=90, check=False)


def _png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB(A) rows of an 8-bit truecolour PNG (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    w = h = depth = ctype = 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6)
    bpp = 3 if ctype == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return w, h, [bytes(r[i:i + 3]) for r in rows for i in range(0, stride, bpp)]


@pytest.mark.skipif(_chromium() is None, reason="Debian's chromium is not installed")
def test_html_renders_in_headless_chromium(traced: Session, tmp_path: Path) -> None:
    page = tmp_path / "hello.html"
    page.write_text(render_html(traced.flow.rows(), "hello"))
    dom = _run_chromium(["--dump-dom", page.as_uri()], tmp_path).stdout
    # The inline script ran (no network needed) and counted every event.
    assert f'data-events="{len(traced.flow)}"' in dom and 'data-ready="1"' in dom
    write = next(r for r in traced.flow.rows() if r.syscall and r.syscall.name == "write")
    assert f'data-seq="{write.seq}" data-kind="trap" data-from="U" data-to="S"' in dom
    assert "write(1, \"Hello, world!\\n\", 14)" in dom.replace("&quot;", '"')
    shot = tmp_path / "hello.png"
    _run_chromium([f"--screenshot={shot}", "--window-size=1000,500", page.as_uri()], tmp_path)
    w, h, pixels = _png_pixels(shot)
    assert (w, h) == (1000, 500)
    colours = set(pixels)
    for lane in ("U", "S", "M"):   # each lane's colour is drawn (lane titles, arrows)
        assert bytes.fromhex(PALETTE[lane][1:]) in colours, lane
