"""The system-call table: parse kernel/syscall.tbl and generate code from it.

`kernel/syscall.tbl` is the single source of truth for system-call numbers, names and
argument lists. This module reads it for the harness (trace decoding, inspectors,
graders) and generates the C and assembly the kernel and userland are built with:

- `syscall_gen.h`: ``SYS_<name>`` numbers, ``sys_<name>`` prototypes with pointer
  arguments as ``uintptr_t`` user addresses, and (under ``SYSCALL_DISPATCH``) the
  dispatch table that unpacks a0..a5 from ``struct trapframe``;
- `usys.S`: one user stub per call (``li a7, N; ecall; ret``);
- `syscalls.h`: the user-side C prototypes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import BadInput
from ..paths import KERNEL_DIR

__all__ = [
    "ABIS",
    "SYSCALL_TABLE",
    "Syscall",
    "abi_table",
    "generate_kernel_header",
    "generate_user_header",
    "generate_user_stubs",
    "load_syscall_table",
    "syscall_by_number",
]

SYSCALL_TABLE = KERNEL_DIR / "syscall.tbl"
MAX_ARGS = 6  # a0..a5
_ARG_REGS = ("a0", "a1", "a2", "a3", "a4", "a5")
_LINE = re.compile(r"^(\d+)\s+([a-z_][a-z0-9_]*)\s*\((.*)\)\s*->\s*(.+?)\s*$")
_PARAM = re.compile(r"^(.*?[\s*])([A-Za-z_][A-Za-z0-9_]*)$")


@dataclass(frozen=True)
class Syscall:
    """One row of syscall.tbl: `args` are (name, user-side C type) pairs."""

    number: int
    name: str
    args: list[tuple[str, str]]
    returns: str

    def kernel_args(self) -> list[tuple[str, str]]:
        """Arguments as the kernel receives them: pointers become uintptr_t addresses."""
        return [(n, "uintptr_t" if "*" in t else t) for n, t in self.args]

    @property
    def noreturn(self) -> bool:
        return self.name == "exit"


def _parse_param(text: str, where: str) -> tuple[str, str]:
    m = _PARAM.match(text.strip())
    if not m:
        raise BadInput(f"{where}: cannot parse parameter {text.strip()!r}")
    return m.group(2), " ".join(m.group(1).split()).replace(" *", "*").replace("*", " *").strip()


def parse_syscall_table(text: str, source: str = "syscall.tbl") -> list[Syscall]:
    """Parse the table text; raise BadInput naming the line on any error."""
    calls: list[Syscall] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        where = f"{source}:{lineno}"
        m = _LINE.match(line)
        if not m:
            raise BadInput(f"{where}: expected 'NUMBER name(args) -> type', got {line!r}")
        params = m.group(3).strip()
        args = [] if params in ("", "void") else [
            _parse_param(p, where) for p in params.split(",")]
        if len(args) > MAX_ARGS:
            raise BadInput(f"{where}: {m.group(2)} has more than {MAX_ARGS} arguments")
        calls.append(Syscall(int(m.group(1)), m.group(2), args, m.group(4)))
    numbers = [c.number for c in calls]
    names = [c.name for c in calls]
    if len(set(numbers)) != len(numbers) or len(set(names)) != len(names):
        raise BadInput(f"{source}: duplicate syscall number or name")
    return sorted(calls, key=lambda c: c.number)


ABIS: dict[str, Path] = {
    "rcore": SYSCALL_TABLE,                            # the bundled kernel's (rCore/uCore)
    "xv6": Path(__file__).with_name("xv6.tbl"),        # MIT's xv6-riscv
    "ucore": Path(__file__).with_name("ucore.tbl"),    # THU's uCore-Tutorial C kernels
}
"""The system-call tables the inspectors decode with, by `--abi` name (each with its
kernel profile: harness/abi/kernel_profiles.py)."""


def abi_table(name: str) -> list[Syscall]:
    """The table of the ABI called `name`; BadInput naming the choices otherwise."""
    if name not in ABIS:
        raise BadInput(f"unknown ABI {name!r} (choose from {', '.join(ABIS)})")
    return load_syscall_table(ABIS[name])


def load_syscall_table(path: Path = SYSCALL_TABLE) -> list[Syscall]:
    """The system calls of the kernel at `path` (default: the bundled kernel), by number."""
    try:
        text = path.read_text()
    except OSError as e:
        raise BadInput(f"cannot read syscall table {path}: {e.strerror}") from e
    return parse_syscall_table(text, str(path))


def syscall_by_number(table: list[Syscall] | None = None) -> dict[int, Syscall]:
    return {c.number: c for c in (table if table is not None else load_syscall_table())}


_HEADER = "// Generated from kernel/syscall.tbl by harness/abi/syscall_table.py: do not edit.\n"


def generate_kernel_header(table: list[Syscall]) -> str:
    """SYS_* numbers, sys_* prototypes and the dispatch table for kernel/syscall.c."""
    out = [_HEADER, "#ifndef SYSCALL_GEN_H", "#define SYSCALL_GEN_H", ""]
    out += [f"#define SYS_{c.name:<14} {c.number}" for c in table]
    out += [f"#define SYSCALL_MAX        {max(c.number for c in table) + 1}", ""]
    for c in table:
        params = ", ".join(f"{t} {n}" for n, t in c.kernel_args()) or "void"
        out.append(f"long sys_{c.name}({params});")
    out += ["", "#ifdef SYSCALL_DISPATCH",
            "// One unpacker per call: arguments come from a0..a5 of the trap frame."]
    for c in table:
        regs = _ARG_REGS[:len(c.args)]
        actual = ", ".join(f"({t})tf->{r}" for (_, t), r in zip(c.kernel_args(), regs, strict=True))
        out.append(f"static long call_{c.name}(struct trapframe *tf) "
                   f"{{ {'(void)tf; ' if not c.args else ''}return sys_{c.name}({actual}); }}")
    out += ["", "static const struct syscall_entry syscall_table[SYSCALL_MAX] = {"]
    out += [f'  [SYS_{c.name}] = {{ "{c.name}", {len(c.args)}, call_{c.name} }},' for c in table]
    out += ["};", "#endif // SYSCALL_DISPATCH", "", "#endif // SYSCALL_GEN_H", ""]
    return "\n".join(out)


def generate_user_stubs(table: list[Syscall]) -> str:
    """usys.S: a7 = number, ecall (handled by kernel/trap.c usertrap), result in a0."""
    out = [_HEADER, "// Each stub: the arguments already sit in a0..a5 (the C calling convention).",
           ".text"]
    for c in table:
        out += ["", f".global {c.name}", f".type {c.name}, @function", f"{c.name}:",
                f"    li a7, {c.number}", "    ecall", "    ret",
                f".size {c.name}, . - {c.name}"]
    return "\n".join(out) + "\n"


def generate_user_header(table: list[Syscall]) -> str:
    """User-side prototypes of the stubs in usys.S."""
    structs = sorted({m for c in table for _, t in c.args
                      for m in re.findall(r"struct (\w+)", t)})
    out = [_HEADER, "#ifndef SYSCALLS_H", "#define SYSCALLS_H", "",
           *(f"struct {s};" for s in structs), ""]
    out += [f"#define SYS_{c.name:<14} {c.number}" for c in table]
    out += ["// Every number above, as an array initialiser (the fuzzer's list).",
            "#define SYSCALL_NUMBERS_INIT { " + ", ".join(str(c.number) for c in table) + " }",
            ""]
    for c in table:
        params = ", ".join(f"{t}{'' if t.endswith('*') else ' '}{n}" for n, t in c.args)
        attr = "__attribute__((noreturn)) " if c.noreturn else ""
        out.append(f"{attr}{c.returns} {c.name}({params or 'void'});")
    out += ["", "#endif // SYSCALLS_H", ""]
    return "\n".join(out)
