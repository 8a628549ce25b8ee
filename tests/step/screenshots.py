"""Screenshots of `privlab step` for docs/inspect/step.md: the terminal app (Textual's
pilot, its SVG drawn to PNG by headless Chromium) at 120x40 and 160x50 after `y`, `b`
and `B`, and `privlab step --web` in a Chromium window sized to show a 120x40 terminal.

    python tests/step/screenshots.py [OUT_DIR]      # default: docs/inspect/images
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/, for step.cdp

from privlab.api import Session
from privlab.paths import REPO_ROOT
from privlab.stepper.app import StepApp
from privlab.stepper.controller import Stepper
from step.cdp import CHROMIUM, Page, chromium, free_port

KEYS = ("y", "b", "B")
PILOT = {(120, 40): KEYS, (160, 50): ("B",)}     # which moments to keep, per size


def svg_to_png(svg: Path, png: Path) -> None:
    """Draw Textual's SVG at its own size (its viewBox) with headless Chromium."""
    box = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text())
    assert box is not None, svg
    w, h = (int(float(v)) + 1 for v in box.groups())
    assert CHROMIUM is not None
    subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND",
                    f"--screenshot={png}", f"--window-size={w},{h}", svg.as_uri()],
                   check=True, capture_output=True, timeout=120)


async def pilot_shots(out: Path, tmp: Path) -> list[Path]:
    made = []
    for size, keep in PILOT.items():
        s = Session.boot("hello")
        try:
            app = StepApp(Stepper(s, every=100_000))
            async with app.run_test(size=size) as pilot:
                for key in KEYS:
                    await pilot.press(key)
                    await pilot.pause()
                    await pilot.pause()
                    if key in keep:
                        name = f"step-{size[0]}x{size[1]}-{'back-trap' if key == 'B' else key}"
                        svg = tmp / f"{name}.svg"
                        app.save_screenshot(str(svg))
                        svg_to_png(svg, out / f"{name}.png")
                        made.append(out / f"{name}.png")
        finally:
            s.close()
    return made


# Keeps the text messages the page sends (textual-serve's ["resize", {...}] among them).
SENT = """(() => { window.__sent = []; const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (d) {
    if (typeof d === 'string') window.__sent.push(d);
    return send.call(this, d); }; })();"""


async def _terminal_size(page: Page) -> tuple[int, int] | None:
    """The size the page last told the app its terminal has (columns, rows)."""
    r = await page.call("Runtime.evaluate", returnByValue=True, expression=(
        "JSON.stringify(window.__sent.filter(s => s.includes('resize')).slice(-1))"))
    sent = json.loads(r["result"]["value"])
    if not sent:
        return None
    size = json.loads(sent[0])[1]
    return int(size["width"]), int(size["height"])


async def _fit(page: Page, cols: int, rows: int) -> None:
    """Resize the window until the page's terminal is cols x rows cells."""
    w, h = 1100, 760
    for _ in range(12):
        await page.call("Emulation.setDeviceMetricsOverride", width=w, height=h,
                        deviceScaleFactor=1, mobile=False)
        await asyncio.sleep(1.5)
        got = await _terminal_size(page)
        if got == (cols, rows):
            return
        assert got is not None, "the page sent no terminal size"
        w += (cols - got[0]) * 9 if got[0] != cols else 0
        h += (rows - got[1]) * 18 if got[1] != rows else 0
        w += 0 if got[0] == cols else (1 if got[0] < cols else -1)
        h += 0 if got[1] == rows else (1 if got[1] < rows else -1)
    raise AssertionError(f"the page's terminal never became {cols}x{rows}: {got}")


async def web_shot(out: Path) -> Path:
    """`step --web` after y, b, B in a window whose terminal is 120x40 cells."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "privlab", "step", "--web", "--port",
                               str(port), "--user", "hello"], cwd=REPO_ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/"
        for _ in range(300):
            try:
                urllib.request.urlopen(url, timeout=5).close()
                break
            except OSError:
                await asyncio.sleep(0.3)
        async with chromium("about:blank") as page:
            await page.call("Page.addScriptToEvaluateOnNewDocument", source=SENT)
            await page.call("Page.navigate", url=url)
            await page.wait_for("instret 0  events 0", 120)
            await _fit(page, 120, 40)
            for key, said in (("y", "ran to the next system call"),
                              ("b", "stepped back one instruction"),
                              ("B", "back to the previous trap")):
                await page.key(key)
                await page.wait_for(said, 90)
            await asyncio.sleep(1.5)
            png = out / "step-web-120x40-back-trap.png"
            await page.screenshot(png)
            return png
    finally:
        server.terminate()
        server.wait(timeout=30)


def shrink(png: Path) -> None:
    """32 colours without dithering (pngquant, if installed): a terminal's few colours
    and their anti-aliased edges, at a third of the size."""
    tool = shutil.which("pngquant")
    if tool is not None:
        subprocess.run([tool, "--force", "--nofs", "--speed", "1", "--output", str(png),
                        "32", "--", str(png)], check=True)


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO_ROOT / "docs" / "inspect" / "images"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        made = asyncio.run(pilot_shots(out, Path(tmp)))
    made.append(asyncio.run(web_shot(out)))
    for p in made:
        shrink(p)
        print(f"{p}  {p.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
