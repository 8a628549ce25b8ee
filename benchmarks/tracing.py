"""Tracing and inspectors on vs off, on a syscall-heavy program. Goal: at most 1.3x.

    python benchmarks/tracing.py [MS]        # default: sleep 50, about 45,000 system calls

`sleep MS` waits by calling yield() and get_time() in a loop, so nearly every one of
its ~91,000 events is a system call or its return. Measured, best of several runs
each (the host is shared; CPU time of this process, which runs the hart too), each
run starting from a collected heap (the garbage of the run before would otherwise
land a full collection in some runs and not others):

  off      Machine.run as `privlab run` does it: events not kept
  on       Session.run (every event kept, the tracer attached), then the whole flow
           analysed (every call decoded and paired with its return, processes
           named), a syscall summary and the last 50 timeline rows rendered
  capture  the same with memory capture (the run stops at every ecall and xRET to
           read string and buffer arguments): what `privlab trace` does by default;
           shown for information, it is not held to the goal
"""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Callable
from io import StringIO

from common import run_user_program

from privlab.api import Session
from privlab.build.images import Images, build_images
from privlab.inspect import SyscallSummary, TrapTimeline, make_console
from privlab.machine import Stop
from privlab.trace.flow import FlowFilter

GOAL = 1.3
REPEAT = 5


def off(images: Images, ms: str) -> float:
    gc.collect()            # each side starts from a collected heap, not the last one's garbage
    return run_user_program(images, "sleep", [ms], clock=time.process_time)


def on(images: Images, ms: str, capture: bool = False) -> tuple[float, int, int]:
    s = Session.boot("sleep", [ms], images=images, capture=capture)
    gc.collect()
    start = time.process_time()
    result = s.run()
    flow = s.flow
    out = StringIO()
    console = make_console(width=100, file=out, color=False)
    console.print(SyscallSummary(flow.syscalls))
    console.print(TrapTimeline(flow.rows(FlowFilter(seq=(len(flow) - 50, None))), 64))
    took = time.process_time() - start
    calls, events = len(flow.syscalls), len(flow)
    if result.stop is not Stop.HALT or any(c.ret is None and c.outcome != "noreturn"
                                           for c in flow.syscalls[:-1]):
        sys.exit("the traced run did not decode every call")
    s.close()
    return took, calls, events


def best(fn: Callable[[], float]) -> float:
    return min(fn() for _ in range(REPEAT))


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    ms = args[0] if args else "50"
    images = build_images("rv64", listings=False)
    t_off, t_on, calls, events = [], [], 0, 0
    for _ in range(REPEAT):            # interleaved, so both see the same host load
        t_off.append(off(images, ms))
        t, calls, events = on(images, ms)
        t_on.append(t)
    base, traced = min(t_off), min(t_on)
    t_cap, _, _ = on(images, ms, capture=True) if "--no-capture" not in sys.argv else (0.0, 0, 0)
    print(f"sleep {ms}: {events} events, {calls} system calls")
    print(f"  off      {base:6.2f} s CPU")
    print(f"  on       {traced:6.2f} s CPU   {traced / base:.2f}x   (goal <= {GOAL}x)")
    print(f"  capture  {t_cap:6.2f} s CPU   {t_cap / base:.2f}x   (one run; not held to the goal)")
    print(f"  per call: {1e6 * (traced - base) / max(calls, 1):.1f} us of tracing")
    return 0 if traced / base <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
