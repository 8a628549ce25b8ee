"""`privlab translate` says at which point of the run it looked, and, when the walk
fails there, that the page may be mapped later and how to look later (--at)."""

from __future__ import annotations

import pytest

from privlab.cli.main import main


def test_a_failed_walk_says_where_it_looked_and_suggests_at(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["translate", "0x20000000", "--no-drive", "--user", "mmap"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "looked at syscall:*: event #" in out and "(user_ecall)" in out
    assert "PTE not valid" in out
    assert ("not mapped at syscall:*: a page the program maps later is not there yet; "
            "look later with --at (syscall:NAME, the Kth such call: syscall:NAME:K, "
            "instret:N)") in out


def test_a_walk_that_succeeds_says_where_it_looked_and_no_more(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["translate", "0x10000", "--no-drive", "--user", "hello"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("looked at syscall:*: event #")
    assert "not mapped" not in out
