"""System calls as a trace shows them: decoded from the kernel's syscall table.

Each argument's C type in kernel/syscall.tbl says how to show it: integers signed or
not, `const char *` followed by a `size_t` as a buffer of that length, a lone
`const char *` as a string, `char *const *` as a string array, `const struct T *` as
that struct, read at the call, and a pointer to non-const data as an output, read
when the call returns. A few arguments are shown by name, from the constants of
kernel/include/abi.h: openat's flags, signal numbers and sets of signals. Memory is read through the
calling process's page table (harness/trace/capture.py) at the exact moment of the
ecall or of the sret, when the trace can stop there; otherwise a pointer is shown as
its address.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import NoReturn

from ..abi.syscall_table import Syscall
from ..kernelinfo.dwarf_types import StructValue

__all__ = [
    "ArgKind",
    "ArgSpec",
    "CallSpec",
    "Captured",
    "SyscallRecord",
    "call_specs",
    "escape_bytes",
    "is_failure",
    "open_flags_text",
    "signal_names",
    "signal_set_text",
    "signal_text",
    "struct_text",
    "to_signed",
]

MAX_SHOWN = 48       # bytes of a buffer or string shown before "..."


class ArgKind(Enum):
    INT = "int"            # signed integer
    UINT = "uint"          # size_t and other unsigned integers
    ADDR = "addr"          # a pointer whose target is not shown (void *)
    BUF_IN = "buf_in"      # const char *buf with a length argument
    STR_IN = "str_in"      # const char *path: NUL-terminated
    STRV_IN = "strv_in"    # char *const *argv: NULL-terminated array of strings
    BUF_OUT = "buf_out"    # char *buf with a length: filled by the kernel, ret bytes
    STRUCT_IN = "struct_in"  # const struct T *: read at the call
    OUT = "out"            # T *: filled by the kernel (struct, int)
    OPEN_FLAGS = "oflags"  # openat's flags: O_RDONLY | O_CREATE ... (abi.h)
    SIGNAL = "signal"      # a signal number: SIGUSR1 (abi.h)
    SIGNAL_SET = "sigset"  # a set of signals, bit (1 << signum) each: SIGINT|SIGUSR1

    @property
    def is_input(self) -> bool:
        return self in (ArgKind.BUF_IN, ArgKind.STR_IN, ArgKind.STRV_IN, ArgKind.STRUCT_IN)

    @property
    def is_output(self) -> bool:
        return self in (ArgKind.BUF_OUT, ArgKind.OUT)


@dataclass(frozen=True)
class ArgSpec:
    """One argument of a system call: its name, C type and how it is shown."""
    name: str
    ctype: str
    kind: ArgKind
    length_arg: int | None = None     # index of the length argument of a buffer
    target: str | None = None         # pointed-to type of an OUT argument ("struct timeval")


@dataclass(frozen=True)
class CallSpec:
    """A system call as its table declares it: number, name, arguments and return type."""
    number: int
    name: str
    args: tuple[ArgSpec, ...]
    returns: str
    noreturn: bool


_UNSIGNED = ("size_t", "unsigned", "uint", "uintptr_t")
_LENGTH_NAMES = ("len", "n", "count", "size")   # an integer after a buffer, by its name


def _is_length(arg: tuple[str, str] | None) -> bool:
    """Whether `arg` gives the length of the buffer before it: a size_t (the rCore
    ABI) or an integer named like a length (xv6's `int n`)."""
    if arg is None:
        return False
    name, ctype = arg
    return "size_t" in ctype or ("*" not in ctype and name in _LENGTH_NAMES)


def _classify(args: list[tuple[str, str]]) -> tuple[ArgSpec, ...]:
    out: list[ArgSpec] = []
    for i, (name, ctype) in enumerate(args):
        t = " ".join(ctype.split())
        length = i + 1 if _is_length(args[i + 1] if i + 1 < len(args) else None) else None
        if t.count("*") >= 2:
            out.append(ArgSpec(name, t, ArgKind.STRV_IN))
        elif t in ("const char *", "char const *"):
            kind = ArgKind.BUF_IN if length is not None else ArgKind.STR_IN
            out.append(ArgSpec(name, t, kind, length))
        elif t == "char *":
            kind = ArgKind.BUF_OUT if length is not None else ArgKind.ADDR
            out.append(ArgSpec(name, t, kind, length))
        elif "*" in t:
            target = t.replace("*", "").replace("const", "").strip()
            if target.startswith("struct ") and t.startswith("const"):
                kind = ArgKind.STRUCT_IN
            elif target == "void" or t.startswith("const"):
                kind = ArgKind.ADDR
            else:
                kind = ArgKind.OUT
            out.append(ArgSpec(name, t, kind, target=target))
        else:
            kind = ArgKind.UINT if t.startswith(_UNSIGNED) else ArgKind.INT
            out.append(ArgSpec(name, t, kind))
    return tuple(out)


# Arguments shown by name, by (call, argument): the bundled ABI's openat flags and
# signals (xv6's kill has no signal argument, so it is left alone).
_FLAG_ARGS = {("openat", "flags"): ArgKind.OPEN_FLAGS,
              ("kill", "signum"): ArgKind.SIGNAL,
              ("sigaction", "signum"): ArgKind.SIGNAL,
              ("sigprocmask", "mask"): ArgKind.SIGNAL_SET}


def _with_flags(name: str, specs: tuple[ArgSpec, ...]) -> tuple[ArgSpec, ...]:
    return tuple(ArgSpec(a.name, a.ctype, _FLAG_ARGS[(name, a.name)])
                 if (name, a.name) in _FLAG_ARGS else a for a in specs)


def call_specs(table: list[Syscall]) -> dict[int, CallSpec]:
    """The syscall table with each argument classified, by number."""
    return {c.number: CallSpec(c.number, c.name, _with_flags(c.name, _classify(c.args)),
                               c.returns, c.noreturn)
            for c in table}


@cache
def _open_flags() -> dict[str, int]:
    return {k: v for k, v in _abi_defines().items() if k.startswith("O_")}


def open_flags_text(value: int) -> str:
    """openat's flags by name, from abi.h: "O_WRONLY|O_CREATE"; unknown bits in hex."""
    flags = _open_flags()
    mask = flags["O_ACCMODE"]
    modes = {v: k for k, v in flags.items() if k in ("O_RDONLY", "O_WRONLY", "O_RDWR")}
    parts = [modes.get(value & mask, f"{value & mask:#x}")]
    rest = value & ~mask
    for name, bit in flags.items():
        if name in ("O_ACCMODE", "O_RDONLY", "O_WRONLY", "O_RDWR") or not rest & bit:
            continue
        parts.append(name)
        rest &= ~bit
    if rest:
        parts.append(f"{rest:#x}")
    return "|".join(parts)


@cache
def _abi_defines() -> dict[str, int]:
    from ..abi.platform import parse_defines
    from ..paths import ABI_HEADER
    return parse_defines(ABI_HEADER)


_SIGNAL_NAME = re.compile(r"SIG[A-Z0-9]+")   # SIGUSR1; not SIG_DFL, not NSIG


@cache
def signal_names() -> dict[int, str]:
    """Signal numbers and their names, from abi.h's SIG* constants."""
    return {v: k for k, v in _abi_defines().items() if _SIGNAL_NAME.fullmatch(k)}


def signal_text(value: int) -> str:
    """A signal number by name ("SIGUSR1"); anything else as a signed number."""
    signum = to_signed(value, 32)
    return signal_names().get(signum, str(signum))


def signal_set_text(value: int) -> str:
    """A set of signals (bit 1 << signum each) by name: "SIGINT|SIGUSR1"; "0" for none,
    other bits in hex."""
    value &= (1 << 32) - 1
    parts = [name for n, name in sorted(signal_names().items()) if value & (1 << n)]
    rest = value & ~sum(1 << n for n in signal_names())
    if rest:
        parts.append(f"{rest:#x}")
    return "|".join(parts) or "0"


def _sigaction_text(v: StructValue) -> str:
    handler = v.get_int("handler")
    names = {value: name for name, value in _abi_defines().items()
             if name in ("SIG_DFL", "SIG_IGN")}
    mask = signal_set_text(v.get_int("mask"))
    return f"{{handler={names.get(handler, hex(handler))}, mask={mask}}}"


# Structs shown in their own terms rather than member by member in decimal.
_STRUCT_TEXT = {"sigaction": _sigaction_text}


def struct_text(v: StructValue) -> str | None:
    """How a struct argument reads, if it has its own form (struct sigaction)."""
    form = _STRUCT_TEXT.get(v.type.name)
    return form(v) if form is not None else None


def is_failure(ret: int | None) -> bool:
    """Whether a call that returned `ret` (None: has not returned) failed."""
    return ret is not None and ret < 0


def to_signed(value: int, bits: int) -> int:
    """`value` (its low `bits` bits) as a two's-complement number: how a register
    holding a return value or an `int` argument reads. The one sign conversion of
    the harness."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def escape_bytes(data: bytes, limit: int = MAX_SHOWN) -> str:
    """A C-like quoted string: printable ASCII as is, \\n \\t \\0 and \\xNN escapes."""
    out = []
    for b in data[:limit]:
        if b == 0x0A:
            out.append("\\n")
        elif b == 0x09:
            out.append("\\t")
        elif b == 0x00:
            out.append("\\0")
        elif b in (0x22, 0x5C):
            out.append("\\" + chr(b))
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append(f"\\x{b:02x}")
    return '"' + "".join(out) + '"' + ("..." if len(data) > limit else "")


@dataclass(frozen=True)
class Captured:
    """What a pointer argument pointed to: `text` for display, `data` as read."""

    text: str
    data: bytes = b""


class _Nothing(dict[int, Captured]):
    """No memory captured: one shared, empty, read-only mapping for every call that has
    none (a dict of its own for each would be a third of what making a call costs). A
    dict, so that reading it is as fast as reading a call's own."""

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("a call's captures are replaced whole, never changed in place")

    __setitem__ = __delitem__ = update = setdefault = pop = popitem = clear = _read_only
    # a default a dataclass accepts (dict leaves __hash__ None): it never changes
    __hash__ = object.__hash__     # type: ignore[assignment]


NOTHING: Mapping[int, Captured] = _Nothing()


@dataclass(eq=False, slots=True)
class SyscallRecord:
    """One system call: the ecall that made it and the sret that returned from it
    (the trap flow pairs them, harness/trace/flow.py). Graded tests see these too
    (`KernelRun.trace.syscalls()`)."""

    number: int
    spec: CallSpec | None
    args: tuple[int, ...]           # a0..a5 at the ecall
    entry_seq: int
    entry_instret: int
    epc: int
    satp: int
    xlen: int
    pid: int | None = None
    process: str | None = None      # the process's name, when known
    tid: int = 0                    # the thread that made it (kernel/thread.c), when known
    ret: int | None = None          # a0 at the return, signed
    exit_seq: int | None = None
    exit_instret: int | None = None
    outcome: str = "pending"        # returned | noreturn | new image | pending
                                    # (a sigreturn that resumed: noreturn)
    child_seq: int | None = None    # fork: the child's return (its first sret), if seen
    inputs: Mapping[int, Captured] = NOTHING     # by argument: read at the ecall
    outputs: Mapping[int, Captured] = NOTHING    # and at the return (capture.py)

    @property
    def name(self) -> str:
        return self.spec.name if self.spec else f"syscall_{self.number}"

    @property
    def failed(self) -> bool:
        return is_failure(self.ret)

    def arg_text(self, i: int, outputs: bool = True) -> str:
        """Argument i as shown in a call: captured memory (what an output argument
        received, unless not `outputs`), else the number."""
        if outputs and i in self.outputs:
            return self.outputs[i].text
        if i in self.inputs:
            return self.inputs[i].text
        value = self.args[i] if i < len(self.args) else 0
        spec = self.spec.args[i] if self.spec and i < len(self.spec.args) else None
        if spec is None or spec.kind == ArgKind.INT:
            return str(to_signed(value, self.xlen)) if spec else f"{value:#x}"
        if spec.kind == ArgKind.UINT:
            return str(value)
        if spec.kind == ArgKind.OPEN_FLAGS:
            return open_flags_text(value & ((1 << 32) - 1))
        if spec.kind == ArgKind.SIGNAL:
            return signal_text(value)
        if spec.kind == ArgKind.SIGNAL_SET:
            return signal_set_text(value)
        return f"{value:#x}" if value else "NULL"

    def call_text(self, outputs: bool = True) -> str:
        """`name(args)`, with what output arguments received (as strace shows a call
        once it returned) or, without `outputs`, their pointers (as at the ecall)."""
        n = len(self.spec.args) if self.spec else 6
        return f"{self.name}({', '.join(self.arg_text(i, outputs) for i in range(n))})"

    def __str__(self) -> str:
        """`write(1, 0x3fffffdd58, 14) -> 14`: the call and how it ended."""
        return f"{self.call_text()} -> {self.ret_text()}"

    def ret_text(self) -> str:
        if self.outcome == "noreturn":
            return "does not return"
        if self.outcome == "new image":
            return f"{self.ret} (new program image)"
        if self.ret is None:
            return "?"
        return str(self.ret)
