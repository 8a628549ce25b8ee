"""Watchpoints through the raw protocol: kinds, addresses, removal, determinism."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from gdb.helpers import Served, boot, symbol, symbol_range
from gdb.rsp import Client
from privlab.build.images import Images
from privlab.machine import Stop

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
    assert any(f"hit at {nextpid:#x}: the " in t for t in c.console)
    assert c.ask(b"z%d,%x,4" % (kind, nextpid)) == b"OK"
    assert c.ask(b"c") == b"W00"


def _pc(c: Client) -> int:
    return int.from_bytes(bytes.fromhex(c.ask(b"p20").decode()), "little")


def _word(c: Client, addr: int) -> int:
    return int.from_bytes(bytes.fromhex(c.ask(b"m%x,4" % addr).decode()), "little")


def _continue_to_exit(c: Client, most: int = 10) -> list[bytes]:
    """The replies to `c` until the guest exits (W00), at most `most` of them."""
    replies = [c.ask(b"c")]
    while replies[-1] != b"W00" and len(replies) < most:
        replies.append(c.ask(b"c"))
    return replies


# RISC-V major opcodes (ISA manual, opcode map): what the stopped instruction must be.
OP_LOAD, OP_STORE = 0x03, 0x23


@pytest.mark.parametrize(("kind", "opcode"), [(2, OP_STORE), (3, OP_LOAD), (4, OP_LOAD)])
def test_watchpoint_stops_at_the_access_before_it_happens(
        served: Serve, images: Images, kind: int, opcode: int) -> None:
    # allocproc reads nextpid (1) and stores 2: a watch stops at that store, with
    # nextpid still 1; rwatch and awatch at the load before it. One step then makes
    # the access (the watchpoint still inserted) and stops at the next instruction.
    s = served("hello")
    nextpid = symbol(images.kernel, "nextpid")
    start, size = symbol_range(images.kernel, "allocproc")
    c = Client(s.port)
    assert c.ask(b"Z%d,%x,4" % (kind, nextpid)) == b"OK"
    assert c.ask(b"c").startswith(b"T05")
    pc = _pc(c)
    assert start <= pc < start + size, hex(pc)
    insn = int.from_bytes(s.machine.read_virtual(pc, 4), "little")
    assert insn & 0x7F == opcode, f"{insn:#010x} at {pc:#x}"
    assert any(f"by the instruction at {pc:#x} (physical {nextpid:#x}), stopped before it"
               in t for t in c.console), c.console
    assert _word(c, nextpid) == 1
    before = s.machine.hart.state.instret
    assert c.ask(b"s").startswith(b"T05")
    assert _pc(c) == pc + 4 and s.machine.hart.state.instret == before + 1
    assert _word(c, nextpid) == (2 if opcode == OP_STORE else 1)


def test_watchpoint_ignores_other_bytes_of_its_page(served: Serve, images: Images) -> None:
    # nextpid's neighbours on the same page are read and written all through boot;
    # none of those accesses stops, and the run's trace is the plain run's.
    plain = boot(images, "hello")
    plain.run()
    s = served("hello")
    nextpid = symbol(images.kernel, "nextpid")
    c = Client(s.port)
    assert c.ask(b"Z2,%x,1" % (nextpid + 3)) == b"OK"    # nextpid's top byte: 0 stays 0
    replies = _continue_to_exit(c)
    # Each store to nextpid (sw covers its top byte) stops; nothing else does.
    assert len(replies) > 1 and replies[-1] == b"W00"
    assert all(r.startswith(b"T05watch:%x;" % (nextpid + 3)) for r in replies[:-1]), replies
    assert s.finish().stop is Stop.HALT
    assert [e.to_json() for e in s.machine.events] == [e.to_json() for e in plain.events]


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
    replies = _continue_to_exit(c)
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
    pcs = [int(pc, 16) for pc in re.findall(r"watch hit at 0x[0-9a-f]+: the store by the "
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
