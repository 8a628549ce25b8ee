"""What the trace package's C pairer (harness/trace/pairer.c) and its Python side
(harness/trace/pairer.py, flow.py, and the grader's resume rules) share, as data: the
kinds of system call the pairing rules tell apart, the actions the pairer reports and
the two records it hands back (a call made, an action). jsonl.c's rows written whole
(harness/trace/jsonl.py) share with Python how an argument reads (ArgForm), why the
writing stopped (FlowStop), the pid of no known process (NOBODY) and the spec's table
(struct jsonl_calls).

`gen_header()` renders them, with the event record and the spec's numbers, as
`trace_gen.h` for the C side; `CALL` and `ACTION` are the same records as
`struct.Struct`s for Python. Nothing is written twice.
"""

from __future__ import annotations

import struct
from enum import IntEnum, IntFlag

from . import spec_header
from .native_layout import EVENT_FIELDS, EventKind, c_struct, scalars

__all__ = [
    "ACTION",
    "ACTION_FIELDS",
    "ALARM",
    "CALL",
    "CALL_FIELDS",
    "ECALL_INSN",
    "JSONL_CALLS_FIELDS",
    "NOBODY",
    "SIGNALS",
    "ArgForm",
    "CallKind",
    "FlowStop",
    "Op",
    "gen_header",
]

ECALL_INSN = 4
"""Bytes of an ecall: it is never compressed, so a call returns to its epc + 4."""
SIGNALS = 64
"""Signal numbers the pairer follows: 0..63 (the kernel's NSIG fits)."""
ALARM = 0
"""The signal number a handler started by a timer tick (an alarm) goes by."""


class CallKind(IntFlag):
    """What the pairing rules need to know of a system call number."""

    NORETURN = 1 << 0     # exit and the like: no sret comes back to it
    FORK = 1 << 1         # returns twice: in the parent, and first in the child
    EXEC = 1 << 2         # returns (on success) into a new image, at its entry
    KILL = 1 << 3         # kill(pid, signum): a handler may run before the next return
    SIGALARM = 1 << 4     # sigalarm(ticks, handler): timer ticks may enter the handler
    SIGRETURN = 1 << 5    # returns to where the handler interrupted, not to epc + 4


class Op(IntEnum):
    """What the pairer concluded from an event (ACTION's op; c, id, ret, x, y as said)."""

    RETURN = 1        # call #id returned at seq with ret, x its instret (c: 1 a new image)
    NORETURN = 2      # call #id will not return (c: 1 it is complete at seq)
    FORGET = 3        # call #id is waited for no more: its thread went away
    CHILD = 4         # the sret at seq is fork #id's child's first return
    SBI = 5           # the ecall from S at seq is an SBI call (x: a7, y: a6)
    ENTER = 6         # the sret at seq first enters thread (y: satp, c: tid)
    DISOWN = 7        # address space y has no process any more (id: calls made by the next)
    MOVE = 8          # exec: the process of address space x now owns y (id: as DISOWN)
    SIG_ENTER = 9     # the sret at seq enters the handler for signal c (ALARM: an alarm)
    SIG_BACK = 10     # the sret at seq is back from the handler for signal c
    SIG_RETURNED = 11  # the trap at seq is how the handler for signal c returned


class ArgForm(IntEnum):
    """How a system call's argument reads in its call text when nothing was read from
    memory for it (jsonl.c writes these; the rest are Python's: harness/trace/syscalls.py)."""

    HEX = 0           # a call with no spec: every argument 0x..., zero too
    INT = 1           # signed, at the machine's XLEN
    UINT = 2          # unsigned, as the register holds it
    POINTER = 3       # 0x... or NULL
    TEXT = 4          # named flags, signals: formatted by Python


class FlowStop(IntEnum):
    """Why jsonl.c's jsonl_flow stopped writing rows (harness/trace/jsonl.py)."""

    ALL = 0           # every event it was given is written
    TAIL = 1          # the next event needs a tail Python makes, then it goes on
    PYTHON = 2        # Python shows the next event and what follows
    FULL = 3          # the buffer has no room for another row


NOBODY = -(1 << 63)
"""The pid jsonl_flow is given for a call whose process is not known (null)."""


I64, U64, U32 = "int64_t", "uint64_t", "uint32_t"
_FORMATS = {I64: "q", U64: "Q", U32: "I"}

# (name, C type, count, meaning)
CALL_FIELDS: tuple[tuple[str, str, int, str], ...] = (
    ("seq", I64, 1, "the ecall's event number"),
    ("tid", U64, 1, "the thread that made it (0: not known)"),
    ("instret", U64, 1, "instructions retired at the ecall"),
    ("epc", U64, 1, "the ecall's address"),
    ("satp", U64, 1, "the address space it was made in"),
    ("number", U64, 1, "a7: the system call number"),
    ("args", U64, 6, "a0..a5"),
)

ACTION_FIELDS: tuple[tuple[str, str, int, str], ...] = (
    ("op", U32, 1, "an Op"),
    ("c", U32, 1, "a flag or a signal number, by op"),
    ("seq", I64, 1, "the event it concerns"),
    ("id", I64, 1, "the call it concerns; DISOWN, MOVE: calls made by the next of them"),
    ("ret", I64, 1, "RETURN: the value returned"),
    ("x", U64, 1, "by op"),
    ("y", U64, 1, "by op"),
)


JSONL_CALLS_FIELDS: tuple[tuple[str, str, int, str], ...] = (
    ("name", "const char *const *", 1, "[number]: an identifier; NULL: no spec (syscall_N)"),
    ("nargs", "const uint8_t *", 1, "[number]: the arguments the spec names"),
    ("form", "const uint8_t *", 1, "[number * 6 + i]: how argument i reads, an ArgForm"),
    ("flags", "const uint8_t *", 1, "[number]: its CallKind"),
    ("numbers", U32, 1, "the numbers the arrays cover"),
    ("xlen", U32, 1, "the machine's XLEN: the width of an int argument"),
)
"""struct jsonl_calls: what jsonl.c needs to write a system call's line, from the spec
(harness/trace/jsonl.py makes it, with ctypes fields from this list)."""


def _layout(fields: tuple[tuple[str, str, int, str], ...]) -> struct.Struct:
    return struct.Struct("<" + "".join(f"{n if n > 1 else ''}{_FORMATS[t]}"
                                        for _, t, n, _ in fields))


CALL = _layout(CALL_FIELDS)
"""struct pair_call, as Python unpacks it (args flattened: a0..a5 last)."""
ACTION = _layout(ACTION_FIELDS)
"""struct pair_action, as Python unpacks it."""


def _defines() -> list[str]:
    out = [f"#define ECALL_INSN {ECALL_INSN}", f"#define SIGNALS {SIGNALS}",
           f"#define ALARM {ALARM}"]
    out += [f"#define CALL_{k.name} {int(k)}" for k in CallKind]
    out += [f"#define ACT_{op.name} {int(op)}" for op in Op]
    out += [f"#define FORM_{form.name} {int(form)}" for form in ArgForm]
    out += [f"#define FLOW_{stop.name} {int(stop)}" for stop in FlowStop]
    out += [f"#define NOBODY ((int64_t)INT64_MIN)  /* {NOBODY} */"]
    return out


def gen_header() -> str:
    """The text of trace_gen.h: the event record (as the native core writes it), the
    pairing constants and records, and the spec's numbers."""
    lines = ["/* Generated by harness/abi/pairing.py: do not edit. */",
             "#ifndef TRACE_GEN_H", "#define TRACE_GEN_H", "#include <stdint.h>", "",
             spec_header.render(None, host=True)]
    lines += [f"#define EV_{k.name} {int(k)}" for k in EventKind]
    lines += ["", *c_struct("hart_event", scalars(EVENT_FIELDS)),
              "", *_defines(), "",
              *c_struct("pair_call", CALL_FIELDS), "",
              *c_struct("pair_action", ACTION_FIELDS), "",
              *c_struct("jsonl_calls", JSONL_CALLS_FIELDS), "",
              "/* Python unpacks these records with no padding: the compiler must agree. */",
              f'_Static_assert(sizeof(struct pair_call) == {CALL.size}, "pair_call");',
              f'_Static_assert(sizeof(struct pair_action) == {ACTION.size}, "pair_action");',
              "", "#endif", ""]
    return "\n".join(lines)
