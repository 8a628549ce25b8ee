"""forktree's HTML trace in headless Chromium, driven over DevTools: rendered,
clicked and measured (skipped when Chromium is not installed)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from step.cdp import CHROMIUM, Page, chromium

from privlab.cli.main import main
from privlab.trace.html import KERNEL_COLOUR, PROCESS_COLOURS, ROW_HEIGHT

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


async def _eval(page: Page, js: str) -> Any:
    r = await page.call("Runtime.evaluate", expression=js, returnByValue=True)
    assert "exceptionDetails" not in r, r["exceptionDetails"]
    return r.get("result", {}).get("value")


async def _click(page: Page, selector: str) -> None:
    """A real mouse click at the middle of the element's box, after scrolling to it."""
    box = await _eval(page, f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                            " e.scrollIntoView({block: 'center'});"
                            " const r = e.getBoundingClientRect();"
                            " return [r.x + r.width / 2, r.y + r.height / 2]; })()")
    x, y = box
    for kind in ("mousePressed", "mouseReleased"):
        await page.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                        clickCount=1)


def _rgb(colour: str) -> str:
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_forktree_page_folds_colours_processes_and_shows_csrs_on_click(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    html = tmp_path / "forktree.html"
    assert main(["trace", "--format", "html", "-o", str(html), "--user", "forktree", "2"]) == 0
    capsys.readouterr()
    shot = tmp_path / "forktree.png"

    async def browse() -> dict[str, Any]:
        async with chromium(html.as_uri(), size=(1400, 1000)) as page:
            for _ in range(100):
                if await _eval(page, "document.body && document.body.dataset.ready"):
                    break
                await asyncio.sleep(0.1)
            got: dict[str, Any] = {}
            got["events"] = await _eval(page, "document.body.dataset.events")
            got["colours"] = await _eval(page, """(() => {
                const out = {};
                document.querySelectorAll('.event .who').forEach(w => {
                  out[w.textContent] = getComputedStyle(w).backgroundColor; });
                return out; })()""")
            # the longest run of the boot's disk interrupts
            first = await _eval(page, """[...document.querySelectorAll('.fold')]
                .sort((a, b) => b.dataset.count - a.dataset.count)[0].dataset.first""")
            fold = f'.fold[data-first="{first}"]'
            got["fold"] = await _eval(page, f"""(() => {{
                const f = document.querySelector('{fold}');
                return [Number(f.dataset.count), f.getBoundingClientRect().height]; }})()""")
            await _click(page, f"{fold} > .event")
            got["unfolded"] = await _eval(page, f"""(() => {{
                const f = document.querySelector('{fold}');
                return [f.classList.contains('open'), f.getBoundingClientRect().height,
                        f.querySelectorAll('.rows .event').length]; }})()""")
            # pid 2's first fork: its call and the CSRs it changed
            await _click(page, '.event[data-who="pid 2"][data-name="user_ecall"]')
            got["detail"] = await _eval(page, """(() => {
                const d = document.getElementById('detail');
                const rows = {};
                d.querySelectorAll('tr[data-csr]').forEach(tr => {
                  rows[tr.dataset.csr] = [...tr.children].map(td => td.textContent); });
                return {seq: d.dataset.seq, text: d.textContent, csrs: rows,
                        changed: [...d.querySelectorAll('.changed')].map(e => e.textContent),
                        paired: [...document.querySelectorAll('.event.paired')]
                                 .map(e => e.dataset.seq)}; })()""")
            await page.screenshot(shot)
            return got

    got = asyncio.run(browse())
    assert got["events"] == "108"
    colours = got["colours"]
    assert colours["kernel"] == _rgb(KERNEL_COLOUR)
    assert [colours[f"pid {p}"] for p in range(1, 8)] == \
        [_rgb(c) for c in PROCESS_COLOURS[:7]]
    count, folded_height = got["fold"]
    assert folded_height == ROW_HEIGHT
    is_open, open_height, inner = got["unfolded"]
    assert is_open and inner == 2 * count
    assert open_height == pytest.approx(ROW_HEIGHT * (1 + 2 * count), abs=1)
    d = got["detail"]
    seq = d["seq"]
    assert d["text"].startswith(f"#{seq} user_ecall fork()")
    assert "pid 2" in d["text"] and "at fork+0x4" in d["text"]
    # scause went from the page fault before it to the ecall; the trap cleared SIE
    assert d["csrs"]["scause"][1:3] == ["0xf", "0x8"]
    assert "store_page_fault → user_ecall" in d["csrs"]["scause"][3]
    assert "SIE=1→0" in d["changed"] and "0x8" in d["changed"]   # interrupts off; scause
    assert "trap frame" in d["text"] and "the call's number: fork" in d["text"]
    assert d["paired"] == [seq, str(int(seq) + 1)]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
