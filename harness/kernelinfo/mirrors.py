"""The kernel's process table and trap frames, read from guest memory.

Layouts come from the kernel ELF's DWARF (`struct proc`, `struct trapframe`, the
globals `proc[]` and `cpu`), so these mirrors follow the C code as students change
it. Which globals and members to read is the kernel profile's (harness/abi/
kernel_profiles.py, `--abi`): privlab's kernel by default, xv6's or uCore's
(`pool[]`, `current_proc`) on request. The kernel maps RAM at its physical addresses
(kernel/memlayout.h), so a kernel pointer into RAM is read as a physical address.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..abi.kernel_profiles import PROFILES, KernelProfile, satp_of_root
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



@dataclass(frozen=True)
class Process:
    """One slot of the process table (`proc[]`, uCore's `pool[]`). `files` names the
    member holding its descriptors (the profile's)."""

    slot: int
    value: StructValue
    parent_pid: int | None = None
    files: str = "ofile"

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
    """The kernel's process table as read from guest memory, and the slot the hart runs."""
    processes: tuple[Process, ...]      # slots in use
    current: int | None                 # slot of the hart's cpu.proc, None in its scheduler

    def by_pid(self, pid: int) -> Process | None:
        return next((p for p in self.processes if p.pid == pid), None)

    def by_pagetable(self, root: int) -> Process | None:
        return next((p for p in self.processes if p.pagetable == root), None)


@dataclass(frozen=True)
class _Running:
    """What a hart runs: its process's slot, and the thread struct it runs in when
    the kernel keeps threads apart from processes (uCore's chapter 8)."""

    slot: int
    thread: StructValue | None = None


class KernelInfo:
    """DWARF-derived knowledge of a kernel ELF, and readers for its data, where the
    kernel profile says to look."""

    def __init__(self, types: DwarfTypes, profile: KernelProfile = PROFILES["rcore"]) -> None:
        self.types = types
        self.profile = profile

    @classmethod
    def load(cls, kernel_elf: Path, profile: KernelProfile = PROFILES["rcore"]) -> KernelInfo:
        return cls(DwarfTypes.load(kernel_elf), profile)

    def _unused(self, state: Value | None) -> bool:
        return isinstance(state, EnumValue) and state.name in self.profile.unused

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
        g = self.types.global_(self.profile.processes)
        if not isinstance(g.type, ArrayType) or not isinstance(g.type.elem, StructType):
            raise GuestError(f"the kernel's `{self.profile.processes}` is not an array of "
                             "structs")
        return g.address, g.type.elem, g.type.count

    def _running(self, memory: PhysicalMemory, hart: int) -> _Running | None:
        """What hart `hart` runs, by the first of the profile's `running` globals the
        kernel has: `cpus[hart].proc` (one struct cpu per hart), `cpu.proc` (one hart),
        a pointer to the process (uCore's `current_proc`), or a pointer to a thread
        whose `process` is it (uCore's `current_thread`). None while the scheduler
        runs (a null pointer, or one outside the table: uCore's idle process)."""
        names = [n for n in self.profile.running if n in self.types.globals]
        g = self.types.global_(names[0] if names else self.profile.running[-1])
        base, t, count = self._proc_array()
        thread: StructValue | None = None
        if isinstance(g.type, ArrayType) and isinstance(g.type.elem, StructType):
            if not 0 <= hart < g.type.count:
                return None
            ptr = self.read_member(memory, g.type.elem, g.address + hart * g.type.elem.size,
                                   "proc")
        elif isinstance(g.type, StructType):
            if hart != 0:
                return None
            ptr = self.read_member(memory, g.type, g.address, "proc")
        elif isinstance(g.type, PointerType) and hart == 0:
            ptr = int.from_bytes(memory.read(g.address, g.type.size), "little")
            target = g.type.target.removeprefix("struct ")
            if ptr and target != t.name:           # a thread: its process is the answer
                thread = self.read_struct(memory, self.types.struct(target), ptr)
                ptr = thread["process"]
        else:
            return None
        if not isinstance(ptr, int) or ptr == 0 or (ptr - base) % t.size:
            return None
        slot = (ptr - base) // t.size
        return _Running(slot, thread) if 0 <= slot < count else None

    def current_slot(self, memory: PhysicalMemory, hart: int = 0) -> int | None:
        """The slot of the process hart `hart` runs (None while its scheduler runs)."""
        running = self._running(memory, hart)
        return running.slot if running is not None else None

    def current_tid(self, memory: PhysicalMemory, hart: int = 0) -> int | None:
        """The running thread's id within its process (struct proc's `tid`: kernel/
        thread.c; uCore's running `struct thread`), or None for a kernel without
        threads or while the scheduler runs."""
        running = self._running(memory, hart)
        if running is None:
            return None
        if running.thread is not None:
            tid = running.thread["tid"] if running.thread.type.has("tid") else None
            return tid if isinstance(tid, int) else None
        base, t, _ = self._proc_array()
        if not t.has("tid"):
            return None
        tid = self.read_member(memory, t, base + running.slot * t.size, "tid")
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
                if self._unused(st):
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
            procs.append(Process(i, v, pid_at.get(parent) if isinstance(parent, int) else None,
                                 self.profile.files))
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
            if self._unused(field("state", off)):
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
        struct proc has no descriptor table (`ofile`, uCore's `files`: a kernel
        without files)."""
        t = process.value.type
        if not t.has(process.files):
            return None
        slots = process.value[process.files]
        if not isinstance(slots, list):
            return None
        file_t = self.types.struct("file")
        out = []
        for fd, ptr in enumerate(slots):
            if not isinstance(ptr, int) or ptr == 0:
                continue
            f = self.read_struct(memory, file_t, ptr)
            kind = str(f["type"]).removeprefix("FD_")
            if kind == "NONE":                     # uCore: a closed descriptor's struct
                continue
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

    def trapframe(self, memory: PhysicalMemory, process: Process,
                  hart: int = 0) -> StructValue | None:
        """The process's saved user registers, or None if it has no trap frame yet. In
        a kernel whose threads hold the trap frames (the profile's `threads`), the
        frame of the thread hart `hart` runs if it runs this process, else of the
        process's first thread in use."""
        addr = process.trapframe_addr or self._thread_frame(memory, process, hart)
        if not addr:
            return None
        try:
            return self.read_struct(memory, self.trapframe_type, addr)
        except GuestError:
            return None

    def _thread_frame(self, memory: PhysicalMemory, process: Process, hart: int) -> int:
        member = self.profile.threads
        if member is None or not process.value.type.has(member):
            return 0
        running = self._running(memory, hart)
        if running is not None and running.slot == process.slot and running.thread:
            return running.thread.get_int("trapframe")
        threads = process.value[member]
        for th in threads if isinstance(threads, list) else ():
            if isinstance(th, StructValue) and not self._unused(th["state"]) \
                    and th.get_int("trapframe"):
                return th.get_int("trapframe")
        return 0

    def kernel_satp(self, memory: PhysicalMemory, xlen: int) -> int | None:
        """The satp of the kernel's own page table from the global the profile names
        (`kernel_pagetable`), or None when the profile names none or it is not set
        yet. MissingStructure when the kernel lacks the global."""
        name = self.profile.kernel_root
        if name is None:
            return None
        g = self.types.global_(name)
        root = int.from_bytes(memory.read(g.address, g.type.size), "little")
        return satp_of_root(root, xlen) if root else None
