"""The guest's clock: how much guest time one instruction takes.

privlab's clock counts instructions, as QEMU's `-icount shift=N`: each retired
instruction advances `mtime`'s nanoseconds by 2^N, so a run is the same on any host.
The shift is QEMU's: 0 is 1 ns per instruction (cycle-for-cycle with `-icount
shift=0`), 10 is 1.024 us.

The default is chosen by measurement against what users compare with, QEMU's defaults
(no -icount: guest time is host time). There a hart retires far fewer instructions per
guest second than one per nanosecond: 0.35 million U->S->U round trips fit in 100 ms of
guest time against 12-14 million at shift 0 (benchmarks/clock_pace.py), 20 to 40 times
less work per tick. Shift 5 (32 ns, about 31 million instructions per guest second)
sits in that range, so time-paced work (a sleep test, xv6's kill tests, a 10 ms time
slice) costs about what it costs on QEMU's defaults, while a 10 ms slice is still
312,500 instructions, enough for a scheduler test to see preemption. Every trace,
report and replay command records the shift a run used.

Kept free of the machine: the command line reads it for --help.
"""

from __future__ import annotations

from .errors import BadInput

__all__ = ["DEFAULT_ICOUNT_SHIFT", "MAX_ICOUNT_SHIFT", "check_icount_shift"]

DEFAULT_ICOUNT_SHIFT = 5     # 32 ns of guest time per instruction
MAX_ICOUNT_SHIFT = 10        # as QEMU's -icount shift=N


def check_icount_shift(shift: int) -> None:
    """QEMU's range for -icount shift=N: 0 (1 ns per instruction) to 10 (1.024 us)."""
    if not 0 <= shift <= MAX_ICOUNT_SHIFT:
        raise BadInput(f"icount shift must be 0 to {MAX_ICOUNT_SHIFT} (2^N ns of guest time "
                       f"per instruction), not {shift}")
