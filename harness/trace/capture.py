"""Reading a system call's memory arguments at the exact moment of the call.

When a trace stops the machine right at an ecall from U (and right at the sret that
returns), `LiveCapture` reads the strings and buffers a call passes in, and the data
the kernel wrote back, through the calling process's own page table (its satp, as
recorded in the event) with U-mode permissions: what the kernel's copyin() would see.
A pointer the process may not use shows as `<not user memory>`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..abi.csr import Priv
from ..errors import GuestError
from ..kernelinfo.dwarf_types import (
    BaseType,
    CType,
    EnumValue,
    StructValue,
    Value,
    decode_value,
)
from ..kernelinfo.mirrors import KernelInfo
from ..machine.events import Event, TrapEvent
from ..machine.machine import Machine
from ..mmu.address import PAGE_SIZE
from ..mmu.walk import Access, TranslationContext, walk
from .syscalls import (
    MAX_SHOWN,
    ArgKind,
    ArgSpec,
    Captured,
    SyscallRecord,
    escape_bytes,
    struct_text,
)

__all__ = ["LiveCapture", "UserMemory", "format_value", "is_live"]

MAX_STRING = 256
MAX_ARGV = 16
USER = TranslationContext(Priv.U)


class UserMemory:
    """One address space's memory, read through its page table as U-mode would."""

    def __init__(self, machine: Machine, satp: int) -> None:
        self.m = machine
        self.satp = satp

    def read(self, va: int, size: int) -> bytes | None:
        out = bytearray()
        while len(out) < size:
            addr = va + len(out)
            w = walk(self.m.memory, self.satp, addr, Access.READ, USER, self.m.xlen)
            if w.pa is None:
                return None
            chunk = min(size - len(out), PAGE_SIZE - (addr & (PAGE_SIZE - 1)))
            try:
                out += self.m.memory.read(int(w.pa), chunk)
            except GuestError:
                return None
        return bytes(out)

    def string(self, va: int, limit: int = MAX_STRING) -> bytes | None:
        out = bytearray()
        while len(out) < limit:
            addr = va + len(out)
            chunk = self.read(addr, min(limit - len(out), PAGE_SIZE - (addr & (PAGE_SIZE - 1))))
            if chunk is None:
                return None if not out else bytes(out)
            end = chunk.find(b"\0")
            if end >= 0:
                return bytes(out + chunk[:end])
            out += chunk
        return bytes(out)

    def word(self, va: int) -> int | None:
        data = self.read(va, self.m.xlen // 8)
        return int.from_bytes(data, "little") if data is not None else None


def is_live(machine: Machine, e: Event) -> bool:
    """Does the machine sit exactly where `e` left it (nothing run since)?"""
    h = machine.hart
    if isinstance(e, TrapEvent):
        return h.pc == e.vector and h.state.instret == e.instret
    return h.pc == e.pc and h.state.instret == e.instret + 1


def format_value(v: Value, depth: int = 0) -> str:
    """A compact C-like rendering: {sec=0, usec=271}; long arrays show nonzero entries."""
    if isinstance(v, StructValue):
        return "{" + ", ".join(f"{n}={format_value(x, depth + 1)}" for n, x in v) + "}"
    if isinstance(v, list):
        if len(v) <= 8:
            return "[" + ", ".join(format_value(x, depth + 1) for x in v) + "]"
        nz = [(i, x) for i, x in enumerate(v) if x not in (0, "")]
        shown = ", ".join(f"[{i}]={format_value(x, depth + 1)}" for i, x in nz[:6])
        more = ", ..." if len(nz) > 6 else ""
        return "{" + shown + more + "}" if nz else f"[{len(v)} zeros]"
    if isinstance(v, EnumValue):
        return str(v)
    if isinstance(v, str):
        return escape_bytes(v.encode("latin-1"))
    return str(v)


class LiveCapture:
    """Implements flow.LiveMemory for a machine stopped at an event."""

    def __init__(self, machine: Machine, kernel: Callable[[], KernelInfo | None]) -> None:
        self.m = machine
        self._kernel = kernel

    @property
    def kernel(self) -> KernelInfo | None:
        return self._kernel()

    def whoami(self) -> tuple[int, str] | None:
        kernel = self.kernel
        if kernel is None:
            return None
        try:
            return kernel.current_pid(self.m.memory, self.m.hart.state.hart_id)
        except (GuestError, KeyError):
            return None

    def thread(self) -> int | None:
        kernel = self.kernel
        if kernel is None:
            return None
        try:
            return kernel.current_tid(self.m.memory, self.m.hart.state.hart_id)
        except (GuestError, KeyError):
            return None

    def capture_inputs(self, call: SyscallRecord) -> None:
        if call.spec is None:
            return
        mem = UserMemory(self.m, call.satp)
        got = {i: self._input(mem, spec, call.args[i], call.args)
               for i, spec in enumerate(call.spec.args)
               if spec.kind.is_input and i < len(call.args)}
        if got:
            call.inputs = got

    def capture_outputs(self, call: SyscallRecord) -> None:
        if call.spec is None or call.ret is None or call.ret < 0:
            return
        mem = UserMemory(self.m, call.satp)
        got: dict[int, Captured] = {}
        for i, spec in enumerate(call.spec.args):
            if spec.kind.is_output and i < len(call.args) and call.args[i]:
                out = self._output(mem, spec, call.args[i], call.ret)
                if out is not None:
                    got[i] = out
        if got:
            call.outputs = got

    def _input(self, mem: UserMemory, spec: ArgSpec, ptr: int,
               args: tuple[int, ...]) -> Captured:
        bad = Captured(f"{ptr:#x} <not user memory>" if ptr else "NULL <not user memory>")
        if spec.kind == ArgKind.BUF_IN and spec.length_arg is not None:
            n = min(args[spec.length_arg], MAX_SHOWN + 1)
            data = mem.read(ptr, n)
            return Captured(escape_bytes(data), data) if data is not None else bad
        if spec.kind == ArgKind.STR_IN:
            data = mem.string(ptr)
            return Captured(escape_bytes(data), data) if data is not None else bad
        if spec.kind == ArgKind.STRUCT_IN:
            if ptr == 0:
                return Captured("NULL")
            if self._type(spec.target or "") is None:
                return Captured(f"{ptr:#x}")   # no kernel types to decode it with
            got = self._struct(mem, spec, ptr)
            return got if got is not None else bad
        items: list[str] = []
        for k in range(MAX_ARGV):
            p = mem.word(ptr + k * self.m.xlen // 8)
            if p is None:
                return bad
            if p == 0:
                break
            s = mem.string(p)
            items.append(escape_bytes(s) if s is not None else f"{p:#x}")
        else:
            items.append("...")
        return Captured("[" + ", ".join(items) + "]")

    def _output(self, mem: UserMemory, spec: ArgSpec, ptr: int, ret: int) -> Captured | None:
        if spec.kind == ArgKind.BUF_OUT:
            data = mem.read(ptr, min(ret, MAX_SHOWN + 1)) if ret > 0 else b""
            return Captured(escape_bytes(data), data) if data is not None else None
        return self._struct(mem, spec, ptr)

    def _struct(self, mem: UserMemory, spec: ArgSpec, ptr: int) -> Captured | None:
        """What ptr points to, as spec's target type (the kernel's DWARF has it)."""
        t = self._type(spec.target or "")
        if t is None:
            return None
        data = mem.read(ptr, t.size)
        if data is None:
            return None
        v = decode_value(t, data)
        text = struct_text(v) if isinstance(v, StructValue) else None
        return Captured(text if text is not None else format_value(v), data)

    def _type(self, name: str) -> CType | None:
        if name.startswith("struct "):
            kernel = self.kernel
            if kernel is None:
                return None
            return kernel.types.structs.get(name[len("struct "):])
        sizes = {"int": 4, "long": self.m.xlen // 8, "char": 1}
        return BaseType(name, sizes[name], True) if name in sizes else None
