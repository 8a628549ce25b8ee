"""A headless Chromium driven over its DevTools protocol (aiohttp, which textual-serve
brings, is the websocket client): open a page, type keys, read back what the page
received on its websockets, take screenshots. For the `privlab step --web` test."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

# Keeps every text the page's websockets receive, decoded, in window.__received.
RECORD = """
(() => {
  window.__received = [];
  const Real = window.WebSocket;
  const dec = new TextDecoder();
  class Recording extends Real {
    constructor(...a) {
      super(...a);
      this.addEventListener('message', async (e) => {
        let d = e.data;
        if (d instanceof Blob) d = await d.arrayBuffer();
        window.__received.push(typeof d === 'string' ? d : dec.decode(d));
      });
    }
  }
  window.WebSocket = Recording;
})();
"""
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[\]P].*?(?:\x07|\x1b\\)|\x1b.")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Page:
    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.n = 0

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.n += 1
        await self.ws.send_json({"id": self.n, "method": method, "params": params})
        while True:
            m = await self.ws.receive_json()
            if m.get("id") == self.n:
                return dict(m.get("result", m))

    async def text(self) -> str:
        """Everything the page's websockets received, escape sequences removed."""
        r = await self.call("Runtime.evaluate", expression="window.__received.join('')",
                            returnByValue=True)
        return ANSI.sub("", str(r.get("result", {}).get("value", "")))

    async def wait_for(self, needle: str, timeout: float = 90.0) -> str:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        seen = ""
        while loop.time() < end:
            seen = await self.text()
            if needle in seen:
                return seen
            await asyncio.sleep(0.5)
        raise AssertionError(f"{needle!r} never reached the page; it received:\n{seen[-3000:]}")

    async def key(self, ch: str) -> None:
        """Type `ch` into the terminal (xterm.js's input element gets the focus)."""
        await self.call("Runtime.evaluate", expression=(
            "document.querySelector('.xterm-helper-textarea')?.focus()"))
        for kind in ("keyDown", "keyUp"):
            await self.call("Input.dispatchKeyEvent", type=kind, text=ch if kind == "keyDown"
                            else "", key=ch, unmodifiedText=ch)

    async def screenshot(self, path: Path) -> None:
        shot = await self.call("Page.captureScreenshot")
        path.write_bytes(base64.b64decode(shot["data"]))


@contextlib.asynccontextmanager
async def chromium(url: str, size: tuple[int, int] = (1600, 1000)) -> AsyncIterator[Page]:
    assert CHROMIUM is not None
    port = free_port()
    # The page asks for a web font on the internet: nothing leaves this machine.
    proc = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                             "--no-first-run", "--disable-background-networking",
                             "--disable-component-update", "--disable-sync",
                             f"--remote-debugging-port={port}",
                             f"--window-size={size[0]},{size[1]}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        async with aiohttp.ClientSession() as http:
            tabs: list[dict[str, Any]] = []
            for _ in range(150):
                try:
                    async with http.get(f"http://127.0.0.1:{port}/json") as r:
                        tabs = await r.json()
                        break
                except aiohttp.ClientError:
                    await asyncio.sleep(0.2)
            tab = next(t for t in tabs if t["type"] == "page")
            async with http.ws_connect(tab["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                page = Page(ws)
                await page.call("Page.enable")
                await page.call("Page.addScriptToEvaluateOnNewDocument", source=RECORD)
                await page.call("Page.navigate", url=url)
                yield page
    finally:
        proc.terminate()
        proc.wait(timeout=30)
