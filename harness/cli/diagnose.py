"""What a run that was stopped looks like, in names: for `run`, `trace` and `qemu`
when Ctrl-C or the budget ends them.

- Every code address as `0x80203f7a acquire+0x1a kernel/spinlock.c:47`, from the
  images the machine loaded (any ELF with symbols: the bundled kernel, a course's).
- Every hart: its level and pc, named.
- With a kernel whose DWARF describes `proc[]` (the bundled one, xv6): the process
  table, each sleeping process's wait channel named (`pipe+0x204 (nwrite)`,
  `ticks`, `proc[2] (pid 3)`) rather than `0x87f36204`.
- What it looks like: every process asleep and no timer armed (a lost wakeup?), a hart
  spinning in acquire() for a lock another hart holds, and that hart's own wait (a
  deadlock when it spins too).
"""

from __future__ import annotations

from collections.abc import Callable

from ..abi.csr import Csr, Priv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..kernelinfo.dwarf_types import StructType
    from ..kernelinfo.mirrors import KernelInfo, Process
    from ..kernelinfo.system import SystemInfo
    from ..machine.machine import Machine

__all__ = ["Namer", "channel_namer", "describe_machine", "hart_lines", "info_for"]

SPINLOCK_REGS = (10, 11, 12, 13, 8, 9)   # a0..a3, s0, s1: where acquire() keeps `lk`
NO_TIMER = (1 << 63)                    # an mtimecmp at or past this is "never"


def info_for(machine: Machine) -> SystemInfo:
    """The machine's loaded images as a SystemInfo: with several, the one at the RAM
    base is the firmware and the last other one the kernel; one alone is the program."""
    from ..abi.platform import PLATFORM
    from ..kernelinfo.system import SystemInfo

    images = list(machine.images)
    if len(images) == 1:
        return SystemInfo(machine.xlen, bare=images[0].path)
    firmware = next((i for i in images
                     if any(s.vaddr == PLATFORM.ram_base for s in i.segments)), None)
    others = [i for i in images if i is not firmware]
    return SystemInfo(machine.xlen, firmware=firmware.path if firmware else None,
                      kernel=others[-1].path if others else None)


class Namer:
    """Addresses named as `privlab inspect` writes a Location; a bare address when no
    image covers it (naming never fails a diagnosis)."""

    def __init__(self, info: SystemInfo | None, machine: Machine | None = None) -> None:
        self.info = info
        self.machine = machine

    def __call__(self, addr: int, satp: int | None = None) -> str:
        if self.info is None:
            return f"{addr:#x}"
        try:
            memory = self.machine.memory if self.machine is not None else None
            loc = self.info.symbolize(addr, satp, memory)
        except Exception:       # an unreadable symbol table names nothing
            return f"{addr:#x}"
        if loc.symbol is None:
            return f"{addr:#x}"
        return f"{addr:#x} {loc.name}" + (f" {loc.source}" if loc.source else "")

    def symbol(self, addr: int) -> tuple[str, int] | None:
        """(symbol, offset) covering a data or code address, if any."""
        if self.info is None:
            return None
        try:
            loc = self.info.symbolizer.lookup(addr)
        except Exception:
            return None
        return (loc.symbol, loc.offset) if loc.symbol is not None else None


def _member(t: StructType, offset: int) -> str | None:
    for m in t.members:
        if m.offset <= offset < m.offset + max(m.type.size, 1):
            return m.name
    return None


def channel_namer(kernel: KernelInfo, machine: Machine, procs: tuple[Process, ...],
                   namer: Namer) -> Callable[[int], str]:
    """chan -> `pipe+0x204 (nwrite)`, `proc[2] (pid 3)`, `ticks`, `cons+0x98 (r)`."""
    objects: list[tuple[int, int, str, StructType | None]] = []   # start, size, label, type
    for p in procs:
        objects.append((p.address, p.value.type.size, f"proc[{p.slot}] (pid {p.pid})",
                        p.value.type))
        try:
            files = kernel.open_files(machine.memory, p) or []
            file_t = kernel.types.struct("file")
            pipe_t = kernel.types.struct("pipe")
        except Exception:
            continue
        for f in files:
            if f.kind != "PIPE":
                continue
            ptr = kernel.read_struct(machine.memory, file_t, f.address).get_int("pipe")
            objects.append((ptr, pipe_t.size, "pipe", pipe_t))

    def name(chan: int) -> str:
        for start, size, label, t in objects:
            if start <= chan < start + size:
                off = chan - start
                member = _member(t, off) if t is not None else None
                at = f"{label}+{off:#x}" if off else label
                return f"{at} ({member})" if member and off else at
        sym = namer.symbol(chan)
        if sym is not None:
            s, off = sym
            try:
                t = kernel.types.struct(s)     # a global named for its struct (kmem, cons)
            except Exception:
                t = None
            if t is not None and t.size and off >= t.size:   # an array of them: kmem[1]
                index, off = divmod(off, t.size)
                s = f"{s}[{index}]"
            member = _member(t, off) if t is not None else None
            at = f"{s}+{off:#x}" if off else s
            return f"{at} ({member})" if member and off else at
        return f"{chan:#x}"
    return name


def hart_lines(machine: Machine, namer: Namer) -> list[str]:
    lines = []
    for k, h in enumerate(machine.harts):
        satp = h.csr(Csr.SATP) if h.priv is not Priv.M else None
        lines.append(f"  hart {k}  {h.priv.letter}-mode  pc {namer(h.pc, satp)}")
    return lines


def _lock_held(kernel: KernelInfo, machine: Machine, hart: int,
               cpus: int | None) -> tuple[int, int | None] | None:
    """The spinlock hart `hart` spins for in acquire(): (its address, the hart that
    holds it), found among the registers acquire() keeps `lk` in."""
    try:
        lock_t = kernel.types.struct("spinlock")
        cpu_t = kernel.types.struct("cpu")
    except Exception:
        return None
    h = machine.harts[hart]
    for r in SPINLOCK_REGS:
        addr = h.x(r)
        try:
            lk = kernel.read_struct(machine.memory, lock_t, addr)
        except Exception:
            continue
        if lk.get_int("locked") != 1:
            continue
        cpu = lk.get_int("cpu")
        holder = (cpu - cpus) // cpu_t.size if cpus is not None and cpu >= cpus else None
        if holder is not None and not 0 <= holder < len(machine.harts):
            continue
        return addr, holder
    return None


def describe_machine(machine: Machine, info: SystemInfo | None) -> list[str]:
    """Every hart named, the process table with wait channels named, and what it
    looks like; the lines a stopped run's report adds."""
    namer = Namer(info, machine)
    lines = ["harts:", *hart_lines(machine, namer)] if machine.smp > 1 else []
    kernel = info.kernel_info if info is not None else None
    if kernel is None:
        return lines
    try:
        table = kernel.process_table(machine.memory)
    except Exception:          # a kernel mid-boot, or one without proc[]
        return lines
    chan_name = channel_namer(kernel, machine, table.processes, namer)
    lines.append("processes:")
    asleep, live = [], 0
    for p in table.processes:
        chan = p.value.get_int("chan") if p.value.type.has("chan") else 0
        waits = f"  waits on {chan_name(chan)}" if p.state == "SLEEPING" and chan else ""
        lines.append(f"  pid {p.pid:<3} {p.state:<9} {p.name}{waits}")
        if p.state in ("SLEEPING", "RUNNABLE", "RUNNING"):
            live += 1
            if p.state == "SLEEPING":
                asleep.append(chan_name(chan) if chan else "")
    cpus = info.address_of("cpus", "kernel") if info is not None else None
    looks = _looks_like(machine, kernel, namer, chan_name, asleep, live, cpus)
    if looks:
        lines.append(f"it looks like: {looks}")
    return lines


def _looks_like(machine: Machine, kernel: KernelInfo, namer: Namer,
                chan_name: Callable[[int], str], asleep: list[str], live: int,
                cpus: int | None) -> str | None:
    for k, h in enumerate(machine.harts):
        here = namer.symbol(h.pc)
        if here is None or here[0] != "acquire":
            continue
        held = _lock_held(kernel, machine, k, cpus)
        if held is None:
            continue
        lock, holder = held
        name = chan_name(lock)
        if holder is None:
            return f"hart {k} spins in acquire({name}), held by no hart: a lost release?"
        if holder == k:
            return f"hart {k} spins in acquire({name}), which it holds itself"
        other = machine.harts[holder]
        there = namer.symbol(other.pc)
        if there is not None and there[0] == "acquire":
            theirs = _lock_held(kernel, machine, holder, cpus)
            if theirs is not None:
                return (f"hart {k} spins in acquire({name}) held by hart {holder}, which "
                        f"waits for {chan_name(theirs[0])}: deadlock")
        return f"hart {k} spins in acquire({name}) held by hart {holder}"
    if live and len(asleep) == live:
        if all(a.startswith("cons") for a in asleep):
            return "every process is asleep, waiting for console input"
        armed = any(h.state.mtimecmp < NO_TIMER for h in machine.harts)
        if not armed:
            return "every process is asleep and no timer is armed: a lost wakeup?"
        return "every process is asleep (the timer still ticks): a lost wakeup?"
    return None
