"""Lab 12 hidden tests: the machine's own view of each alarm (registers at the trap
and at the resumption, the exact trap sequence), alarms and signals taking turns,
hostile handlers, the calls that must fail, and exec."""

import random
import re

import pytest

from privlab.abi.csr import Exc, Irq, Priv
from privlab.grade import AfterTrap, AfterXret, KernelUnderTest
from privlab.grade.checks import alarm_trace
from privlab.trace import TrapEvent, XretEvent

LOOPS_PER_TICK = 15_625  # lab_alarm's spin loops are 64 instructions a loop
REGISTER_NAMES = ["zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1",
                  "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7",
                  "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"]


@pytest.mark.points(3)
def test_the_registers_at_the_resumed_pc_are_those_the_alarm_interrupted(
        privlab_kernel: KernelUnderTest, privlab_rng: random.Random) -> None:
    """The harness stops the machine at every timer interrupt from U (the hart at
    the trap vector, the user's registers not yet saved: what the trap frame must
    hold) and at every sret to U. For each alarm, the sret that comes back to the
    interrupted pc after the handler must bring back all 31 registers exactly."""
    ticks = privlab_rng.randint(1, 3)
    run = privlab_kernel.boot("lab_alarm", "regs", privlab_kernel.token,
                              privlab_rng.randint(1, 10**9), ticks,
                              LOOPS_PER_TICK * ticks * 6, 4)
    last: tuple[TrapEvent, tuple[int, ...]] | None = None
    waiting: dict[int, tuple[TrapEvent, tuple[int, ...]]] = {}  # satp -> interrupted
    handler: int | None = None
    compared = 0
    while (e := run.run_until(AfterTrap(code=int(Irq.S_TIMER), interrupt=True),
                              AfterXret("sret"))) is not None:
        if isinstance(e, TrapEvent):
            if e.priv_from == Priv.U:
                last = (e, run.registers())
            continue
        assert isinstance(e, XretEvent)
        if e.priv_to != Priv.U:
            continue
        if handler is None:
            calls = [c for c in run.trace.syscalls("sigalarm") if c.ret == 0 and c.args[0]]
            handler = calls[0].args[1] if calls else None
        if (handler is not None and e.pc == handler and last is not None
                and last[0].satp == e.satp and last[0].epc != handler):
            waiting[e.satp] = last
        elif e.satp in waiting and e.pc == waiting[e.satp][0].epc:
            trap, before = waiting.pop(e.satp)
            after = run.registers()
            wrong = [f"{REGISTER_NAMES[n]} {after[n]:#x} (was {before[n]:#x})"
                     for n in range(1, 32) if after[n] != before[n]]
            assert not wrong, (f"back at {trap.epc:#x} after the alarm of timer interrupt "
                               f"#{trap.seq}: " + ", ".join(wrong))
            compared += 1
    run.expect_pass()
    assert compared >= 4, f"only {compared} alarms came back to the interrupted pc"


@pytest.mark.points(2)
def test_each_alarm_is_a_timer_interrupt_an_sret_to_the_handler_sigreturn_and_an_sret_back(
        privlab_kernel: KernelUnderTest, privlab_rng: random.Random) -> None:
    """The whole loop, event by event, for every alarm: a supervisor timer interrupt
    from U; the sret that ends it going to the handler; inside the handler nothing but
    ticks that resume where they stopped it; its sigreturn ecall; and the sret after
    that going back to the interrupted pc with the interrupted a0."""
    ticks = privlab_rng.randint(1, 3)
    run = privlab_kernel.run("lab_alarm", "count", privlab_kernel.token, ticks,
                             LOOPS_PER_TICK * ticks * 5)
    run.expect_pass()
    alarm = alarm_trace(run)
    assert alarm.entered == alarm.due and len(alarm.loops) >= 4, (
        f"alarms due after the ticks #{alarm.due}, the handler entered after #{alarm.entered}")
    for loop in alarm.loops:
        tick = loop.tick
        assert (tick.interrupt, tick.code, tick.priv_from, tick.priv_to) == (
            True, Irq.S_TIMER, Priv.U, Priv.S)
        assert loop.enter.pc == alarm.handler and loop.enter.priv_to == Priv.U
        for e in loop.inside:   # only ticks, each resuming the handler where it was
            if isinstance(e, TrapEvent):
                assert e.interrupt and e.code == Irq.S_TIMER, (
                    f"the handler trapped (#{e.seq} {e.name}) before its sigreturn")
                resume = e.epc
            else:
                assert e.pc == resume, f"a tick in the handler resumed at {e.pc:#x}"
        assert loop.sigreturn is not None, f"the alarm after tick #{tick.seq} never sigreturned"
        assert (loop.sigreturn.interrupt, loop.sigreturn.code) == (False, Exc.USER_ECALL)
        assert loop.back is not None and loop.back.satp == tick.satp
        assert loop.back.pc == tick.epc, (
            f"interrupted at {tick.epc:#x}, resumed at {loop.back.pc:#x}")
        assert loop.back.a0 == tick.args[0], (
            f"a0 was {tick.args[0]:#x} when interrupted, {loop.back.a0:#x} when resumed")


@pytest.mark.points(1)
def test_ticks_count_while_the_handler_runs_and_a_slow_one_does_not_stop_the_alarm(
        privlab_kernel: KernelUnderTest, privlab_rng: random.Random) -> None:
    """The first alarm's handler runs through more ticks than the interval and keeps
    the alarm: the ticks it takes count (up to the interval), so the first tick after
    its sigreturn brings the next alarm, and the alarm goes on after that."""
    ticks = privlab_rng.randint(2, 3)
    run = privlab_kernel.run("lab_alarm", "keep", privlab_kernel.token, ticks,
                             3 * ticks + 2, 4)
    run.expect_pass()
    alarm = alarm_trace(run)
    first = alarm.loops[0]
    inside = sum(1 for e in first.inside if isinstance(e, TrapEvent) and e.interrupt)
    assert inside >= ticks, f"the slow handler took only {inside} ticks"
    assert alarm.entered == alarm.due, (
        f"alarms due after the ticks #{alarm.due} (the first tick after the slow "
        f"handler's sigreturn is due), the handler entered after #{alarm.entered}")


@pytest.mark.points(2)
def test_the_alarm_handler_and_signal_handlers_take_turns(
        privlab_kernel: KernelUnderTest, privlab_rng: random.Random) -> None:
    """A SIGUSR1 the alarm handler sends itself waits for the alarm's sigreturn; an
    alarm that falls due while a SIGUSR2 handler runs through several ticks waits for
    that handler's sigreturn, and then comes at the first tick."""
    ms = privlab_rng.randint(4, 8)
    run = privlab_kernel.run("lab_alarm", "signals", privlab_kernel.token,
                             privlab_rng.randint(1, 3), ms)
    run.expect_pass()
    # The alarm the SIGUSR2 handler set for every tick: how many ticks passed between
    # that call and its handler's entry, and the signal handler's sigreturn before it.
    alarm = alarm_trace(run, nth=1)
    assert alarm.ticks == 1 and len(alarm.entered) == 1, alarm.entered
    held = alarm.entered[0]
    ticks = [t for t in run.trace.timer_interrupts_from_user()
             if t.satp == alarm.satp and alarm.start.entry_seq < t.seq < held]
    assert len(ticks) >= 2, f"only {len(ticks)} ticks while the signal handler ran"
    sigreturns = [c for c in run.trace.syscalls("sigreturn")
                  if alarm.start.entry_seq < c.entry_seq < held]
    assert len(sigreturns) == 1, "the alarm came before the signal handler's sigreturn"
    last_tick = max(t.seq for t in ticks)
    assert sigreturns[0].entry_seq > last_tick, (
        "a tick after the signal handler's sigreturn came and went without the alarm")


BAD_HANDLERS = {
    "a kernel address": 0x80200000,
    "the trampoline (where a returning signal handler traps)": 0x3FFFFFF000,
    "the trap frame": 0x3FFFFFE000,
    "address 0": 0,
    "beyond the address space": -256,
}


@pytest.mark.points(2)
def test_a_handler_user_code_cannot_execute_kills_the_process_with_a_fault(
        privlab_kernel: KernelUnderTest) -> None:
    """For each address: sigalarm accepts it; the first alarm srets there, the fetch
    faults, and the fault kills the process with the usual line: no kernel panic, no
    loop."""
    for where, addr in BAD_HANDLERS.items():
        run = privlab_kernel.run("lab_alarm", "bad", privlab_kernel.token, addr)
        run.expect_pass()
        shown = addr & ((1 << run.machine.xlen) - 1)
        line = rf"^\[kernel\] pid \d+ \(lab_alarm\) killed: exec_page_fault sepc={shown:#x} "
        assert re.search(line, run.output, re.M), (
            f"no fault line for a handler at {shown:#x}, {where}")
        run.expect_trap(int(Exc.EXEC_PAGE_FAULT), tval=shown, from_priv=Priv.U)
        run.close()


@pytest.mark.points(1)
def test_the_calls_that_must_fail(privlab_kernel: KernelUnderTest) -> None:
    """sigreturn with no handler running (before any alarm, between alarms, after
    sigalarm(0, 0)) returns -1 and changes nothing; sigalarm refuses negative ticks
    and an odd handler address."""
    run = privlab_kernel.run("lab_alarm", "refuse", privlab_kernel.token)
    run.expect_pass()
    assert [c.ret for c in run.trace.syscalls("sigreturn")
            if c.outcome == "returned"] == [-1, -1, -1]


@pytest.mark.points(1)
def test_exec_ends_the_alarm_and_its_handler(privlab_kernel: KernelUnderTest,
                                            privlab_rng: random.Random) -> None:
    """The handler execs the program again: the new image gets no alarm (the old
    handler's address is a function of the new image too) and no frame to sigreturn
    to, through more ticks than the interval."""
    ticks = privlab_rng.randint(1, 3)
    run = privlab_kernel.run("lab_alarm", "exec", privlab_kernel.token, ticks, 4 * ticks + 2)
    run.expect_pass()
    exec_call = next(c for c in run.trace.syscalls("exec") if c.outcome == "new image")
    alarm = alarm_trace(run)
    after = [e for e in run.trace.events if e.seq > (exec_call.exit_seq or 0)]
    ticks_after = [e for e in after if isinstance(e, TrapEvent) and e.interrupt
                   and e.code == Irq.S_TIMER and e.priv_from == Priv.U]
    entries = [e for e in after if isinstance(e, XretEvent) and e.priv_to == Priv.U
               and e.pc == alarm.handler]
    assert len(ticks_after) > ticks and not entries
