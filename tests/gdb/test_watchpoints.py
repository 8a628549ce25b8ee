"""Watchpoints through the raw protocol: kinds, addresses, removal, determinism."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gdb.helpers import Served, boot, symbol
from gdb.rsp import Client
from harness.build.images import Images
from harness.machine import Stop

Serve = Callable[..., Served]


@pytest.mark.parametrize(("kind", "key"), [(2, b"watch"), (3, b"rwatch"), (4, b"awatch")])
def test_watchpoint_kind_is_reported_with_the_watched_address(
        served: Serve, images: Images, kind: int, key: bytes) -> None:
    s = served("hello")
    nextpid = symbol(images.kernel, "nextpid")
    c = Client(s.port)
    assert c.ask(b"Z%d,%x,4" % (kind, nextpid)) == b"OK"
    assert c.ask(b"c") == b"T05%s:%x;thread:1;" % (key, nextpid)
    assert any(f"hit at {nextpid:#x} by the instruction at" in t for t in c.console)
    assert c.ask(b"z%d,%x,4" % (kind, nextpid)) == b"OK"
    assert c.ask(b"c") == b"W00"


def test_watchpoint_on_unmapped_memory_is_refused(served: Serve) -> None:
    c = Client(served("hello").port)
    assert c.ask(b"Z2,40000000,8").startswith(b"E")   # nothing there at reset


def test_watchpoint_stops_do_not_change_the_trace(served: Serve, images: Images) -> None:
    plain = boot(images, "hello")
    plain.run()
    s = served("hello")
    nextpid = symbol(images.kernel, "nextpid")
    c = Client(s.port)
    assert c.ask(b"Z4,%x,4" % nextpid) == b"OK"
    replies = [c.ask(b"c")]
    while replies[-1] != b"W00" and len(replies) < 10:
        replies.append(c.ask(b"c"))
    assert replies[0].startswith(b"T05awatch") and replies[-1] == b"W00", replies
    assert s.finish().stop is Stop.HALT
    assert [e.to_json() for e in s.machine.events] == [e.to_json() for e in plain.events]
