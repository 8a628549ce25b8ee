"""`Session`: one machine and everything needed to look inside it.

This is the documented entry point for notebooks, tests and graders (docs/inspect/api.md):

    from privlab.api import Session
    s = Session.boot("hello")                 # bundled firmware + kernel, hello as init
    s.run_until_syscall("write")              # stopped at the kernel's trap vector
    s.csr("scause").cause                     # 'user_ecall'
    s.read_string(s.reg("a1"))                # b'Hello, world!\\n'
    s.run()                                   # to the end: RunResult(stop=HALT, ...)
    s.syscalls[0].call_text()                 # 'write(1, "Hello, world!\\n", 14)'

A Session wraps `privlab.machine.Machine` without changing it: runs go through
`Machine.run`, with the tracer's extra stop conditions when memory capture is on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..abi.csr import EXCEPTION_NAMES, INTERRUPT_NAMES, Csr, Exc, Priv
from ..abi.registers import register_number
from ..abi.syscall_table import abi_table, load_syscall_table
from ..boot import boot_drive, user_boot
from ..build.images import Images, build_images
from ..devices import Console, ScriptedInput
from ..devices.disk import Drive, as_drive
from ..errors import BadInput
from ..inspect.state import CsrSnapshot, CsrValue, RegisterSnapshot
from ..kernelinfo.dwarf_types import StructValue
from ..kernelinfo.mirrors import ProcessTable
from ..kernelinfo.symbols import Location
from ..kernelinfo.system import SystemInfo
from ..machine import Machine, RunResult, Stop, load_elf
from ..machine.assemble import new_bare, new_system
from ..machine.events import Event, EventLog, TrapEvent, XretEvent
from ..machine.schedule import DEFAULT_SMP_SEED
from ..machine.snapshot import MachineSnapshot, PageStore, restore_machine, take_snapshot
from ..machine.until import (
    AfterSyscall,
    AfterTrap,
    AfterXret,
    AtAddress,
    AtInstret,
    PrivilegeChange,
    Until,
)
from ..pace import DEFAULT_ICOUNT_SHIFT
from ..trace.flow import Flow
from ..trace.sbi import SBI_EXTENSION_REG, SBI_FUNCTION_REG, load_sbi_names
from ..trace.syscalls import SyscallRecord, call_specs
from ..trace.tracer import Tracer
from .memaccess import MemoryAccess
from .timetravel import DEFAULT_EVERY, History, Position, ReverseResult

__all__ = ["Handle", "Session"]

MIB = 1 << 20


@dataclass
class Handle:
    """A registration; `remove()` undoes it."""

    _remove: Callable[[], None]

    def remove(self) -> None:
        self._remove()


def _cause_code(cause: str | int) -> tuple[int, bool | None]:
    if isinstance(cause, int):
        return cause, None
    for table, irq in ((EXCEPTION_NAMES, False), (INTERRUPT_NAMES, True)):
        for code, name in table.items():
            if name == cause:
                return int(code), irq
    raise BadInput(f"unknown cause {cause!r}")


@dataclass
class _AtSeqTrap(AfterTrap):
    """Stops at the trap numbered `seq` in the event log."""
    seq: int = 0

    def matches(self, e: Event) -> bool:
        return e.seq == self.seq


@dataclass
class _AtSeqXret(AfterXret):
    """Stops at the xRET numbered `seq` in the event log."""
    seq: int = 0

    def matches(self, e: Event) -> bool:
        return e.seq == self.seq


class Session(MemoryAccess):
    def __init__(self, machine: Machine, info: SystemInfo, *, capture: bool = False,
                 capture_limit: int | None = None, abi: str = "rcore",
                 table: Path | None = None) -> None:
        """With `capture`, the strings and buffers of system calls are read at the
        exact moment of each call (the run stops there: slower), for the first
        `capture_limit` calls (None: all). `abi` names the system-call table calls are
        decoded with (privlab.abi.syscall_table.ABIS: the bundled kernel's, or xv6's);
        `table`, a syscall.tbl, takes its place (a student's kernel's own)."""
        self.machine = machine
        self.info = info
        info.abi = abi          # the kernel profile its process views read with
        self.notes: tuple[str, ...] = ()   # what the boot wants said (an --add replacing)
        self.specs = call_specs(load_syscall_table(table) if table is not None
                                else abi_table(abi))
        self.sbi = load_sbi_names()
        self.tracer = Tracer(machine, self.specs, kernel=lambda: info.kernel_info,
                             sbi=self.sbi, capture=capture,
                             capture_limit=capture_limit)
        self.history: History | None = None
        self._pages: PageStore | None = None

    # -- booting -------------------------------------------------------------------
    @classmethod
    def boot(cls, program: str | None = "hello", args: Sequence[str] = (), *,
             arch: str = "rv64", capture: bool = False, ram_mib: int = 128,
             images: Images | None = None, kernel: str | Path | None = None,
             echo: bool = False, console_input: bytes = b"", input_ends: bool = False,
             capture_limit: int | None = None, drive: Drive | str | Path | None = None,
             virtio_legacy: bool = False, icount_shift: int = DEFAULT_ICOUNT_SHIFT,
             abi: str = "rcore", add: Sequence[str | Path] = (),
             bundled_disk: bool = True, smp: int = 1,
             smp_seed: int = DEFAULT_SMP_SEED) -> Session:
        """The bundled firmware and kernel (or `kernel`), running `program` as the
        first process (None: the whole initrd with the shell). With `input_ends`, a
        guest that keeps polling the console once `console_input` is used up stops the
        run (Stop.INPUT_ENDED); otherwise more can be fed (machine.uart.source.feed).
        `add` lists user ELFs or directories of them that join the bundled programs
        (`privlab run --add`); `program` may name one. `drive` is a raw image for
        virtio-blk (`privlab run --drive`: a Drive, a path, or "IMAGE,snapshot=on");
        without one the build's fs.img is attached as a snapshot (an image of every
        program when `add` or a path as `program` brings more), unless `bundled_disk`
        is False. `virtio_legacy` selects version 1 transports, `icount_shift` N
        makes each instruction 2^N ns of guest time (`--icount-shift`), and `smp`
        harts take turns as `smp_seed` decides (`--smp`, `--smp-seed`)."""
        images = images or build_images(arch, listings=False)
        fw, kern = load_elf(images.firmware), load_elf(kernel or images.kernel)
        ub = user_boot(images.users, program, list(args), add=add, initrd=images.initrd)
        disk = boot_drive(images.disk, ub.programs, as_drive(drive), attach=bundled_disk)
        m = new_system(fw, kern, ub.initrd_image(), ub.bootargs, ram=ram_mib * MIB,
                       console=Console(echo=echo),
                       uart_input=ScriptedInput(console_input, final=input_ends),
                       drive=disk, virtio_legacy=virtio_legacy,
                       icount_shift=icount_shift, smp=smp, smp_seed=smp_seed)
        info = SystemInfo(kern.xlen, images.firmware, Path(kernel or images.kernel),
                          dict(ub.programs.paths), program=ub.program)
        session = cls(m, info, capture=capture, capture_limit=capture_limit, abi=abi)
        session.notes = ub.programs.notes
        return session

    @classmethod
    def bare(cls, elf: str | Path, *, capture: bool = False, ram_mib: int = 128,
             echo: bool = False, console_input: bytes = b"", input_ends: bool = False,
             capture_limit: int | None = None, drive: Drive | str | Path | None = None,
             virtio_legacy: bool = False, icount_shift: int = DEFAULT_ICOUNT_SHIFT,
             abi: str = "rcore", smp: int = 1, smp_seed: int = DEFAULT_SMP_SEED) -> Session:
        """Any bare-metal ELF, from M-mode at the RAM base (`privlab run --bios none`),
        on `smp` harts that all start there."""
        image = load_elf(elf)
        m = new_bare(image, ram=ram_mib * MIB, console=Console(echo=echo),
                     uart_input=ScriptedInput(console_input, final=input_ends),
                     drive=as_drive(drive), virtio_legacy=virtio_legacy,
                     icount_shift=icount_shift, smp=smp, smp_seed=smp_seed)
        return cls(m, SystemInfo(image.xlen, bare=Path(elf)), capture=capture,
                   capture_limit=capture_limit, abi=abi)

    # -- running ---------------------------------------------------------------------
    def run(self, max_insns: int | None = None, until: Until | Sequence[Until] = ()) -> RunResult:
        """Machine.run, plus the tracer's stop conditions while it captures memory."""
        conds = [until] if not isinstance(until, Sequence) else list(until)
        start, left = self.machine.total_instret(), max_insns
        while True:
            result = self.machine.run(left, until=conds + self.tracer.conditions())
            if not self.tracer.ended_capture(result.condition):
                return result
            self.tracer.stop_capture()      # the capture limit: go on at full speed
            if max_insns is not None:
                left = max_insns - (self.machine.total_instret() - start)
                if left <= 0:
                    return result

    def run_until_trap(self, count: int = 1, cause: str | int | None = None,
                       max_insns: int | None = None) -> RunResult:
        """Until the `count`th trap from now (of `cause`, a name or a code, if given)."""
        code, irq = _cause_code(cause) if cause is not None else (None, None)
        return self.run(max_insns, AfterTrap(code=code, interrupt=irq, count=count))

    def run_until_syscall(self, call: str | int, count: int = 1,
                          max_insns: int | None = None) -> RunResult:
        """Until the `count`th ecall making this system call; the hart then sits at
        the kernel's trap vector, the call's arguments in a0..a5."""
        number = call if isinstance(call, int) else next(
            (n for n, s in self.specs.items() if s.name == call), None)
        if number is None:
            raise BadInput(f"no system call named {call!r} in kernel/syscall.tbl")
        result = self.run(max_insns, AfterSyscall(number))
        for _ in range(count - 1):
            if result.stop is not Stop.EVENT:
                break
            result = self.run(max_insns, AfterSyscall(number))
        return result

    def run_until_sbi(self, call: str, count: int = 1,
                      max_insns: int | None = None) -> RunResult:
        """Until the `count`th SBI call named `call` (`DBCN.WRITE`, as `privlab trace`
        names it; `*` is any): an ecall from S, which traps into M. The hart then sits
        at the firmware's trap vector, the extension in a7, the function in a6."""
        known = self.sbi.known()
        wanted = next((n for n in known if n.lower() == call.lower()), None)
        if call != "*" and wanted is None:
            raise BadInput(f"no SBI call named {call!r} in kernel/include/sbi.h "
                           f"(e.g. {', '.join(sorted(known)[:4])})")
        seen = 0
        while True:
            result = self.run_until_trap(1, Exc.SUPERVISOR_ECALL, max_insns)
            if result.stop is not Stop.EVENT or not isinstance(result.event, TrapEvent):
                return result
            a = result.event.args
            if call == "*" or self.sbi.name(a[SBI_EXTENSION_REG], a[SBI_FUNCTION_REG]) == wanted:
                seen += 1
                if seen == count:
                    return result

    def run_until_symbol(self, symbol: str, image: str | None = None,
                         max_insns: int | None = None) -> RunResult:
        """Until the instruction at `symbol` is about to run."""
        addr = self.info.address_of(symbol, image)
        if addr is None:
            raise BadInput(f"no symbol {symbol!r} in the loaded images")
        conds: list[Until] = [AtAddress(addr)]
        conds += [AtAddress(a.va + addr - a.target) for a in self.info.symbolizer.aliases
                  if a.target <= addr < a.target + a.size]
        return self.run(max_insns, conds)

    def run_until_priv(self, priv: Priv | str, max_insns: int | None = None) -> RunResult:
        p = priv if isinstance(priv, Priv) else Priv[priv.upper()]
        return self.run(max_insns, PrivilegeChange(to=p))

    def run_until_instret(self, instret: int) -> RunResult:
        return self.run(until=AtInstret(instret))

    def run_until_event(self, seq: int, max_insns: int | None = None) -> RunResult:
        """Until trace event #seq (a trap or an xRET) has happened."""
        if seq < len(self.machine.events):
            raise BadInput(f"event #{seq} has already happened")
        return self.run(max_insns, [_AtSeqTrap(seq=seq), _AtSeqXret(seq=seq)])

    def step(self, n: int = 1) -> RunResult:
        """`n` instructions; with several harts, of the machine in the schedule's order
        (Machine.step_machine): the current hart is then the one that ran the last."""
        result = self.machine.step_machine()
        for _ in range(n - 1):
            if result.stop is Stop.HALT:
                break
            result = self.machine.step_machine()
        return result

    # -- going back in time (harness/api/timetravel.py) --------------------------------
    def record(self, every: int = DEFAULT_EVERY, budget: int | None = None) -> History:
        """From now on, snapshot the machine every `every` instructions it runs, so
        that run_back can return to any moment after this one, keeping at most
        `budget` bytes of history (None: PRIVLAB_HISTORY_BUDGET or the default)."""
        if self.history is None:
            self.history = (History(self.machine, every, on_restore=self.tracer.rewind)
                            if budget is None else
                            History(self.machine, every, on_restore=self.tracer.rewind,
                                    budget=budget))
            self._pages = self.history.store
        return self.history

    def _store(self) -> PageStore:
        if self._pages is None:
            self._pages = PageStore(self.machine)
        return self._pages

    def snapshot(self) -> MachineSnapshot:
        """Everything that decides the machine's future, now (between runs): registers,
        CSRs, the core's state, RAM (as page hashes; pages shared), devices, time, the
        console and the event log's position."""
        return take_snapshot(self.machine, self._store())

    def restore(self, snap: MachineSnapshot) -> None:
        """Put the machine back as it was when `snap` was taken."""
        restore_machine(self.machine, self._store(), snap)
        if self.history is not None:
            self.history.machine.next_checkpoint = snap.instret + self.history.every
        self.tracer.rewind()

    @property
    def position(self) -> Position:
        """(instructions retired, events logged): orders the moments of a run. With
        several harts, the instructions of all of them together."""
        return Position(self.machine.total_instret(), len(self.machine.events))

    def run_back(self, steps: int | None = None, *, trap: bool = False,
                 event: int | None = None, instret: int | None = None,
                 syscall: bool = False, xret: bool = False) -> ReverseResult:
        """Go back by deterministic re-execution from the recorded snapshots (record()
        first): `steps` single steps (the default, 1), or to just after the previous
        trap (`trap`), system call (`syscall`), xRET (`xret`), to just after event
        number `event`, or to the first moment with `instret`."""
        h = self.history
        if h is None:
            raise BadInput("no history to go back in: call record() before running")
        chosen = sum(x for x in (steps is not None, trap, event is not None,
                                 instret is not None, syscall, xret))
        if chosen > 1:
            raise BadInput("run_back takes one of steps, trap, event, instret, syscall, xret")
        if trap:
            return h.back_to_trap()
        if syscall:
            return h.back_to_trap(lambda e: isinstance(e, TrapEvent) and not e.interrupt
                                  and e.code == Exc.USER_ECALL)
        if xret:
            return h.back_to_trap(lambda e: isinstance(e, XretEvent))
        if event is not None:
            return h.back_to_event(event)
        if instret is not None:
            now = self.machine.total_instret()
            if instret > now:
                raise BadInput(f"instruction {instret} is ahead of now ({now})")
            return h.back_to_instret(instret)
        return h.step_back(1 if steps is None else steps)

    # -- registers and CSRs ------------------------------------------------------------
    @property
    def pc(self) -> int:
        return self.machine.hart.pc

    @property
    def priv(self) -> Priv:
        return self.machine.hart.priv

    @property
    def instret(self) -> int:
        return int(self.machine.hart.state.instret)

    def regs(self) -> RegisterSnapshot:
        return RegisterSnapshot.take(self.machine.hart)

    def reg(self, name: str | int) -> int:
        if isinstance(name, int):
            return self.machine.hart.x(name)
        try:
            return self.regs()[name]
        except KeyError:
            raise BadInput(f"no register {name!r}") from None

    def _changed(self) -> None:
        """The machine was changed from outside: the recorded future is void."""
        if self.history is not None:
            self.history.forget_future()

    def write_phys(self, paddr: int, data: bytes) -> None:
        self._changed()
        super().write_phys(paddr, data)

    def write_virt(self, vaddr: int, data: bytes, satp: int | None = None) -> None:
        self._changed()
        super().write_virt(vaddr, data, satp)

    def set_reg(self, name: str | int, value: int) -> None:
        self._changed()
        if name == "pc":
            self.machine.hart.pc = value
            return
        n = name if isinstance(name, int) else register_number(name)
        if n is None or not 0 <= n < 32:
            raise BadInput(f"no register {name!r}")
        self.machine.hart.set_x(n, value)

    @staticmethod
    def _csr(name: str | Csr) -> Csr:
        if isinstance(name, Csr):
            return name
        try:
            return Csr[name.upper()]
        except KeyError:
            raise BadInput(f"unknown CSR {name!r}") from None

    def csr(self, name: str | Csr) -> CsrValue:
        """A CSR's value with its fields decoded (harness/abi/csr.py)."""
        c = self._csr(name)
        return CsrValue(c, self.machine.hart.csr(c), self.machine.xlen)

    def set_csr(self, name: str | Csr, value: int) -> None:
        self._changed()
        self.machine.hart.set_csr(self._csr(name), value)

    def csrs(self) -> CsrSnapshot:
        return CsrSnapshot.take(self.machine.hart)

    # -- the kernel's view -----------------------------------------------------------------
    def processes(self) -> ProcessTable:
        k = self.info.kernel_info
        if k is None:
            raise BadInput("no kernel with DWARF information is loaded")
        return k.process_table(self.machine.memory, self.machine.hart.state.hart_id)

    def trapframe(self, pid: int | None = None) -> StructValue | None:
        k = self.info.kernel_info
        table = self.processes()
        proc = table.by_pid(pid) if pid is not None else next(
            (p for p in table.processes if p.slot == table.current), None)
        if proc is None or k is None:
            return None
        return k.trapframe(self.machine.memory, proc, self.machine.hart.state.hart_id)

    def symbolize(self, addr: int, satp: int | None = None) -> Location:
        return self.info.symbolize(addr, self.machine.hart.csr(Csr.SATP) if satp is None
                                   else satp, self.machine.memory)

    # -- events ----------------------------------------------------------------------------
    @property
    def events(self) -> EventLog:
        return self.machine.events

    @property
    def flow(self) -> Flow:
        """Every trap and xRET so far, with nesting and decoded calls."""
        self.tracer.sync()
        return self.tracer.flow

    @property
    def syscalls(self) -> Sequence[SyscallRecord]:
        return self.flow.syscalls

    def on_trap(self, fn: Callable[[TrapEvent], None]) -> Handle:
        def each(e: Event) -> None:
            if isinstance(e, TrapEvent):
                fn(e)
        return Handle(self.machine.events.subscribe(each))

    def on_xret(self, fn: Callable[[XretEvent], None]) -> Handle:
        def each(e: Event) -> None:
            if isinstance(e, XretEvent):
                fn(e)
        return Handle(self.machine.events.subscribe(each))

    def on_syscall(self, fn: Callable[[SyscallRecord], None]) -> Handle:
        """fn(call) as each system call completes (for exit: when it is made)."""
        return Handle(self.tracer.on_syscall(fn))

    @property
    def console(self) -> str:
        return self.machine.console.text()

    def close(self) -> None:
        if self.history is not None:
            self.history.close()
        if self._pages is not None:
            self._pages.close()
        self.tracer.close()
        self.info.close()
        self.machine.close()
