"""`privlab step --web`: textual-serve's server, made to stop when asked.

textual-serve runs one app process per browser tab and, on SIGTERM or SIGINT, waits
for each connected page's handler to end, and for each app process to read a "quit"
message: an app busy running forward (or a tab left open) kept the server up. Here a
signal first ends the app processes, then the websocket handlers, then the server.
And the app process watches its server (`watch_parent`): if the server is gone (even
killed outright, leaving it an orphan) the app ends too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from typing import Any

from aiohttp import web
from textual_serve.server import Server

__all__ = ["PARENT_ENV", "StepServer", "children", "watch_parent"]

PARENT_ENV = "PRIVLAB_STEP_SERVER"   # the server's pid, in each app process's environment
WATCH_SECONDS = 0.5                  # how often an app process looks for its server
HANDLERS_SECONDS = 5.0               # a page's handler this long in ending is cancelled


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux's /proc; elsewhere none)."""
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and int(fields[1]) == pid:
            found.append(int(entry))
    return found


class StepServer(Server):
    """textual-serve's Server that a signal stops even with pages open."""

    def __init__(self, command: str, **kw: Any) -> None:
        # `exec`: the shell textual-serve starts becomes the app, a child of ours
        super().__init__(f"exec env {PARENT_ENV}={os.getpid()} {command}", **kw)
        self._pages: set[asyncio.Task[Any]] = set()

    def request_exit(self) -> None:
        """SIGTERM, SIGINT: end every app process now, then the server."""
        for pid in children(os.getpid()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        super().request_exit()

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        task = asyncio.current_task()
        if task is not None:
            self._pages.add(task)
        try:
            return await super().handle_websocket(request)
        finally:
            if task is not None:
                self._pages.discard(task)

    async def on_shutdown(self, app: web.Application) -> None:
        """The pages' handlers wait for their browser: end them (each then closes its
        websocket and stops its app process)."""
        pages = [t for t in self._pages if not t.done()]
        for t in pages:
            t.cancel()
        if pages:
            await asyncio.wait(pages, timeout=HANDLERS_SECONDS)


def watch_parent() -> None:
    """In an app process the server started: end this process once the server is
    gone (this process then has another parent)."""
    server = os.environ.get(PARENT_ENV)
    if not server or not server.isdigit():
        return
    expected = int(server)

    def watch() -> None:
        while True:
            if os.getppid() != expected:
                os._exit(1)      # the app may be mid-run: nothing left to show it to
            threading.Event().wait(WATCH_SECONDS)

    if os.getppid() != expected:
        os._exit(1)
    threading.Thread(target=watch, name="privlab-step-server-watch", daemon=True).start()
