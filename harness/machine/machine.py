"""The machine: its harts, RAM and the QEMU `virt` devices, and the run loop (the turns
several harts take are schedule.py's).

Unicorn runs guest code until the native core asks it to stop (budget, wfi, events to
drain, a breakpoint, a device ending the run) or it reports an error the core turns into
a trap (unmapped memory, ebreak). The loop below handles each stop and resumes, so a
guest never notices it was stopped: a run is a pure function of the image and input.
"""

from __future__ import annotations

import ctypes
import mmap
import threading
from collections.abc import Callable

from ..abi.csr import Csr, Exc, Priv
from ..abi.pagesize import PAGE_SIZE
from ..abi.platform import PLATFORM
from ..abi.unicorn_abi import (
    UC_ERR_EXCEPTION,
    UC_ERR_FETCH_PROT,
    UC_ERR_FETCH_UNMAPPED,
    UC_ERR_READ_UNMAPPED,
    UC_ERR_WRITE_UNMAPPED,
    UC_MEM_FETCH_UNMAPPED,
    UC_PROT_ALL,
)
from ..devices.base import Device
from ..devices.clint import Clint
from ..devices.finisher import Finisher
from ..devices.mrom import Mrom
from ..devices.plic import Plic
from ..devices.uart import (
    IDLE_POLL_LIMIT,
    INPUT_POLL_INSNS,
    Console,
    InputSource,
    ScriptedInput,
    Uart,
)
from ..devices.virtio_mmio import VirtioMmio
from ..errors import BadInput, GuestError
from ..native import EventRecord, StopReason
from ..native.library import load_library
from ..pace import DEFAULT_ICOUNT_SHIFT, MAX_ICOUNT_SHIFT, check_icount_shift
from .engine import Engine, EngineError
from .events import Event, EventLog, TrapEvent
from .hart import Hart
from .loader import ElfImage
from .memory import Memory
from .results import MAX_BUDGET_STEPS, TURN_OVER, VECTOR_FAULTS, DataAccess, RunResult, Stop
from .schedule import DEFAULT_SMP_SEED, HartTurns, Schedule, check_smp
from .until import (
    AfterSyscall,
    AfterTrap,
    AfterXret,
    AtAddress,
    AtInstret,
    PrivilegeChange,
    Until,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..devices.disk import Disk, Drive
    from .codesync import CodeSync

__all__ = ["MAX_ICOUNT_SHIFT", "Machine", "RunResult", "Stop", "check_icount_shift"]

_UNMAPPED = (UC_ERR_READ_UNMAPPED, UC_ERR_WRITE_UNMAPPED, UC_ERR_FETCH_UNMAPPED)
EXACT_APPROACH = 2048        # run_until_instret runs at full speed to this short of it


class Machine:
    """A RISC-V `virt` board with `smp` harts (one by default). `xlen` is 32 or 64.

    With several harts, each is its own Unicorn engine and native core over the one
    host mapping of RAM and the same devices, and `run` lets them take turns
    (harness/machine/schedule.py, docs/machine.md#several-harts). `hart` (and `uc`)
    is the current hart: hart 0 after a reset; after a run, the hart it stopped on
    (the one whose event, breakpoint or halt ended it, or whose turn it was);
    `select_hart(k)` makes hart k current, as a debugger's thread selection does.
    `step()`, the register and CSR accessors and the inspectors use it; `harts` lists
    them all."""

    def __init__(self, xlen: int = 64, ram_size: int = PLATFORM.ram_size_default, *,
                 console: Console | None = None, uart_input: InputSource | None = None,
                 keep_events: bool = True, drive: Drive | None = None,
                 virtio_legacy: bool = False,
                 icount_shift: int = DEFAULT_ICOUNT_SHIFT, smp: int = 1,
                 smp_seed: int = DEFAULT_SMP_SEED) -> None:
        """`drive`: a raw image for virtio-blk in virtio-mmio slot 0 (the other slots,
        and slot 0 without a drive, are empty transports); `virtio_legacy`: version 1
        transports (QEMU's virtio-mmio.force-legacy=true); `icount_shift`: each
        instruction takes 2^N ns of guest time (QEMU's -icount shift=N); `smp`: harts
        (1 to 8, QEMU's -smp N), interleaved as `smp_seed` decides."""
        if xlen not in (32, 64):
            raise BadInput(f"xlen must be 32 or 64, not {xlen}")
        check_icount_shift(icount_shift)
        check_smp(smp)
        self.xlen = xlen
        self.icount_shift = icount_shift
        self.smp = smp
        self.smp_seed = smp_seed
        self.disk: Disk | None = None
        if drive is not None:               # BadInput before anything
            from ..devices.disk import Disk
            self.disk = Disk(drive)
        _room_for_engines(smp, ram_size)
        self.uc = Engine(xlen)
        self.memory = Memory(self.uc, PLATFORM.ram_base, ram_size)
        self.hart = Hart(self.uc, xlen)
        # Portable mode: a refused TLB fill stops a run (harness/native/vtlb.c).
        self._vtlb = self.hart.vtlb
        self.hart.state.icount_shift = icount_shift
        self.hart.set_ram(self.memory.host_address, self.memory.ram_base, self.memory.ram_size)
        self.harts: list[Hart] = [self.hart]
        self.ucs: list[Engine] = [self.uc]
        for hart_id in range(1, smp):
            uc = Engine(xlen)
            uc.mem_map_ptr(self.memory.ram_base, ram_size, UC_PROT_ALL,
                           self.memory.host_address)
            hart = Hart(uc, xlen)
            hart.state.icount_shift = icount_shift
            hart.state.hart_id = hart_id
            hart.state.shared_code = 1
            hart.set_ram(self.memory.host_address, self.memory.ram_base, ram_size)
            self.harts.append(hart)
            self.ucs.append(uc)
        self._codesync: CodeSync | None = None
        if smp > 1:
            from .codesync import CodeSync

            self.hart.state.shared_code = 1   # fence.i sees the other harts' stores
            self._codesync = CodeSync(self.harts, self.memory.host_address,
                                      self.memory.ram_base, ram_size)
        self.turns = HartTurns(self, Schedule(smp, smp_seed))
        self.events = EventLog(keep=keep_events)
        self.events.harts = smp
        self.console = console or Console()
        # The PLIC drives mip.MEIP/SEIP; a device drives its source through
        # `self.plic.line(n)` (an IrqLine) or `self.plic.set_level(n, level)`: the UART
        # is PLATFORM.uart0_irq, virtio-mmio slot i is PLATFORM.virtio0_irq + i.
        self.plic = Plic(self.hart, self.harts)
        self.uart = Uart(self.console, uart_input or ScriptedInput(),
                         irq=self.plic.line(PLATFORM.uart0_irq))
        self.uart.on_input_ended = self._input_ended
        self._waiting_for_input = False
        self._stop_wanted = False            # request_stop: kept until a run reports it
        # request_stop's steps and the run loop's report of them, each whole: a report
        # between two steps would leave a hart's USER stop behind for the next run
        self._stop_lock = threading.RLock()   # (a signal handler on this thread may ask)
        self.clint = Clint(self.hart, self.harts)
        self.mrom = Mrom()
        blk = None
        if self.disk is not None:
            from ..devices.virtio_blk import VirtioBlk
            blk = VirtioBlk(self.disk)
        self.virtio = [
            VirtioMmio(slot, self.plic.line(PLATFORM.virtio0_irq + slot).set, self,
                       blk if slot == 0 else None, legacy=virtio_legacy)
            for slot in range(PLATFORM.virtio_count)]
        self.devices: list[Device] = [self.mrom, Finisher(self._halt), self.clint,
                                      self.plic, self.uart,
                                      *self.virtio]
        self._halted: tuple[int, str] | None = None
        self._tohost: int | None = None      # HTIF's word, once an ELF with one is loaded
        self.breakpoints: set[int] = set()   # debugger breakpoints (AtAddress adds its own)
        self.images: list[ElfImage] = []     # what load() placed, in order
        self.symbols: dict[str, int] = {}    # their symbols (a later image wins)
        self._device_error: GuestError | None = None
        self._closed = False
        self._hooks: list[int] = []
        # The harts with blocks translated for a run, not a step (see step()).
        self._ran_since_step: set[int] = set()
        # Periodic checkpoints (harness/api/timetravel.py): during a run, `checkpoint()`
        # is called between two blocks once instret reaches `next_checkpoint`.
        self.checkpoint: Callable[[], None] | None = None
        self.next_checkpoint = (1 << 64) - 1
        _register_access_rules(self.devices)
        for dev in self.devices:
            for uc in self.ucs:
                self._map(dev, uc)
        self.reset()

    # -- set-up --------------------------------------------------------------------
    def _map(self, dev: Device, uc: Engine) -> None:
        whole = bool(getattr(dev, "one_register_per_access", False))
        k = self.ucs.index(uc)

        def read(uc: Engine, offset: int, size: int, _ud: object) -> int:
            if whole and _upper_half(dev.base + offset):
                return 0
            if self.uc is not uc:       # a turn the core began itself (turns.c)
                self._select(k)
            try:
                return dev.read(offset, size)
            except GuestError as e:
                self._fail(e)
                return 0
            except BaseException:
                self.turns.attend()
                raise

        def write(uc: Engine, offset: int, size: int, value: int, _ud: object) -> None:
            if whole and _upper_half(dev.base + offset):
                return
            if self.uc is not uc:
                self._select(k)
            try:
                dev.write(offset, size, value)
            except GuestError as e:
                self._fail(e)
            except BaseException:
                self.turns.attend()
                raise

        # Unicorn maps whole pages; the device rejects offsets past its own size.
        uc.mmio_map(dev.base, -(-dev.size // PAGE_SIZE) * PAGE_SIZE, read, None, write, None)

    def reset(self, pc: int = PLATFORM.ram_base, a0: int = 0, a1: int = 0, a2: int = 0) -> None:
        """Reset state as QEMU's `virt` reset vector leaves it: M-mode at `pc`,
        a0 = hart id, a1 = device tree address, a2 = OpenSBI's fw_dynamic_info. Every
        hart starts there, as on QEMU, hart k with a0 = a0 + k."""
        for k, hart in enumerate(self.harts):
            hart.priv = Priv.M
            hart.pc = pc
            hart.set_x(10, a0 + k)
            hart.set_x(11, a1)
            hart.set_x(12, a2)
        self._select(0)

    def select_hart(self, k: int) -> None:
        """Make hart k (its `mhartid`) the one `hart`, `uc`, `memory`, `step()` and the
        inspectors work on, as a debugger's thread selection does. A `run()` of several
        harts goes on with the schedule where it was; when it stops, `hart` is the hart
        it stopped on."""
        if not 0 <= k < self.smp:
            raise BadInput(f"no hart {k}: the machine has harts 0 to {self.smp - 1}")
        self._select(k)

    def _select(self, k: int) -> None:
        """Make hart k the current one: the one that runs, that devices stop and whose
        clock mtime reads, and the one `hart`, `uc` and `memory` show."""
        self.hart = self.harts[k]
        self.uc = self.ucs[k]
        self.clint.current = self.hart
        self.memory.attach(self.uc)

    def load(self, image: ElfImage) -> None:
        """Load an ELF's segments; an ELF with a `tohost` symbol also gets HTIF."""
        if image.xlen != self.xlen:
            raise BadInput(f"{image.path}: a {image.xlen}-bit ELF cannot run on this "
                           f"{self.xlen}-bit machine")
        self.memory.load(image)
        self.images.append(image)
        self.symbols.update(image.symbols)
        tohost = image.symbol("tohost")
        if tohost is not None:
            self._attach_htif(tohost)

    def _attach_htif(self, tohost: int) -> None:
        """riscv-tests convention: storing 1 to `tohost` passes; any other odd value v
        fails with code v >> 1; an even nonzero value is a command privlab does not
        serve (the syscall proxy), which ends the run with an error.

        No memory hook watches the store: any UC_HOOK_MEM_WRITE sends every load and
        store of the engine through Unicorn's slow path (dhrystone ran 3.4x slower;
        docs/unicorn.md#a-memory-hook-over-ram-slows-every-store). Instead each
        hart's core looks at the tohost word at every block entry and stops while it
        is nonzero, and `_poll_htif` reads the command after every stop: the run ends
        at the same instruction boundary as a hook's stop took effect, deterministically.
        A later image's tohost replaces an earlier one's."""
        if not self.memory.in_ram(tohost, self.xlen // 8):
            return                           # a store there is an access fault anyway
        self._tohost = tohost
        for hart in self.harts:
            hart.set_tohost(tohost)

    def _poll_htif(self) -> None:
        """The guest wrote a command to tohost since the last look: act on it."""
        if self._tohost is None or self._halted is not None:
            return
        value = int.from_bytes(self.memory.read(self._tohost, self.xlen // 8), "little")
        if value == 0:
            return
        # Between two runs: recorded as a device's halt or error is, without asking
        # the core to stop (it already has).
        if value & 1:
            code = value >> 1
            self._halted = (code, "HTIF: pass" if code == 0 else f"HTIF: fail with code {code}")
        elif self._device_error is None:
            self._device_error = GuestError(f"HTIF: unsupported tohost command {value:#x}")

    # -- device callbacks --------------------------------------------------------------
    def _halt(self, status: int, reason: str) -> None:
        if self._halted is None:
            self._halted = (status, reason)
        self.hart.state.stop_reason = StopReason.HALT
        self.turns.attend()

    def _input_ended(self) -> None:
        self._waiting_for_input = True
        self.turns.attend()
        if self.hart.state.stop_reason == StopReason.NONE:
            self.hart.state.stop_reason = StopReason.HALT

    def _device_fetch(self) -> None:
        """The hart fetched from a device (directly, or through an executable page),
        where Unicorn cannot execute: the trap QEMU 7.2 takes. QEMU fetches from a
        device as a 2-byte read of its registers: where the device's access rules
        refuse that (the CLINT, the PLIC, the UART past its registers) it is an
        instruction access fault, tval = the address; where they take it (the
        finisher, which reads 0, and the UART's registers) the read happens, with its
        effects, and what it returns is the instruction. Those are byte registers, so
        the parcel is a 16-bit instruction below 0x100: illegal (cause 2, tval = the
        parcel) unless it is a c.addi4spn with an immediate, a c.addi/c.nop or a
        c.slli, which QEMU executes and privlab cannot (an instruction access fault
        then; docs/machine.md). Devices without rules (virtio-mmio, the reset ROM):
        an instruction access fault."""
        pc = self.hart.pc
        pa = self.memory.translate(pc, "x")
        dev = next((d for d in self.devices if pa is not None and d.base <= pa < d.base
                    + -(-d.size // PAGE_SIZE) * PAGE_SIZE), None)
        if pa is not None and dev is not None and _takes(dev, pa - dev.base, 2):
            try:
                parcel = dev.read(pa - dev.base, 2) & 0xFFFF
            except GuestError as e:
                self._fail(e)
                return
            if parcel < 0x100 and parcel & 3 == 0 and parcel & 0xE0 == 0:
                self.hart.device_fetch_trap(pc, Exc.ILLEGAL_INSTRUCTION, parcel)
                return
        self.hart.state.unmapped_type = UC_MEM_FETCH_UNMAPPED
        self.hart.access_fault(pc)

    def _fail(self, error: GuestError) -> None:
        if self._device_error is None:
            self._device_error = error
        self.hart.state.stop_reason = StopReason.HALT
        self.turns.attend()

    # -- running -----------------------------------------------------------------------
    def request_stop(self) -> None:
        """Ask a running machine to stop at the next block boundary (thread-safe): the
        run ends with Stop.USER, and so does the next one if none is running. The
        request is kept apart from the core's stop reason, so one that arrives while
        the core is stopping for something else (an event, a poll) is not lost."""
        with self._stop_lock:
            self._stop_wanted = True
            self.turns.attend()              # turns the core runs back to back end too
            if self.hart.state.stop_reason == StopReason.NONE:
                self.hart.state.stop_reason = StopReason.USER

    def _report_stop(self) -> bool:
        """The run loop takes a request_stop (True), clearing the USER stop it set on
        whichever hart was current then (the loop has reset the running hart's)."""
        with self._stop_lock:
            if not self._stop_wanted:
                return False
            self.cancel_stop()
            return True

    def cancel_stop(self) -> None:
        """Forget a request_stop that no run has reported yet, and the USER stop it set."""
        with self._stop_lock:
            self._stop_wanted = False
            for hart in self.harts:
                if hart.state.stop_reason == StopReason.USER:
                    hart.state.stop_reason = StopReason.NONE

    def _drain(self) -> None:
        s = self.hart.state
        if s.ev_len:
            raw = ctypes.string_at(ctypes.addressof(self.hart.event_buffer),
                                   s.ev_len * ctypes.sizeof(EventRecord))
            s.ev_len = 0
            self.events.append_raw(raw)

    def _result(self, stop: Stop, message: str = "", status: int | None = None,
                event: Event | None = None, condition: Until | None = None) -> RunResult:
        s = self.hart.state
        access = DataAccess(s.watch_addr, bool(s.watch_write)) if stop is Stop.WATCH else None
        return RunResult(stop=stop, exit_status=status, message=message, pc=self.hart.pc,
                         priv=self.hart.priv, instret=s.instret,
                         last_traps=[e for e in self.events.tail(16)
                                     if isinstance(e, TrapEvent)][-8:],
                         event=event, condition=condition, access=access)

    def run(self, max_insns: int | None = None, *, until: Until | list[Until] | None = None,
            on_stop: Callable[[], None] | None = None) -> RunResult:
        """Run until the guest halts, `max_insns` more instructions retire, one of the
        `until` conditions holds, a debugger stop, or the guest gets stuck (which is a
        Stop.ERROR result with the diagnosis, not an exception)."""
        conditions = [] if until is None else list(until) if isinstance(until, list) else [until]
        if self.smp > 1 and not self.turns.in_turn:
            return self.turns.run(max_insns, conditions, on_stop)
        s = self.hart.state
        budget = (s.instret + max_insns) if max_insns is not None else (1 << 64) - 1
        exact = min((c.instret for c in conditions if isinstance(c, AtInstret)),
                    default=None)
        if exact is not None and exact <= budget:
            budget = exact
            if exact - s.instret > EXACT_APPROACH:
                # At full speed to just short of it; exactly (every block checked
                # against the budget) only for the last stretch.
                rest: list[Until] = [c for c in conditions if not isinstance(c, AtInstret)]
                near = self.run(exact - EXACT_APPROACH - s.instret, until=rest,
                                on_stop=on_stop)
                if near.stop is not Stop.BUDGET:
                    return near
        s.budget = budget
        s.budget_exact = int(exact is not None and exact == budget)
        if s.budget_exact:
            # A loop's block re-entered on the core's fast path is not checked against
            # the budget: start the exact stretch with no block on it (after the run
            # at full speed to just short of it, the loop's block would be).
            self.hart.sync()
        s.record_events = 1
        self._ran_since_step.add(int(s.hart_id))
        self._arm(conditions)
        self._schedule_input_poll()
        if not self.turns.in_turn:           # (a multi-hart run looks once, at its start)
            self.uart.look_for_input()       # fed since the last run
        self.hart.update()
        try:
            return self._loop(on_stop, conditions)
        finally:
            s = self.hart.state              # the hart a chain of turns ended on
            s.budget = (1 << 64) - 1
            s.poll_at = (1 << 64) - 1
            s.budget_exact = 0
            self._disarm(conditions)
            self._drain()
            self.console.flush()

    def _schedule_input_poll(self) -> None:
        """Live console input is looked for every INPUT_POLL_INSNS instructions: a
        guest waiting for the receive interrupt never reads the UART by itself."""
        poll = (1 << 64) - 1
        if getattr(self.uart.source, "live", False):
            poll = self.hart.state.instret + INPUT_POLL_INSNS
        if self.checkpoint is not None and self.smp == 1:   # several: between turns
            poll = min(poll, max(self.next_checkpoint, self.hart.state.instret + 1))
        self.hart.state.poll_at = poll

    def _arm(self, conditions: list[Until]) -> None:
        s = self.hart.state
        for c in conditions:
            if isinstance(c, AfterTrap):
                exc, irq = c.masks()
                s.stop_exceptions |= exc
                s.stop_interrupts |= irq
            elif isinstance(c, AfterSyscall):
                s.stop_exceptions |= 1 << 8
            elif isinstance(c, AfterXret):
                s.stop_on_xret = 1
            elif isinstance(c, PrivilegeChange):
                s.stop_on_priv_change = 1
            elif isinstance(c, AtAddress):
                self.hart.set_breakpoint(c.addr)

    def _disarm(self, conditions: list[Until]) -> None:
        s = self.hart.state
        s.stop_exceptions = s.stop_interrupts = 0
        s.stop_on_xret = s.stop_on_priv_change = 0
        for c in conditions:
            if isinstance(c, AtAddress) and c.addr not in self.breakpoints:
                self.hart.set_breakpoint(c.addr, False)

    def _matched(self, conditions: list[Until], first: int) -> tuple[Event, Until] | None:
        """The first event since index `first` that satisfies a condition."""
        events = self.events.tail(len(self.events) - first) if len(self.events) > first else []
        for e in events:
            for c in conditions:
                if isinstance(c, AfterTrap | AfterSyscall | AfterXret | PrivilegeChange) \
                        and c.matches(e):
                    return e, c
        return None

    def _loop(self, on_stop: Callable[[], None] | None, conditions: list[Until]) -> RunResult:
        s = self.hart.state
        end = (1 << self.xlen) - 1  # odd, so never a pc: Unicorn's "until" never hits
        while True:
            first = len(self.events)
            error = 0
            try:
                if self.turns.chaining:
                    error = self.turns.chain()
                    s = self.hart.state
                else:
                    self.uc.emu_start(self.hart.pc, end)
            except EngineError as e:
                error = e.errno
            if error == UC_ERR_EXCEPTION and self._vtlb:
                error = self.hart.vtlb_stop()
            if error == UC_ERR_FETCH_PROT:
                self._device_fetch()
            elif error in _UNMAPPED:
                # Unmapped physical memory: an access fault at the faulting instruction
                # (docs/unicorn.md#unmapped-memory-is-a-host-error).
                self.hart.access_fault(self.hart.pc)
            elif error and error != UC_ERR_EXCEPTION:
                # Not UC_ERR_EXCEPTION: that is an ebreak the core has delivered
                # (docs/unicorn.md#ebreak-is-an-invalid-instruction).
                return self._result(Stop.ERROR, f"emulator error: {EngineError(error)}")
            self._drain()
            self._poll_htif()
            reason = StopReason(s.stop_reason)
            s.stop_reason = StopReason.NONE
            if on_stop is not None:
                on_stop()
            if self._device_error is not None or self._halted is not None \
                    or self._waiting_for_input:
                self.hart.stopped_at(self.hart.pc)    # a device access ended the run
            if self._device_error is not None:
                err, self._device_error = self._device_error, None
                return self._result(Stop.ERROR, str(err))
            if self._halted is not None:
                status, why = self._halted
                return self._result(Stop.HALT, why, status)
            if self._waiting_for_input:
                self._waiting_for_input = False
                return self._result(Stop.INPUT_ENDED, (
                    f"the console input has ended and the guest kept polling for more "
                    f"({IDLE_POLL_LIMIT} times with no output)"))
            if self._stop_wanted and self._report_stop():
                return self._result(Stop.USER)
            if reason == StopReason.EVENT:
                hit = self._matched(conditions, first)
                if hit is not None:
                    return self._result(Stop.EVENT, event=hit[0], condition=hit[1])
                continue
            if reason == StopReason.BUDGET:
                stepped = self._step_to_budget(conditions, first)
                if stepped is not None:
                    return stepped
                at = next((c for c in conditions if isinstance(c, AtInstret)
                           and s.instret >= c.instret), None)
                if at is not None:
                    return self._result(Stop.EVENT, condition=at)
            if reason == StopReason.WATCH:
                return self._result(Stop.WATCH)
            if reason == StopReason.BREAKPOINT:
                at_addr = next((c for c in conditions if isinstance(c, AtAddress)
                                and c.addr == s.break_addr), None)
                self.hart.skip_breakpoint_once(s.break_addr)
                return self._result(Stop.BREAKPOINT, condition=at_addr)
            outcome = self._handle(reason)
            if outcome is not None:
                return outcome

    def _step_to_budget(self, conditions: list[Until], first: int) -> RunResult | None:
        """Running to an exact instret, the core stopped before a block that would
        cross it: single-step up to it. A halt or a matched condition on the way ends
        the run there."""
        s = self.hart.state
        for _ in range(MAX_BUDGET_STEPS):        # a block is shorter; a plain budget
            if s.instret >= s.budget:            # stops at or past it: no step at all
                break
            result = self.step()
            if result.stop is not Stop.STEP:      # powered off, or stuck in wfi
                return result
            hit = self._matched(conditions, first)
            if hit is not None:
                return self._result(Stop.EVENT, event=hit[0], condition=hit[1])
        return None

    def _handle(self, reason: StopReason) -> RunResult | None:
        s = self.hart.state
        if reason == StopReason.BUDGET:
            if self.turns.in_turn:
                return TURN_OVER
            return self._result(Stop.BUDGET, "instruction budget exhausted")
        if reason == StopReason.USER:
            self.cancel_stop()
            return self._result(Stop.USER)
        if reason == StopReason.RESUME:
            self.hart.resume()
            return None
        if reason == StopReason.POLL:
            if self.checkpoint is not None and self.smp == 1 \
                    and s.instret >= self.next_checkpoint:
                self.checkpoint()            # between two blocks: nothing the guest sees
            self._schedule_input_poll()
            if getattr(self.uart.source, "live", False):
                self.uart.look_for_input()
                self.hart.update()
            return None
        if reason == StopReason.STORM:
            name = self._cause_name(s.storm_cause)
            mtvec = self.hart.csr(Csr.MTVEC)
            at_vector = (f"; {VECTOR_FAULTS} (mtvec {mtvec:#x})"
                         if self.hart.priv is Priv.M and s.storm_epc == mtvec & ~3 else "")
            return self._result(Stop.ERROR, (
                f"trap storm: {name} (cause {s.storm_cause:#x}) at epc {s.storm_epc:#x}, "
                f"tval {s.storm_tval:#x}, repeated {s.storm_limit} times with no progress"
                f"{at_vector}"))
        if reason == StopReason.WFI and self.turns.in_turn:
            self.turns.wfi_yield = True      # the hart waits; the others run on
            return TURN_OVER
        if reason == StopReason.WFI:
            if not self.hart.wfi_wake():
                return self._result(Stop.ERROR, (
                    f"wfi with no interrupt source at pc {s.stop_pc - 4:#x}: nothing "
                    "pending is enabled in mie and no timer is armed"))
            self.hart.take_pending_interrupt()
            self._drain()
        return None

    # -- several harts: the turns are schedule.py's HartTurns -------------------------
    def total_instret(self) -> int:
        """Instructions every hart has retired, together (HartTurns.total_instret)."""
        return self.turns.total_instret()

    def next_hart(self) -> int:
        """The hart that runs the machine's next instruction (HartTurns.next_hart)."""
        return self.turns.next_hart()

    def step_machine(self) -> RunResult:
        """One instruction of the machine, of whichever hart's turn it is
        (HartTurns.step): with one hart, `step()`."""
        return self.turns.step()

    def _cause_name(self, cause: int) -> str:
        from ..abi.csr import cause_name, decode_cause
        return cause_name(*decode_cause(cause, self.xlen))

    def step(self) -> RunResult:
        """Execute exactly one instruction (or take the interrupt pending before it and
        then execute the handler's first instruction, as hardware would). A trapping
        instruction ends the step at its trap vector."""
        s = self.hart.state
        s.record_events = 1
        if int(s.hart_id) in self._ran_since_step:
            # Unicorn 2.1.4 counts a one-instruction run with a check that blocks
            # translated during a run do not carry: without this flush the first step
            # after a run would execute (and not count) the rest of such a block
            # (docs/unicorn.md#counted-runs-need-fresh-translations).
            self.uc.ctl_flush_tb()
            self._ran_since_step.discard(int(s.hart_id))
        self.hart.update()
        for _ in range(2):
            self.hart.step_begin()
            error = 0
            try:
                self.uc.emu_start(self.hart.pc, (1 << self.xlen) - 1, 0, 1)
            except EngineError as e:
                error = e.errno
                if error == UC_ERR_EXCEPTION and self._vtlb:
                    error = self.hart.vtlb_stop()
            finally:
                self.hart.step_end()
            if error == UC_ERR_FETCH_PROT:
                self._device_fetch()
            elif error in _UNMAPPED:
                self.hart.access_fault(self.hart.pc)
            reason = StopReason(s.stop_reason)
            s.stop_reason = StopReason.NONE
            if reason != StopReason.RETRY:
                break
            # The instruction's access was to a watched page but not to watched bytes:
            # the core let it through for the next try, which this is.
        self._drain()
        self._poll_htif()
        if self._halted is not None:
            status, why = self._halted
            return self._result(Stop.HALT, why, status)
        if reason == StopReason.WATCH:
            return self._result(Stop.WATCH)   # the instruction did not run
        if reason == StopReason.BREAKPOINT:
            # A breakpoint on the instruction: it did not run (a step that starts on
            # one the caller means to pass sets skip_breakpoint_once first, as gdb
            # does). The next step or run executes it, as after a run's stop there.
            self.hart.skip_breakpoint_once(s.break_addr)
            return self._result(Stop.BREAKPOINT)
        if reason == StopReason.WFI:
            # A stepped wfi waits as in a run: time skips to the interrupt, which is
            # taken, so the step ends at the trap vector (or the hart is stuck).
            stuck = self._handle(reason)
            if stuck is not None:
                return stuck
        return self._result(Stop.STEP)

    def read_virtual(self, vaddr: int, size: int) -> bytes:
        """Guest memory through the current satp and privilege."""
        return self.memory.read_virtual(vaddr, size)

    def write_virtual(self, vaddr: int, data: bytes) -> None:
        """Write guest memory through the current satp; code and page-table caches in
        the core are refreshed."""
        self.memory.write_virtual(vaddr, data)
        for hart in self.harts:
            hart.sync()

    def read_physical(self, paddr: int, size: int) -> bytes:
        return self.memory.read(paddr, size)

    def write_physical(self, paddr: int, data: bytes) -> None:
        self.memory.write(paddr, data)
        for hart in self.harts:
            hart.sync()

    def ram_view(self, paddr: int, size: int) -> memoryview:
        """RAM by physical address as host memory, not a copy (devices' DMA:
        harness/devices/virtqueue.py); GuestError outside RAM. After writing through
        it, call `dma_written()`."""
        if size < 0 or not self.memory.in_ram(paddr, size):
            raise GuestError(f"physical range {paddr:#x}+{size:#x} is not RAM")
        offset = paddr - self.memory.ram_base
        return memoryview(self.memory.host)[offset:offset + size]

    def dma_written(self) -> None:
        """A device wrote RAM through `ram_view`: the harts refresh what they cache."""
        for hart in self.harts:
            hart.sync()

    @property
    def stop_requested(self) -> bool:
        """A request_stop (Ctrl-C, a debugger) waits: a device doing long work for one
        guest access stops between two requests (harness/devices/virtio_mmio.py)."""
        return self._stop_wanted

    def set_breakpoint(self, addr: int) -> None:
        self.breakpoints.add(addr)
        for hart in self.harts:            # every hart stops there
            hart.set_breakpoint(addr)

    def clear_breakpoint(self, addr: int) -> None:
        self.breakpoints.discard(addr)
        for hart in self.harts:
            hart.set_breakpoint(addr, False)

    def close(self) -> None:
        """Release what the machine holds of the host: its cores, its Unicorn engines
        (each reserves 1 GiB of translation-cache address space), its RAM and its disk.
        The machine is unusable afterwards; a second close does nothing."""
        if self._closed:
            return
        self._closed = True
        if self._codesync is not None:
            self._codesync.close()
        for hart in self.harts:
            hart.close()      # the cores first: their hooks point at them
        for uc in self.ucs:
            uc.close()    # at once: 30 machines left to the collector reached 10 GiB
        self.memory.close()
        if self.disk is not None:
            self.disk.close()


# What Unicorn 2.1.4 reserves per engine for its translation cache (its default
# UC_CTL_TCG_BUFFER_SIZE), when the engine first maps memory.
TCG_BUFFER_BYTES = 1 << 30


def _room_for_engines(harts: int, ram_size: int) -> None:
    """MemoryError unless the address space has room for `harts` engines and the RAM.
    Unicorn cannot fail softly there: when it cannot map an engine's translation
    cache it prints "Could not allocate dynamic translator buffer" and exits the
    process with status 1, which under the grader's address-space limit
    (harness/grade/memlimit.py) ended a test process with no word of why. So the room
    is tried first with a reservation of the same size (no memory is touched)."""
    size = harts * TCG_BUFFER_BYTES + ram_size
    try:
        probe = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                          | getattr(mmap, "MAP_NORESERVE", 0), prot=0)   # PROT_NONE
    except OSError:
        raise MemoryError(f"no address space for a machine of {harts} hart(s): "
                          f"{size >> 20} MiB for translation caches and RAM") from None
    probe.close()


_registered_rules: tuple[tuple[int, int, int, int, int, int], ...] | None = None


def _register_access_rules(devices: list[Device]) -> None:
    """Give the native core the devices' access rules (devaccess.c), once per process:
    every machine has the same platform."""
    global _registered_rules
    rules = tuple((dev.base, -(-dev.size // PAGE_SIZE) * PAGE_SIZE, r.lo, r.hi, r.min_size,
                   r.max_size)
                  for dev in devices for r in getattr(dev, "access_rules", ()))
    if rules == _registered_rules:
        return
    lib = load_library()
    lib.devaccess_clear()
    for base, span in {(base, span) for base, span, *_ in rules}:
        lib.devaccess_region(base, base + span)
    for base, _span, lo, hi, least, most in rules:
        lib.devaccess_rule(base + lo, base + hi, least, most)
    _registered_rules = rules


def _takes(dev: Device, offset: int, size: int) -> bool:
    """Does a device with access rules take an access of `size` bytes at `offset`?"""
    return any(r.lo <= offset and offset + size <= r.hi and r.min_size <= size <= r.max_size
               for r in getattr(dev, "access_rules", ()))


def _upper_half(addr: int) -> bool:
    """Is a device call at physical `addr` the second half of an access Unicorn split in
    two (an 8-byte access reaches a device as two 4-byte calls)? Asked by the device
    calls of a device QEMU serves one register per access, whatever its size."""
    return bool(load_library().devaccess_in_last(addr))
