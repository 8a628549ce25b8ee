"""Fixtures for the GDB stub tests: the bundled system (tests/conftest.py's images)
booted for a user program, served by a GdbServer in a thread on a free port, and the
real gdb-multiarch."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator, Sequence

import pytest

from gdb.helpers import GDB, GDB_TIMEOUT, JOIN_TIMEOUT, Served, boot, gdb_argv, serve
from privlab.build.images import Images


@pytest.fixture
def served(images: Images) -> Iterator[Callable[..., Served]]:
    """served(prog, args, wait=..., flags=..., disk=...) -> Served; stopped after the
    test."""
    started: list[Served] = []

    def make(prog: str = "hello", args: Sequence[str] = (), *, wait: bool = True,
             flags: Sequence[str] = ("quiet",), max_insns: int | None = None,
             disk: bool = False) -> Served:
        s = serve(boot(images, prog, args, flags, disk), wait=wait, max_insns=max_insns)
        started.append(s)
        return s

    yield make
    for s in started:
        s.server.quit()
        s.thread.join(JOIN_TIMEOUT)
        s.machine.close()


@pytest.fixture
def gdb(images: Images) -> Callable[..., str]:
    """gdb(port, commands) runs gdb-multiarch in batch mode with the kernel's and
    hello's symbols loaded, connected to the stub; returns what it printed."""
    if GDB is None:
        pytest.skip("gdb-multiarch is not installed (.ci/run installs it)")

    def run(port: int, commands: Sequence[str], *, user: str | None = "hello",
            timeout: float = GDB_TIMEOUT) -> str:
        return subprocess.run(gdb_argv(images, port, commands, user), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=timeout,
                              check=False).stdout

    return run


@pytest.fixture
def gdb_bare() -> Callable[..., str]:
    """gdb(port, commands) without symbol files, for a machine with no ELF."""
    if GDB is None:
        pytest.skip("gdb-multiarch is not installed (.ci/run installs it)")

    def run(port: int, commands: Sequence[str], timeout: float = GDB_TIMEOUT) -> str:
        argv = [GDB, "-batch", "-nx", "-ex", "set confirm off"]
        argv += [a for c in commands[:1] for a in ("-ex", c)]
        argv += ["-ex", f"target remote 127.0.0.1:{port}"]
        argv += [a for c in commands[1:] for a in ("-ex", c)]
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout, check=False).stdout

    return run
