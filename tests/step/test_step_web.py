"""`privlab step --web`: textual-serve serves the app; a real headless Chromium opens
the page, receives the app's screen over the websocket and sends keys back."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from privlab.paths import REPO_ROOT
from step.cdp import CHROMIUM, chromium, free_port

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


def _wait_http(url: str, timeout: float = 60.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return str(r.read().decode())
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"{url} never answered")


def test_step_web_in_chromium(tmp_path: Path) -> None:
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "privlab", "step", "--web", "--port",
                               str(port), "--user", "hello"], cwd=REPO_ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/"
        assert "privlab step" in _wait_http(url)

        async def browse() -> None:
            async with chromium(url) as page:
                first = await page.wait_for("instret 0  events 0", 120)
                at = first.find("instret 0  events 0")
                assert "at the first instruction" in first[at:at + 200], first[at - 200:at + 200]
                assert "trap timeline" in first and "M-mode" in first
                await page.screenshot(tmp_path / "start.png")
                await page.key("y")
                after = await page.wait_for("ran to the next system call", 90)
                assert "user_ecall" in after
                await page.key("b")
                await page.wait_for("stepped back one instruction", 90)
                await page.screenshot(tmp_path / "back.png")

        asyncio.run(browse())
        assert (tmp_path / "back.png").stat().st_size > 10_000
    finally:
        server.terminate()
        server.wait(timeout=30)
