"""`privlab step --web`: textual-serve serves the app; a real headless Chromium opens
the page, receives the app's screen over the websocket and sends keys back."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from privlab.paths import REPO_ROOT
from privlab.stepper.web import children
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


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] != "Z"    # a zombie has ended
    except OSError:
        return False


def _gone(pids: list[int], timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.2)
    return False


def _app_processes(server: int) -> list[int]:
    return [p for p in children(server)
            if b"privlab" in Path(f"/proc/{p}/cmdline").read_bytes()]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_app_ends_with_its_server_while_a_page_is_open(sig: signal.Signals) -> None:
    """SIGTERM stops the server (and the app process it started for the page) with
    the page still open; SIGKILL of the server leaves no orphaned app running."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "privlab", "step", "--web", "--port",
                               str(port), "--user", "hello"], cwd=REPO_ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    apps: list[int] = []
    try:
        url = f"http://127.0.0.1:{port}/"
        _wait_http(url)

        async def browse() -> None:
            async with chromium(url) as page:
                await page.wait_for("instret 0  events 0", 120)
                apps.extend(_app_processes(server.pid))
                assert len(apps) == 1, apps
                server.send_signal(sig)
                stopped = await asyncio.to_thread(_gone, [server.pid], 20)
                assert stopped, f"the server did not end on {sig.name} with a page open"
                assert await asyncio.to_thread(_gone, apps, 10), \
                    f"the app process {apps} outlived its server ({sig.name})"

        asyncio.run(browse())
        server.wait(timeout=5)
        if sig == signal.SIGTERM:
            assert server.returncode == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=30)
        for p in apps:
            if _alive(p):
                os.kill(p, signal.SIGKILL)
