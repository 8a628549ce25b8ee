"""The kernel's process table and trap frames, read from guest memory.

Layouts come from the kernel ELF's DWARF (`struct proc`, `struct trapframe`, the
globals `proc[]` and `cpu`), so these mirrors follow the C code as students change
it. The kernel maps RAM at its physical addresses (kernel/memlayout.h), so a kernel
pointer into RAM is read as a physical address.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import GuestError
from ..mmu.walk import PhysicalMemory
from .dwarf import DwarfTypes
from .dwarf_types import (
    ArrayType,
    EnumValue,
    PointerType,
    StructType,
    StructValue,
    Value,
    decode_value,
)

__all__ = ["KernelInfo", "OpenFile", "Process", "ProcessTable"]

UNUSED = "UNUSED"


@dataclass(frozen=True)
class Process:
    """One slot of `proc[]`."""

    slot: int
    value: StructValue
    parent_pid: int | None = None

    @property
    def address(self) -> int:
        return self.value.address

    def _opt(self, name: str) -> Value | None:
        return self.value[name] if self.value.type.has(name) else None

    @property
    def pid(self) -> int:
        return self.value.get_int("pid")

    @property
    def state(self) -> str:
        v = self._opt("state")
        return str(v) if v is not None else "?"

    @property
    def name(self) -> str:
        v = self._opt("name")
        return v if isinstance(v, str) else ""

    @property
    def pagetable(self) -> int:
        return self.value.get_int("pagetable") if self.value.type.has("pagetable") else 0

    @property
    def trapframe_addr(self) -> int:
        return self.value.get_int("trapframe") if self.value.type.has("trapframe") else 0


@dataclass(frozen=True)
class OpenFile:
    """One descriptor of a process: `struct file` (kernel/fs.h) and what it refers to."""

    fd: int
    kind: str                  # enum filetype without FD_: CONSOLE, PIPE, INODE
    ref: int
    readable: bool
    writable: bool
    append: bool = False
    offset: int | None = None  # an inode's read/write offset
    inum: int | None = None
    inode_type: int | None = None   # T_DIR, T_FILE, T_DEVICE (fs_layout)
    size: int | None = None
    buffered: int | None = None     # a pipe's unread bytes
    address: int = 0


@dataclass(frozen=True)
class ProcessTable:
    processes: tuple[Process, ...]      # slots in use
    current: int | None                 # slot of the hart's cpu.proc, None in its scheduler

    def by_pid(self, pid: int) -> Process | None:
        return next((p for p in self.processes if p.pid == pid), None)

    def by_pagetable(self, root: int) -> Process | None:
        return next((p for p in self.processes if p.pagetable == root), None)


class KernelInfo:
    """DWARF-derived knowledge of a kernel ELF, and readers for its data."""

    def __init__(self, types: DwarfTypes) -> None:
        self.types = types

    @classmethod
    def load(cls, kernel_elf: Path) -> KernelInfo:
        return cls(DwarfTypes.load(kernel_elf))

    @property
    def trapframe_type(self) -> StructType:
        return self.types.struct("trapframe")

    def read_struct(self, memory: PhysicalMemory, t: StructType, addr: int) -> StructValue:
        v = decode_value(t, memory.read(addr, t.size), 0, addr)
        assert isinstance(v, StructValue)
        return v

    def read_member(self, memory: PhysicalMemory, t: StructType, addr: int,
                    member: str) -> Value:
        m = t.member(member)
        return decode_value(m.type, memory.read(addr + m.offset, m.type.size), 0,
                            addr + m.offset)

    def _proc_array(self) -> tuple[int, StructType, int]:
        g = self.types.global_("proc")
        if not isinstance(g.type, ArrayType) or not isinstance(g.type.elem, StructType):
            raise GuestError("the kernel's `proc` is not an array of structs")
        return g.address, g.type.elem, g.type.count

    def current_slot(self, memory: PhysicalMemory, hart: int = 0) -> int | None:
        """The slot hart `hart`'s struct cpu points to (None while its scheduler runs):
        `cpus[hart].proc` in a kernel with one struct cpu per hart (kernel/smp.c), or
        `cpu.proc` in a one-hart kernel."""
        g = self.types.global_("cpus") if "cpus" in self.types.globals else None
        if g is not None and isinstance(g.type, ArrayType) \
                and isinstance(g.type.elem, StructType):
            if not 0 <= hart < g.type.count:
                return None
            ctype, caddr = g.type.elem, g.address + hart * g.type.elem.size
        else:
            cpu = self.types.global_("cpu")
            if not isinstance(cpu.type, StructType) or hart != 0:
                return None
            ctype, caddr = cpu.type, cpu.address
        ptr = self.read_member(memory, ctype, caddr, "proc")
        base, t, count = self._proc_array()
        if not isinstance(ptr, int) or ptr == 0:
            return None
        slot = (ptr - base) // t.size
        return slot if 0 <= slot < count else None

    def current_tid(self, memory: PhysicalMemory, hart: int = 0) -> int | None:
        """The running thread's id within its process (struct proc's `tid`: kernel/
        thread.c), or None for a kernel without threads or while the scheduler runs."""
        base, t, _ = self._proc_array()
        if not t.has("tid"):
            return None
        slot = self.current_slot(memory, hart)
        if slot is None:
            return None
        tid = self.read_member(memory, t, base + slot * t.size, "tid")
        return tid if isinstance(tid, int) else None

    def current_pid(self, memory: PhysicalMemory, hart: int = 0) -> tuple[int, str] | None:
        """(pid, name) of the process hart `hart` runs, cheaply: two small reads."""
        slot = self.current_slot(memory, hart)
        if slot is None:
            return None
        base, t, _ = self._proc_array()
        pid = self.read_member(memory, t, base + slot * t.size, "pid")
        name = self.read_member(memory, t, base + slot * t.size, "name") \
            if t.has("name") else ""
        return (pid if isinstance(pid, int) else -1, name if isinstance(name, str) else "")

    def process_table(self, memory: PhysicalMemory, hart: int = 0) -> ProcessTable:
        """Every slot in use; `current` is the one hart `hart` runs."""
        base, t, count = self._proc_array()
        data = memory.read(base, t.size * count)
        state_m = t.member("state") if t.has("state") else None
        pid_m = t.member("pid")
        slots: list[tuple[int, StructValue]] = []
        pid_at: dict[int, int] = {}
        for i in range(count):
            if state_m is not None:   # skip unused slots before decoding them in full
                st = decode_value(state_m.type, data, i * t.size + state_m.offset)
                if isinstance(st, EnumValue) and st.name == UNUSED:
                    continue
            pid = decode_value(pid_m.type, data, i * t.size + pid_m.offset)
            pid_at[base + i * t.size] = pid if isinstance(pid, int) else -1
            v = decode_value(t, data, i * t.size, base)
            assert isinstance(v, StructValue)
            slots.append((i, v))
        procs = []
        for i, v in slots:
            parent = v["parent"] if t.has("parent") and isinstance(
                t.member("parent").type, PointerType) else 0
            procs.append(Process(i, v, pid_at.get(parent) if isinstance(parent, int) else None))
        return ProcessTable(tuple(procs), self.current_slot(memory, hart))

    def process_roots(self, memory: PhysicalMemory) -> dict[int, tuple[int, str]]:
        """Page-table root -> (pid, name) of every used slot, later slots first as in
        `process_table`: the same answer with only those three fields decoded (what
        `privlab trace` asks for each time a new address space appears)."""
        base, t, count = self._proc_array()
        data = memory.read(base, t.size * count)

        def field(name: str, offset: int) -> Value | None:
            if not t.has(name):
                return None
            m = t.member(name)
            return decode_value(m.type, data, offset + m.offset)

        roots: dict[int, tuple[int, str]] = {}
        for i in range(count):
            off = i * t.size
            st = field("state", off)
            if isinstance(st, EnumValue) and st.name == UNUSED:
                continue
            pid, name, root = field("pid", off), field("name", off), field("pagetable", off)
            if isinstance(pid, EnumValue):
                pid = pid.value
            if not isinstance(pid, int):
                raise TypeError("proc.pid is not an integer")
            root_addr = root.value if isinstance(root, EnumValue) else root
            roots[root_addr if isinstance(root_addr, int) else 0] = (
                pid, name if isinstance(name, str) else "")
        return roots

    def open_files(self, memory: PhysicalMemory, process: Process) -> list[OpenFile] | None:
        """The process's open descriptors, lowest first; None when the kernel's
        struct proc has no `ofile` (a kernel without files)."""
        t = process.value.type
        if not t.has("ofile"):
            return None
        slots = process.value["ofile"]
        if not isinstance(slots, list):
            return None
        file_t = self.types.struct("file")
        out = []
        for fd, ptr in enumerate(slots):
            if not isinstance(ptr, int) or ptr == 0:
                continue
            f = self.read_struct(memory, file_t, ptr)
            kind = str(f["type"]).removeprefix("FD_")
            extra: dict[str, int] = {}
            if kind == "INODE" and f.get_int("ip"):
                ip = self.read_struct(memory, self.types.struct("inode"), f.get_int("ip"))
                extra = {"offset": f.get_int("off"), "inum": ip.get_int("inum"),
                         "inode_type": ip.get_int("type"), "size": ip.get_int("size")}
            elif kind == "PIPE" and f.get_int("pipe"):
                pi = self.read_struct(memory, self.types.struct("pipe"), f.get_int("pipe"))
                extra = {"buffered": (pi.get_int("nwrite") - pi.get_int("nread")) & 0xffffffff}
            out.append(OpenFile(fd, kind, f.get_int("ref"), bool(f.get_int("readable")),
                                bool(f.get_int("writable")),
                                bool(f.get_int("append")) if file_t.has("append") else False,
                                address=ptr, **extra))
        return out

    def trapframe(self, memory: PhysicalMemory, process: Process) -> StructValue | None:
        """The process's saved user registers, or None if it has no trap frame yet."""
        if not process.trapframe_addr:
            return None
        try:
            return self.read_struct(memory, self.trapframe_type, process.trapframe_addr)
        except GuestError:
            return None
