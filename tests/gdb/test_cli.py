"""`privlab run --gdb [HOST:]PORT [--wait]` as a user starts it."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from gdb.rsp import Client
from privlab.errors import BadInput
from privlab.gdb import Address, parse_address

PRIVLAB = [sys.executable, "-m", "privlab"]
TIMEOUT = 60.0


@contextmanager
def privlab(*args: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """Start privlab with --gdb on a free port; yield it and the port it listens on."""
    proc = subprocess.Popen([*PRIVLAB, "run", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        assert m, line
        yield proc, int(m.group(1))
    finally:
        proc.kill()
        proc.wait(TIMEOUT)


def test_run_with_gdb_wait_holds_at_reset_and_exits_with_the_guest() -> None:
    with privlab("--quiet", "--gdb", "127.0.0.1:0", "--wait", "--user", "hello") as (p, port):
        c = Client(port)
        assert c.ask(b"?") == b"T05thread:1;"
        assert c.ask(b"p20") == b"0000008000000000"     # pc at reset
        assert c.ask(b"c") == b"W00"
        assert p.wait(TIMEOUT) == 0


def test_ctrl_c_in_privlab_ends_a_run_waiting_for_gdb() -> None:
    with privlab("--quiet", "--gdb", "0", "--wait", "--user", "hello") as (p, _):
        p.send_signal(signal.SIGINT)
        assert p.wait(TIMEOUT) == 130
        assert p.stderr is not None
        assert "Traceback" not in p.stderr.read()


def test_bad_gdb_address_is_a_one_line_error() -> None:
    for bad in ("nope", "70000"):
        r = subprocess.run([*PRIVLAB, "run", "--gdb", bad, "--user", "hello"],
                           capture_output=True, text=True, timeout=TIMEOUT, check=False)
        assert r.returncode == 2
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("privlab: --gdb"), r.stderr


def test_port_in_use_is_a_one_line_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = subprocess.run([*PRIVLAB, "run", "--gdb", str(port), "--user", "hello"],
                           capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "cannot listen on 127.0.0.1" in r.stderr, r.stderr


def test_wait_without_gdb_is_bad_input() -> None:
    r = subprocess.run([*PRIVLAB, "run", "--wait", "--user", "hello"], capture_output=True,
                       text=True, timeout=TIMEOUT, check=False)
    assert r.returncode == 2 and "--wait needs --gdb" in r.stderr


@pytest.mark.parametrize(("text", "message"), [
    ("+80", "not a port number: '+80'"), ("1_000", "not a port number: '1_000'"),
    (" 1234", "not a port number: ' 1234'"), ("0x10", "not a port number: '0x10'"),
    ("localhost:", "not a port number: ''"), ("[::1]", "no port in '[::1]'"),
    ("[::1]:", "not a port number: ''"), ("70000", "port 70000 is out of range")])
def test_gdb_address_must_end_in_a_decimal_port(text: str, message: str) -> None:
    with pytest.raises(BadInput, match=re.escape(message)):
        parse_address(text)


@pytest.mark.parametrize(("text", "host", "port"), [
    ("1234", "127.0.0.1", 1234), (":0", "127.0.0.1", 0), ("0.0.0.0:99", "0.0.0.0", 99),
    ("[::1]:5", "::1", 5), ("localhost:7", "localhost", 7)])
def test_gdb_address_forms(text: str, host: str, port: int) -> None:
    assert parse_address(text) == Address(host, port)
