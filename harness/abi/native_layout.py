"""Layouts shared by the native core (C) and Python, as data.

The state block Python reads and writes directly, the trap/xRET event record and the
stop reasons are declared here once. `gen_header()` renders them, with the spec's
numbers from privlab/abi/spec_header.py, as `privlab_gen.h` for the C side, and
`SharedState`/`EventRecord` are the matching ctypes structures, so the two sides
cannot drift apart.
"""

from __future__ import annotations

import ctypes
import struct
from enum import IntEnum

from .unicorn_abi import UNICORN_CONSTANTS

TYPE_CHECKING = False

__all__ = [
    "EVENT_FIELDS",
    "EVENT_STRUCT",
    "HOST_WATCHES",
    "MAX_HARTS",
    "SHARED_FIELDS",
    "TURN_FIELDS",
    "EventKind",
    "EventRecord",
    "SharedState",
    "StopReason",
    "TurnState",
    "c_struct",
    "gen_header",
    "scalars",
]

U64, U32, U8 = "uint64_t", "uint32_t", "uint8_t"
_CTYPES = {U64: ctypes.c_uint64, U32: ctypes.c_uint32, U8: ctypes.c_uint8}


HOST_WATCHES = 64
"""Debugger watch slots in the core (trigger.c), one per watched page (harness/gdb/watch.py)."""

MAX_HARTS = 8
"""Harts a machine may have: QEMU's virt board takes up to 8 in one socket."""


class StopReason(IntEnum):
    """Why the native core asked Unicorn to stop (`shared.stop_reason`)."""

    NONE = 0
    BUDGET = 1  # the instruction budget (--max-insns) ran out
    WFI = 2  # wfi with nothing pending: the run loop fast-forwards time
    STORM = 3  # the same trap kept re-firing with no progress
    EVENTS_FULL = 4  # the event buffer needs draining
    BREAKPOINT = 5  # a debugger breakpoint address was reached
    STEP = 6  # single-step finished one instruction
    HALT = 7  # a device (finisher, HTIF) ended the run
    USER = 8  # the host asked to stop (Ctrl-C, a debugger interrupt)
    EVENT = 9  # an event matched the stop conditions (stop_* fields)
    RESUME = 10  # restart Unicorn at once (it frees deleted hooks only then): guard.c
    POLL = 11  # instret reached poll_at: the run loop looks at live console input
    WATCH = 12  # a debugger watchpoint: the hart is before the access (watch_addr)
    RETRY = 13  # a single step ran nothing (an access to a watched page): step again


class EventKind(IntEnum):
    TRAP = 1
    XRET = 2


# (name, C type, meaning). The state block: Python reads and writes these fields in
# place; the C core's private state follows it in `struct hart`.
SHARED_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("instret", U64, "instructions retired"),
    ("idle_ns", U64, "guest time skipped while the hart waited in wfi"),
    ("others_instret", U64, "instructions the other harts have retired (set at each of "
                            "this hart's turns; events' clock)"),
    ("budget", U64, "stop when instret reaches this (UINT64_MAX: no limit)"),
    ("mtimecmp", U64, "CLINT timer compare, in timebase ticks"),
    ("mip_sw", U64, "mip bits written by software: SSIP, STIP, SEIP"),
    ("mip_ext", U64, "mip bits driven by interrupt lines (MEIP, SEIP)"),
    ("stop_pc", U64, "pc where the core stopped (diagnostics)"),
    ("unmapped_addr", U64, "address of the last access to unmapped memory"),
    ("break_addr", U64, "debugger breakpoint hit"),
    ("storm_epc", U64, "epc of a detected trap storm"),
    ("storm_tval", U64, "tval of a detected trap storm"),
    ("storm_cause", U64, "raw cause of a detected trap storm"),
    ("events_total", U64, "events recorded since reset, drained or not"),
    ("events_dropped", U64, "events lost because the buffer was full"),
    ("stop_at_event", U64, "stop once events_total reaches this"),
    ("stop_exceptions", U64, "stop after a trap whose exception code's bit is set"),
    ("stop_interrupts", U64, "stop after a trap whose interrupt code's bit is set"),
    ("ns_per_tick", U32, "guest nanoseconds per timebase tick (100 at 10 MHz)"),
    ("msip", U32, "CLINT msip bit 0"),
    ("xlen", U32, "32 or 64"),
    ("stop_reason", U32, "a StopReason"),
    ("unmapped_type", U32, "Unicorn uc_mem_type of that access"),
    ("storm_limit", U32, "identical no-progress traps that make a storm"),
    ("record_events", U32, "nonzero: record trap and xRET events"),
    ("ev_len", U32, "events in the buffer"),
    ("ev_cap", U32, "capacity of the buffer"),
    ("step", U32, "nonzero: single-stepping (the block hook does not count)"),
    ("stop_on_xret", U32, "nonzero: stop after every xRET"),
    ("stop_on_priv_change", U32, "nonzero: stop after an event that changes privilege"),
    ("budget_exact", U32, "nonzero: stop before a block that would cross the budget"),
    ("icount_shift", U32, "guest time per instruction: 2^icount_shift ns (QEMU -icount shift)"),
    ("poll_at", U64, "stop (StopReason.POLL) when instret reaches this (UINT64_MAX: never)"),
    ("watch_addr", U64, "physical address of the access a debugger watchpoint stopped"),
    ("watch_write", U32, "nonzero: that access was a store"),
    ("hart_id", U32, "this hart's mhartid (0..N-1 with --smp N)"),
    ("shared_code", U32, "nonzero: other harts may rewrite code (fence.i flushes Unicorn's)"),
    ("pmp_open_when_empty", U32, "nonzero: QEMU before 7.0's rule, with no PMP entry active "
                                 "S and U access everything and mret may return to them"),
)

# One trap or xRET. For a trap: epc/tval/cause as the guest reads them, pc = the
# vector entered. For an xRET: epc = address of the xRET, pc = where it returned.
EVENT_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("instret", U64, "instructions retired before the event"),
    ("clock", U64, "instructions every hart had retired before the event (the count "
                   "--at instret:N uses): instret plus the other harts' (one hart: instret)"),
    ("cause", U64, "raw xcause (traps)"),
    ("epc", U64, "trap: xepc; xret: address of the xRET instruction"),
    ("tval", U64, "trap: xtval"),
    ("pc", U64, "pc after the event"),
    ("status_before", U64, "mstatus before"),
    ("status_after", U64, "mstatus after"),
    ("satp", U64, "satp at the event"),
    ("a0", U64, "a0..a7 at the event"),
    ("a1", U64, ""),
    ("a2", U64, ""),
    ("a3", U64, ""),
    ("a4", U64, ""),
    ("a5", U64, ""),
    ("a6", U64, ""),
    ("a7", U64, ""),
    ("code", U32, "exception or interrupt code; xret: 0 mret, 1 sret"),
    ("kind", U8, "an EventKind"),
    ("interrupt", U8, "1 for an interrupt"),
    ("priv_from", U8, "privilege before"),
    ("priv_to", U8, "privilege after"),
    ("hart", U8, "mhartid of the hart the event happened on"),
)


# (name, C type, count, meaning). The turns of several harts as the native core runs
# them back to back (harness/native/turns.c, harness/machine/schedule.py): Python
# fills in the schedule and the run's limits, the core hands back where it stopped.
TURN_FIELDS: tuple[tuple[str, str, int, str], ...] = (
    ("harts", U32, 1, "harts in the machine"),
    ("current", U32, 1, "the hart whose turn is under way"),
    ("turn_end", U64, 1, "the instret that turn ends at"),
    ("rng", U64, 1, "the schedule's SplitMix64 state"),
    ("round", U32, MAX_HARTS, "the rest of the round, drawn from the end"),
    ("round_len", U32, 1, "how many of round are left"),
    ("waiting", U8, MAX_HARTS, "nonzero: the hart waits in wfi"),
    ("quantum_min", U32, 1, "a turn's instructions: quantum_min to quantum_max"),
    ("quantum_max", U32, 1, ""),
    ("insn_limit", U64, 1, "machine-wide instret at which the run's budget ends"),
    ("look_at", U64, 1, "machine-wide instret at which Python looks (input, checkpoints)"),
    ("poll_insns", U64, 1, "live input: each turn's poll_at this far ahead (0: none)"),
    ("attention", U32, 1, "nonzero: Python must look before another turn begins"),
    ("ran_mask", U32, 1, "bit k: hart k ran in this chain"),
    ("ev_buf", U64, 1, "host address of the event records of turns already over"),
    ("ev_cap", U32, 1, "records ev_buf holds"),
    ("ev_len", U32, 1, "records in it"),
    ("clock_ns", U64, 1, "guest time all harts agreed on at the last switch"),
    ("chained", U64, 1, "turns the core began by itself, every chain together"),
)


def _ctypes_fields(fields: tuple[tuple[str, str, str], ...]) -> list[tuple[str, type]]:
    return [(n, _CTYPES[t]) for n, t, _ in fields]


def _ctypes_arrays(fields: tuple[tuple[str, str, int, str], ...]) -> list[tuple[str, type]]:
    return [(n, _CTYPES[t] * c if c > 1 else _CTYPES[t]) for n, t, c, _ in fields]


class _Record(ctypes.Structure):
    """A ctypes mirror of a generated C struct; every field is an integer."""

    if TYPE_CHECKING:
        def __getattr__(self, name: str) -> int: ...

        def __setattr__(self, name: str, value: int) -> None: ...


class SharedState(_Record):
    _fields_ = _ctypes_fields(SHARED_FIELDS)


class EventRecord(_Record):
    _fields_ = _ctypes_fields(EVENT_FIELDS)


class TurnState(ctypes.Structure):
    _fields_ = _ctypes_arrays(TURN_FIELDS)


def _event_struct() -> struct.Struct:
    """EVENT_FIELDS as `struct` unpacks them, with the C compiler's tail padding (the
    record is 8-byte aligned), so bulk readers step record by record."""
    codes = {U64: "Q", U32: "I", U8: "B"}
    fmt = "<" + "".join(codes[t] for _, t, _ in EVENT_FIELDS)
    padded = struct.Struct(fmt + "x" * (ctypes.sizeof(EventRecord) - struct.calcsize(fmt)))
    assert padded.size == ctypes.sizeof(EventRecord)
    return padded


EVENT_STRUCT = _event_struct()
"""The event record as `struct` reads it (`EVENT_STRUCT.iter_unpack(raw)`)."""


def c_struct(tag: str, fields: tuple[tuple[str, str, int, str], ...]) -> list[str]:
    """A C struct of (name, C type, count, meaning) fields; count > 1 is an array."""
    lines = [f"struct {tag} {{"]
    for name, ctype, count, doc in fields:
        comment = f"  /* {doc} */" if doc else ""
        array = f"[{count}]" if count > 1 else ""
        lines.append(f"    {ctype} {name}{array};{comment}")
    lines.append("};")
    return lines


def scalars(fields: tuple[tuple[str, str, str], ...]) -> tuple[tuple[str, str, int, str], ...]:
    """(name, C type, meaning) fields as c_struct takes them: each a single value."""
    return tuple((name, ctype, 1, doc) for name, ctype, doc in fields)


def gen_header() -> str:
    """The text of privlab_gen.h (the spec's numbers from spec_header.py, imported
    only when the core is built)."""
    from . import spec_header

    lines = [
        "/* Generated by harness/abi/native_layout.py: do not edit. */",
        "#ifndef PRIVLAB_GEN_H",
        "#define PRIVLAB_GEN_H",
        "#include <stdint.h>",
        "",
        spec_header.render(None, host=True),
        "/* mstatus.SD is the top bit: one per XLEN, as the core serves both. */",
        f"#define MSTATUS64_SD {1 << 63:#x}ull",
        f"#define MSTATUS32_SD {1 << 31:#x}ull",
        "",
    ]
    lines.append(f"#define HOST_WATCHES {HOST_WATCHES}")
    lines.append(f"#define MAX_HARTS {MAX_HARTS}")
    lines += [f"#define STOP_{r.name} {int(r)}" for r in StopReason]
    lines += [f"#define EV_{k.name} {int(k)}" for k in EventKind]
    lines.append("")
    lines += c_struct("hart_shared", scalars(SHARED_FIELDS))
    lines.append("")
    lines += c_struct("hart_event", scalars(EVENT_FIELDS))
    lines.append("")
    lines += c_struct("turn_state", TURN_FIELDS)
    lines += ["", "/* The Unicorn numbers Python passes (harness/abi/unicorn_abi.py), checked",
              " * against Unicorn's own headers, which the core includes before this one. */"]
    lines += [f'_Static_assert({name} == {value}, "harness/abi/unicorn_abi.py: {name}");'
              for name, value in UNICORN_CONSTANTS.items()]
    lines += ["", "#endif", ""]
    return "\n".join(lines)
