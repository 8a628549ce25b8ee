"""Lab 12: sigalarm(ticks, handler) runs a user handler after every `ticks` timer
ticks the process spends in U, and sigreturn resumes the interrupted code exactly.

The graded machine ticks at 1000 Hz, one tick per 1,000,000 instructions, on a
deterministic clock: the same test parameters give the same run, tick for tick.
"""

import random
import re

import pytest

from privlab.grade import KernelUnderTest
from privlab.grade.checks import alarm_trace

LOOPS_PER_TICK = 15_625  # lab_alarm's spin loops are 64 instructions a loop


@pytest.mark.points(2)
def test_the_kernel_calls_the_handler(privlab_kernel: KernelUnderTest,
                                      privlab_rng: random.Random) -> None:
    """alarmtest's test0: sigalarm(ticks, handler), then a loop until the handler has
    run once."""
    ticks = privlab_rng.randint(1, 4)
    run = privlab_kernel.run("lab_alarm", "once", privlab_kernel.token, ticks)
    run.expect_pass()
    assert "alarm!" in run.lines(), "the handler's own line is missing"


@pytest.mark.points(3)
def test_the_handler_runs_again_and_again_and_the_loop_it_stops_loses_nothing(
        privlab_kernel: KernelUnderTest, privlab_rng: random.Random) -> None:
    """alarmtest's test1: ten alarms while a loop calls a function that counts its
    calls through a pointer; the loop's and the function's counts agree only if every
    alarm resumed at the interrupted instruction with every register as it was."""
    ticks = privlab_rng.randint(1, 3)
    run = privlab_kernel.run("lab_alarm", "many", privlab_kernel.token, ticks, 10)
    run.expect_pass()


@pytest.mark.points(2)
def test_a_running_handler_is_not_entered_again(privlab_kernel: KernelUnderTest,
                                                privlab_rng: random.Random) -> None:
    """alarmtest's test2: a handler that runs through many ticks, each completing an
    interval, is not entered again before its sigreturn (it stops the alarm before
    returning, so there is no second alarm at all)."""
    ticks = privlab_rng.randint(1, 3)
    run = privlab_kernel.run("lab_alarm", "slow", privlab_kernel.token, ticks, 6 * ticks + 4)
    run.expect_pass()


@pytest.mark.points(1)
def test_sigreturn_gives_back_the_interrupted_a0(privlab_kernel: KernelUnderTest,
                                                 privlab_rng: random.Random) -> None:
    """alarmtest's test3: a loop holds 0xac in a0 through an alarm; sigreturn's own
    return value must not overwrite it."""
    run = privlab_kernel.run("lab_alarm", "a0", privlab_kernel.token, privlab_rng.randint(1, 3))
    run.expect_pass()


@pytest.mark.points(2)
def test_every_register_survives_the_alarms(privlab_kernel: KernelUnderTest,
                                            privlab_rng: random.Random) -> None:
    """Random values in every register but sp, gp and tp, a spin through at least
    three alarms whose handler puts -1 in every register it can before sigreturn, and
    the values must all be there afterwards."""
    ticks = privlab_rng.randint(1, 3)
    loops = LOOPS_PER_TICK * ticks * 5
    run = privlab_kernel.run("lab_alarm", "regs", privlab_kernel.token,
                             privlab_rng.randint(1, 10**9), ticks, loops, 3)
    run.expect_pass()


@pytest.mark.points(2)
def test_one_alarm_per_interval_and_none_after_sigalarm_0(privlab_kernel: KernelUnderTest,
                                                          privlab_rng: random.Random) -> None:
    """A spin of a few intervals: the handler runs after exactly the ticks that
    complete an interval (counted from the machine's trace: the timer interrupts that
    stopped the process in U), as many times as the program counted, and never again
    once sigalarm(0, 0) stopped the alarm."""
    ticks = privlab_rng.randint(2, 4)
    intervals = privlab_rng.randint(4, 6)
    run = privlab_kernel.run("lab_alarm", "count", privlab_kernel.token, ticks,
                             LOOPS_PER_TICK * ticks * intervals)
    run.expect_pass()
    alarm = alarm_trace(run)
    assert alarm.ticks == ticks
    assert alarm.entered == alarm.due, (
        f"{alarm.ticks_while_set} ticks with sigalarm({ticks}, handler) should have entered "
        f"the handler after the ticks #{alarm.due}; it was entered after #{alarm.entered}")
    assert len(alarm.due) >= intervals - 1
    printed = re.search(r"^alarms (\d+)$", run.output, re.M)
    assert printed is not None and int(printed[1]) == len(alarm.due), (
        f"the program counted {printed[1] if printed else '?'} alarms, the trace shows "
        f"{len(alarm.due)}")
    assert alarm.ticks_after_stop >= ticks and alarm.entered_after_stop == 0, (
        f"{alarm.entered_after_stop} alarms in {alarm.ticks_after_stop} ticks after "
        "sigalarm(0, 0)")
