"""Several harts under the stub: one gdb thread per hart (hart k is thread k + 1),
Hg/Hc select the hart registers come from and a step runs, stop replies name the
hart a run stopped on, and real gdb's `info threads` lists every hart."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from machine.asm import build_asm

from gdb.helpers import Served, boot, serve, serving_bare, symbol
from gdb.rsp import Client
from privlab.build.images import Images
from privlab.machine import load_elf

# Hart 0 spins on `flag`; hart 1 counts, reaches `only1`, sets the flag; hart 0 then
# powers off. Harts past 1 wait in wfi.
PROGRAM = """
    csrr s0, mhartid
    bnez s0, 2f
1:  lw t0, flag
    beqz t0, 1b
    PASS
2:  li t0, 1
    bne s0, t0, 4f
    li t1, 3000
3:  addi t1, t1, -1
    bnez t1, 3b
    .globl only1
only1:
    li t0, 1
    sw t0, flag, t1
4:  wfi
    j 4b
    .data
flag: .word 0
"""


@pytest.fixture
def elf() -> Path:
    return build_asm(PROGRAM)


@pytest.fixture
def served(elf: Path) -> Iterator[Callable[[int], Served]]:
    with serving_bare() as make:
        yield lambda harts: make(load_elf(elf), harts)


def reg(c: Client, num: int) -> int:
    return int.from_bytes(bytes.fromhex(c.ask(b"p%x" % num).decode()), "little")


def test_each_hart_is_a_thread(served: Callable[[int], Served]) -> None:
    s = served(3)
    c = Client(s.port)
    assert c.ask(b"qfThreadInfo") == b"m1,2,3"
    assert c.ask(b"qsThreadInfo") == b"l"
    assert c.ask(b"qC") == b"QC1"
    assert [c.ask(b"T%x" % t) for t in (1, 3, 4)] == [b"OK", b"OK", b"E01"]
    assert bytes.fromhex(c.ask(b"qThreadExtraInfo,3").decode()) == b"hart 2"
    for thread, hart in ((2, 1), (3, 2), (1, 0)):     # a0 = the hart id at reset
        assert c.ask(b"Hg%x" % thread) == b"OK"
        assert reg(c, 10) == hart
        assert c.ask(b"qC") == b"QC%x" % thread
    assert c.ask(b"Hg5") == b"E01"


def test_a_step_runs_the_selected_hart_only(served: Callable[[int], Served]) -> None:
    s = served(2)
    c = Client(s.port)
    assert c.ask(b"Hc2") == b"OK"
    assert c.ask(b"s") == b"T05thread:2;"
    assert c.ask(b"vCont;s:2;c") == b"T05thread:2;"   # the others stay (all-stop)
    assert [h.state.instret for h in s.machine.harts] == [0, 2]
    assert c.ask(b"vCont;s:1") == b"T05thread:1;"
    assert [h.state.instret for h in s.machine.harts] == [1, 2]
    assert c.ask(b"qC") == b"QC1"


def test_a_breakpoint_stops_on_the_hart_that_reached_it(
        served: Callable[[int], Served], elf: Path) -> None:
    s = served(2)
    c = Client(s.port)
    only1 = symbol(elf, "only1")
    assert c.ask(b"Z0,%x,4" % only1) == b"OK"
    assert c.ask(b"c") == b"T05thread:2;"
    assert reg(c, 32) == only1                         # the pc of thread 2 (hart 1)
    assert c.ask(b"Hg1") == b"OK"
    assert reg(c, 32) != only1                         # hart 0 is elsewhere
    assert c.ask(b"z0,%x,4" % only1) == b"OK"
    assert c.ask(b"c").startswith(b"W00")


def test_a_watchpoint_stops_whichever_hart_makes_the_access(images: Images) -> None:
    """The bundled system on two harts (hart 1 waits in the firmware): a watchpoint
    inserted while thread 2 is selected stops hart 0's store to it."""
    s = serve(boot(images, "hello", smp=2))
    try:
        c = Client(s.port)
        nextpid = symbol(images.kernel, "nextpid")
        assert c.ask(b"Hg2") == b"OK"
        assert c.ask(b"Z2,%x,4" % nextpid) == b"OK"
        assert c.ask(b"c") == b"T05watch:%x;thread:1;" % nextpid
        assert c.ask(b"z2,%x,4" % nextpid) == b"OK"
        assert c.ask(b"c") == b"W00"
        s.finish()
    finally:
        s.server.quit()
        s.thread.join(30)
        s.machine.close()


def test_one_hart_is_one_thread(served: Callable[[int], Served]) -> None:
    s = served(1)
    c = Client(s.port)
    assert c.ask(b"qfThreadInfo") == b"m1"
    assert c.ask(b"T2") == b"E01"
    assert c.ask(b"s") == b"T05thread:1;"


def test_gdb_info_threads_shows_every_hart(served: Callable[[int], Served], elf: Path,
                                           gdb_bare: Callable[..., str]) -> None:
    s = served(3)
    out = gdb_bare(s.port, [f"file {elf}", "info threads", "thread 2", "stepi",
                            "info threads", "p $a0", "kill"])
    assert "Thread 1 (hart 0)" in out and "Thread 3 (hart 2)" in out, out
    assert "[Switching to thread 2 (Thread 2)]" in out, out
    assert "$1 = 1" in out, out
    assert [h.state.instret for h in s.machine.harts] == [0, 1, 0]


def test_reverse_stepi_on_two_harts_undoes_each_threads_step(
        served: Callable[[int], Served]) -> None:
    """Steps of thread 2, then thread 1 (each hart alone, the other stays); bs undoes
    them one by one, newest first, each reply naming the thread whose step it undid,
    with that hart's pc and every hart's instret as before the step."""
    s = served(2)
    c = Client(s.port)
    m = s.machine
    moments: list[tuple[list[int], int, int]] = []     # (instrets, thread, its pc)
    for thread in (2, 2, 2, 1, 1, 2):
        assert c.ask(b"Hc%x" % thread) == b"OK"
        moments.append(([int(h.state.instret) for h in m.harts], thread,
                        m.harts[thread - 1].pc))
        assert c.ask(b"s") == b"T05thread:%x;" % thread
    assert [h.state.instret for h in m.harts] == [2, 4]
    for instrets, thread, pc in reversed(moments):
        assert c.ask(b"bs") == b"T05thread:%x;" % thread
        assert [h.state.instret for h in m.harts] == instrets
        assert c.ask(b"Hg%x" % thread) == b"OK"
        assert reg(c, 32) == pc
    # At the start of the recording: the thread whose step was recorded next.
    assert c.ask(b"bs") == b"T05replaylog:begin;thread:2;"
    # Forward again from the start: a run in the schedule's order ends as before.
    assert c.ask(b"c").startswith(b"W00")


def test_reverse_continue_on_two_harts_returns_to_the_breakpoint_hit(
        served: Callable[[int], Served], elf: Path) -> None:
    """Hart 1 reaches only1 once, while both harts run in turns; from the end of the
    counting loop on, bc returns there, on thread 2, as the forward run had it."""
    s = served(2)
    c = Client(s.port)
    m = s.machine
    only1 = symbol(elf, "only1")
    assert c.ask(b"Z0,%x,4" % only1) == b"OK"
    assert c.ask(b"c") == b"T05thread:2;"
    at = [int(h.state.instret) for h in m.harts]
    pcs = [h.pc for h in m.harts]
    assert c.ask(b"z0,%x,4" % only1) == b"OK"
    for _ in range(3):                                 # hart 1 on to its wfi
        assert c.ask(b"s") == b"T05thread:2;"
    assert c.ask(b"Z0,%x,4" % only1) == b"OK"
    assert c.ask(b"bc") == b"T05thread:2;"
    assert [int(h.state.instret) for h in m.harts] == at
    assert [h.pc for h in m.harts] == pcs
    assert c.ask(b"z0,%x,4" % only1) == b"OK"
    assert c.ask(b"c").startswith(b"W00")


def test_two_harts_advertise_reverse_execution(served: Callable[[int], Served]) -> None:
    """Going back no longer needs one hart: the stub records a machine of two."""
    s = served(2)
    c = Client(s.port)
    reply = c.ask(b"qSupported:multiprocess+;swbreak+")
    assert b"ReverseStep+" in reply and b"ReverseContinue+" in reply
    assert "no reverse execution" not in s.log.getvalue()
