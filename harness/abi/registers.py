"""The integer registers' names: x0..x31 and their psABI names.

One table for the inspectors, the Python API and the GDB target description. x8 is
`s0` (the psABI's first name for it); `fp` is accepted everywhere as its alias, and
the GDB target description names it `fp`, as gdb's own RISC-V feature does.
"""

from __future__ import annotations

__all__ = ["ABI_NAMES", "FRAME_POINTER", "register_number"]

ABI_NAMES: tuple[str, ...] = (
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1",
    "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7",
    "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11",
    "t3", "t4", "t5", "t6",
)
"""Integer register ABI names (RISC-V psABI), x0..x31."""

FRAME_POINTER = 8
_ALIASES = {"fp": FRAME_POINTER}


def register_number(name: str) -> int | None:
    """The number of an integer register named `xN`, by its ABI name or `fp`; None
    for anything else."""
    if name in _ALIASES:
        return _ALIASES[name]
    if name in ABI_NAMES:
        return ABI_NAMES.index(name)
    if name.startswith("x") and name[1:].isdigit() and int(name[1:]) < 32 \
            and name[1:] == str(int(name[1:])):
        return int(name[1:])
    return None
