"""Ctrl-C in gdb stops a running guest; a debugging session leaves the guest's trace
exactly as a plain run makes it (time does not advance while stopped)."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Callable

import pytest
from machine.asm import build_asm

from gdb.helpers import GDB, GDB_TIMEOUT, Served, boot, gdb_argv
from privlab.abi.csr import Priv
from privlab.build.images import Images
from privlab.gdb.stub import Stub
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_bare
from privlab.trace import TrapEvent

Gdb = Callable[..., str]
Serve = Callable[..., Served]
LONG = ["1000000000"]                      # compute: minutes of work
TIMER = ("quiet", "timer_hz=10000")        # a time slice every 100,000 instructions
RUNNING = 5_000_000                        # past boot: the program is computing
WAIT = 20.0
M_TIMER = 7


def wait_until_running(s: Served) -> None:
    deadline = time.monotonic() + WAIT
    while s.machine.hart.state.instret < RUNNING:
        assert time.monotonic() < deadline, "the guest never got going"
        time.sleep(0.05)


@pytest.mark.skipif(GDB is None, reason="gdb-multiarch is not installed (.ci/run installs it)")
def test_ctrl_c_in_gdb_interrupts_a_running_guest(served: Serve, images: Images) -> None:
    s = served("compute", LONG, flags=TIMER)
    proc = subprocess.Popen(gdb_argv(images, s.port, ["continue", "p $priv", "p/x $pc",
                                                      "kill"], user="compute"),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_until_running(s)
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=GDB_TIMEOUT)
    finally:
        proc.kill()
    assert "Program received signal SIGINT" in out, out
    assert "killed" in out, out
    result = s.finish()
    assert result.stop is Stop.USER and result.instret > RUNNING


def test_debugging_session_leaves_the_trace_of_a_plain_run(
        served: Serve, gdb: Gdb, images: Images) -> None:
    args = ["200000", "2"]
    plain = boot(images, "compute", args, TIMER)
    assert plain.run().stop is Stop.HALT
    expected = [e.to_json() for e in plain.events]
    assert any(e.get("interrupt") for e in expected)   # time matters in this run
    s = served("compute", args, flags=TIMER)
    out = gdb(s.port, ["break compute.c:11", "continue", "continue 40", "p $pc", "stepi 60",
                       "info registers", "p $sstatus", "p $mip", "p $time", "monitor csr",
                       "monitor traps", "x/8xw $sp", "info breakpoints", "delete",
                       "break syscall.c:syscall", "continue 3", "stepi 25", "delete",
                       "continue"], user="compute")
    assert "exited normally" in out, out
    assert re.search(r"breakpoint already hit 4[0-9] times", out), out
    assert re.search(r"Breakpoint 2, syscall", out), out
    s.finish()
    assert [e.to_json() for e in s.machine.events] == expected
    assert s.machine.console.text() == plain.console.text()


# -- single steps and interrupt timing ---------------------------------------------
# A run takes a due timer interrupt at the next block boundary; a step that starts a
# block holds it back to that block's end too (harness/native/hooks.c, irq_from), and
# a stepped wfi waits as a run does (Machine.step).

STEPS_BEFORE = 30


def test_single_steps_across_a_timer_deadline_leave_the_trace_of_a_plain_run(
        images: Images) -> None:
    plain = boot(images, "compute", ["200000", "2"], TIMER)
    assert plain.run().stop is Stop.HALT
    expected = [e.to_json() for e in plain.events]
    ticks = [e for e in plain.events if isinstance(e, TrapEvent) and e.interrupt
             and e.code == M_TIMER and e.priv_from is Priv.U][:3]
    mid_block = 0
    for tick in ticks:
        m = boot(images, "compute", ["200000", "2"], TIMER)
        try:
            m.run(max_insns=tick.instret - STEPS_BEFORE)   # a block boundary, as plain
            s = m.hart.state
            if s.mtimecmp * s.ns_per_tick - s.idle_ns >= tick.instret:
                continue        # due on a block boundary: a step takes it there too
            mid_block += 1
            stub = Stub(m)
            for _ in range(2 * STEPS_BEFORE):
                assert stub.dispatch(b"s") == b"T05thread:1;"
            assert stub.dispatch(b"c") == b"W00"
            assert [e.to_json() for e in m.events] == expected, tick
        finally:
            m.close()
    if not mid_block:
        pytest.skip("no timer interrupt of this run falls due inside a block")


def test_a_stepped_wfi_waits_for_the_interrupt_as_in_a_run() -> None:
    image = load_elf(build_asm(WFI_LOOP, "rv64"))
    plain, stepped = Machine(image.xlen), Machine(image.xlen)
    try:
        boot_bare(plain, image)
        boot_bare(stepped, image)
        assert plain.run().stop is Stop.HALT
        stub = Stub(stepped)
        for _ in range(10_000):
            if stub.dispatch(b"s") != b"T05thread:1;":
                break
        assert [e.to_json() for e in stepped.events] == [e.to_json() for e in plain.events]
    finally:
        plain.close()
        stepped.close()


WFI_LOOP = """
    li t0, PLATFORM_CLINT_BASE + CLINT_MTIMECMP
    li t1, 5
    sd t1, 0(t0)
    li t0, 0x80
    csrw mie, t0
    csrsi mstatus, 8
loop:
    wfi
    j loop
    .align 2
trap:
    li t1, PLATFORM_CLINT_BASE + CLINT_MTIMECMP
    ld t2, 0(t1)
    addi t2, t2, 5
    sd t2, 0(t1)
    addi a1, a1, 1
    li t3, 3
    bge a1, t3, done
    mret
done:
    PASS
"""
