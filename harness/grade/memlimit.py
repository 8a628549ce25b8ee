"""How much memory one grading's test processes may take: the address-space
limit `harness/course/confinement.py` sets on each of them, so one submission cannot starve
a batch worker. 16 GiB unless PRIVLAB_GRADE_MEMORY says otherwise (`64G`, `6144M`):
the grader reads it when it starts a test process, which inherits the limit.

A guest run that reaches it fails its test with one line (`MEMORY_LINE`), not a
traceback: the grade plugin reports a MemoryError so.
"""

from __future__ import annotations

import os
import re
import resource

from ..errors import BadInput

__all__ = ["DEFAULT_GRADE_MEMORY", "GRADE_MEMORY_ENV", "MIN_GRADE_MEMORY", "grade_memory",
           "memory_line"]

GRADE_MEMORY_ENV = "PRIVLAB_GRADE_MEMORY"
# Address space, not resident memory: Unicorn reserves 1 GiB of translation cache per
# hart up front, touched only as code is translated. Machine.close gives it back at
# once, so a test process holds the reservations of the machines alive at a time, not
# of every machine it booted: grading the locks lab (three harts, four scheduling
# seeds) peaked at 3.3 GiB of address space and 203 MiB resident per test process.
# 16 GiB leaves room for an eight-hart machine (8 GiB of caches) and another alive
# beside it. What a guest can make resident is bounded elsewhere (the devices'
# per-request bounds, the history budget); this limit is the backstop for what
# nothing else bounds.
DEFAULT_GRADE_MEMORY = 16 << 30
MIN_GRADE_MEMORY = 2 << 30     # below this not even one hart's engine and RAM fit


def grade_memory() -> int:
    """Bytes of address space per test process: $PRIVLAB_GRADE_MEMORY or 16 GiB."""
    text = os.environ.get(GRADE_MEMORY_ENV, "").strip()
    if not text:
        return DEFAULT_GRADE_MEMORY
    m = re.fullmatch(r"(\d+)\s*([MGT]?)(?:i?B)?", text, re.IGNORECASE)
    if m is None:
        raise BadInput(f"{GRADE_MEMORY_ENV}={text!r}: not a size (try 8G or 6144M)")
    n = int(m.group(1)) << (10 * "  MGT".index(m.group(2).upper() or " "))
    if n < MIN_GRADE_MEMORY:
        raise BadInput(f"{GRADE_MEMORY_ENV}={text!r}: below the least a test process "
                       f"needs, {MIN_GRADE_MEMORY >> 30} GiB")
    return n


def memory_line() -> str:
    """The one line for a test whose run ran out of memory, naming the limit in force
    and how to raise it."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return "the run ran out of memory: no address-space limit"
    gib = soft / (1 << 30)
    return (f"the run ran out of memory: the grader's limit of {gib:g} GiB per test "
            f"process (raise it with {GRADE_MEMORY_ENV}, e.g. "
            f"{GRADE_MEMORY_ENV}={max(2 * gib, 2):g}G)")
