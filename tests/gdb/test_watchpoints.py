"""Watchpoints through the raw protocol: kinds, addresses, removal, determinism."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from gdb.helpers import Served, boot, symbol, symbol_range
from gdb.rsp import Client
from harness.build.images import Images
from harness.machine import Stop

Serve = Callable[..., Served]
Gdb = Callable[..., str]


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


def test_kernel_watchpoint_survives_a_stop_in_user_mode(served: Serve, gdb: Gdb) -> None:
    # gdb removes watchpoints at every stop and inserts them again on every resume:
    # resuming from hello's main (U-mode, whose page table has no kernel) must not fail.
    s = served("hello")
    out = gdb(s.port, ["watch nextpid", "hbreak hello.c:main", "continue", "continue",
                       "p $priv", "continue"])
    assert "Old value = 1" in out and "New value = 2" in out, out
    assert "Breakpoint 2, main (" in out, out
    assert "Could not insert" not in out, out
    assert "exited normally" in out, out



def test_user_watchpoint_keeps_watching_the_same_bytes_from_the_kernel(
        served: Serve, gdb: Gdb, images: Images) -> None:
    # compute's parent waits for two children; the kernel's copyout stores each exit
    # status into `status` on the user stack. gdb inserts the watchpoint again at every
    # resume, also while the kernel runs, where the same virtual address is a kernel
    # stack: it must stay on the user's bytes, so every hit is a store by memmove.
    # The watch is set once the first status has arrived (line 32): until then fork
    # shares the stack page copy-on-write (kernel/cow.c), and the first copyout moves
    # the parent's bytes to a frame of their own, which a watchpoint bound to the
    # shared frame would not follow (docs/gdb.md, Watchpoints).
    s = served("compute", ["2000", "3"])
    out = gdb(s.port, ["break compute.c:32", "continue", "delete", "watch -l status",
                       *["continue"] * 8], user="compute")
    pcs = [int(pc, 16) for pc in re.findall(r"watch hit at 0x[0-9a-f]+ by the "
                                             r"instruction at (0x[0-9a-f]+)", out)]
    start, size = symbol_range(images.kernel, "memmove")
    assert pcs and all(start <= pc < start + size for pc in pcs), (pcs, out)
    assert "exited normally" in out, out


def test_watchpoint_not_mapped_where_first_inserted_is_refused_cleanly(
        served: Serve, gdb: Gdb) -> None:
    # From hello's main the kernel is not mapped: gdb cannot insert the watchpoint and
    # says so; privlab's reason goes to its own terminal, never into gdb's packet stream.
    s = served("hello")
    out = gdb(s.port, ["hbreak hello.c:main", "continue", "watch nextpid", "continue",
                       "p $priv", "delete", "continue"])
    assert "Could not insert hardware watchpoint 2" in out, out
    assert "Remote failure reply" not in out and "privlab: cannot watch" not in out, out
    assert "$1 = 0" in out and "exited normally" in out, out
    assert "cannot watch 0x" in s.log.getvalue()
