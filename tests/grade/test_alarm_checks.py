"""What the alarm lab's graders stand on: `KernelRun.run_until` stops right after a
trap or an xRET with the registers as that event left them, and
`privlab.grade.checks.alarm_trace` reads each alarm off the trace, on real runs of
the reference kernel."""

from __future__ import annotations

import pytest

from privlab.abi.csr import Irq, Priv
from privlab.grade import AfterSyscall, AfterTrap, AfterXret
from privlab.grade.checks import alarm_trace
from privlab.grade.under_test import KernelUnderTest
from privlab.trace import TrapEvent, XretEvent


def test_run_until_stops_after_the_event_with_its_registers(kernel: KernelUnderTest) -> None:
    run = kernel.boot("lab_alarm", "count", kernel.token, 1, 40000)
    call = run.run_until(AfterSyscall(411))
    assert isinstance(call, TrapEvent) and call.priv_from == Priv.U
    regs = run.registers()
    assert regs[0] == 0 and regs[10:18] == call.args     # a0..a7 as the trap saw them
    assert run.machine.hart.pc == call.vector            # at the vector, nothing run yet
    tick = run.run_until(AfterTrap(code=int(Irq.S_TIMER), interrupt=True))
    assert isinstance(tick, TrapEvent) and tick.seq > call.seq
    back = run.run_until(AfterXret("sret"))
    assert isinstance(back, XretEvent) and run.machine.hart.pc == back.pc
    assert run.registers()[10] == back.a0
    run.expect_pass()
    assert run.run_until(AfterXret("sret")) is None       # the run is over
    # The budget a diagnosis reports is what the stops used, not their allowances.
    assert run.budget is not None and run.budget < 3 * 150_000_000


def test_alarm_trace_reads_each_alarm_off_the_trace(kernel: KernelUnderTest) -> None:
    loops = 15_625 * 2 * 5          # ten ticks at 1000 Hz, an alarm every second one
    run = kernel.run("lab_alarm", "count", kernel.token, 2, loops)
    run.expect_pass()
    alarm = alarm_trace(run)
    assert (alarm.ticks, alarm.stop is not None) == (2, True)
    assert alarm.start.args[0] == 2 and alarm.handler == alarm.start.args[1]
    assert alarm.entered == alarm.due and len(alarm.due) == alarm.ticks_while_set // 2 >= 4
    assert alarm.ticks_after_stop >= 8 and alarm.entered_after_stop == 0
    for loop in alarm.loops:
        assert loop.enter.pc == alarm.handler and loop.sigreturn is not None
        assert loop.back is not None and loop.back.pc == loop.tick.epc
    with pytest.raises(Exception, match="expected at least 2 sigalarm"):
        alarm_trace(run, nth=1)
