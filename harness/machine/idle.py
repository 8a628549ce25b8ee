"""Idle harts: proving that a hart spins in a loop that changes nothing, so that its
turns can go by without running it (schedule.py's HartTurns).

A hart is *idle* when, from some point P (its pc, its integer registers, the CSRs in
IDLE_CSRS and the contents of every RAM page it touches), it returns to P with all of
them equal, having taken no trap, touched no device and read no counter or pending
interrupt bits. What it does next then depends on nothing but that state, so it would
go round the same loop again and again, changing nothing, until another hart writes one
of those pages or an interrupt becomes pending and enabled for it. xv6's scheduler
with no process to run is such a loop (it takes and releases every process's lock:
the stores leave memory as it was).

The proof takes two turns of the hart, both run as any turn is (only observed, through
Unicorn memory and code hooks that live for that turn alone):

1. *Watch*: a turn that took no trap records the virtual pages its loads and stores
   touched and the blocks it ran; a block that reads a counter (`cycle`, `time`,
   `instret`, `mhpmcounter*`) or `mip`/`sip` ends the attempt.
2. *Prove*: at the start of the next turn the hart is at P. Its registers and CSRs are
   read and the watched pages (translated through its own satp) are copied. When the
   hart arrives at P's pc again with the same registers and CSRs, having touched only
   watched pages, run only watched blocks and taken no trap, and every watched page
   holds what it held at P, the loop is proven: the hart is stopped right there, before
   P's instruction, and parked (`Idle`) with the copies.

A parked hart yields its turns until an interrupt is pending and enabled in its mie or
a parked page differs from its copy; then it takes its turns again (a later quiet turn
starts another proof). Parked harts retire no instructions, so, as for `wfi`, guest
time advances only with the others' instructions; when every hart waits or is parked,
time skips to the first timer due. All of it is a function of guest state: the same
image, input and seed park the same harts at the same instructions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from unicorn import UC_HOOK_BLOCK, UC_HOOK_CODE, UC_HOOK_MEM_READ, UC_HOOK_MEM_WRITE
from unicorn.riscv_const import UC_RISCV_REG_PRIV, UC_RISCV_REG_X1

from ..abi.csr import Csr

if TYPE_CHECKING:
    from .hart import Hart
    from .machine import Machine

PAGE = 4096
# What besides the integer registers decides what a loop does: compared at P.
IDLE_CSRS = (Csr.MSTATUS, Csr.MIE, Csr.MEPC, Csr.MCAUSE, Csr.MTVAL, Csr.MSCRATCH, Csr.MTVEC,
             Csr.SEPC, Csr.SCAUSE, Csr.STVAL, Csr.SSCRATCH, Csr.STVEC, Csr.SATP,
             Csr.MIDELEG, Csr.MEDELEG)
# CSRs whose value changes with time or with pending interrupts: a loop reading one is
# waiting for something, not idle.
_TIMELY = {0x344, 0x144} | set(range(0xC00, 0xC20)) | set(range(0xC80, 0xCA0)) \
    | set(range(0xB00, 0xB20)) | set(range(0xB80, 0xBA0))
MAX_BACKOFF = 64                          # quiet turns between failed attempts, at most
MAX_PAGES = 64                            # a loop touching more is not watched further
MAX_ARRIVALS = 160                        # returns to P's pc without a proof: give up
_REGS = [UC_RISCV_REG_X1 + i for i in range(31)]
_ORDER = [14, 13, 12, 11, 10, 9, 4, 5, 6, 27, 28, 29, 30, 1]   # a5..a0, t0..t6, sp (x-1)


def reads_timely_csr(code: bytes) -> bool:
    """Does this straight run of instructions hold a CSR instruction on a counter, mip
    or sip?"""
    i = 0
    while i + 2 <= len(code):
        half = int.from_bytes(code[i:i + 2], "little")
        if half & 3 != 3:
            i += 2
            continue
        if i + 4 > len(code):
            break
        insn = int.from_bytes(code[i:i + 4], "little")
        if insn & 0x7F == 0x73 and (insn >> 12) & 7 not in (0, 4) and (insn >> 20) in _TIMELY:
            return True
        i += 4
    return False


@dataclass
class Idle:
    """A parked hart: the RAM pages its loop touches (offsets into RAM) and what they
    held when it was parked."""

    pages: list[tuple[int, bytes]]

    def disturbed(self, ram: Any) -> bool:
        return any(ram[off:off + PAGE] != data for off, data in self.pages)


@dataclass
class Watched:
    """What a quiet turn of the hart touched: virtual pages (under `satp` and `priv`)
    and the blocks it ran (start, size)."""

    satp: int
    priv: int
    pages: set[int] = field(default_factory=set)
    blocks: set[tuple[int, int]] = field(default_factory=set)


class Probe:
    """The hooks of one turn of one hart: watching (`known` is None) or proving."""

    def __init__(self, m: Machine, k: int, known: Watched | None) -> None:
        self.m = m
        self.k = k
        self.uc = m.ucs[k]
        self.hart: Hart = m.harts[k]
        self.known = known
        self.seen = Watched(self._satp(), self._priv())
        self.failed = False
        self.proven: Idle | None = None
        self.events = self._events()
        self.handles: list[int] = []
        self.pc0 = self.hart.pc
        self.start: tuple[int, ...] | None = None
        self.arrivals = 0
        self.deleted = False
        self.start_csrs: tuple[int, ...] | None = None
        self.pages: list[tuple[int, bytes]] = []
        if known is not None:
            self._prepare(known)
        if self.failed:
            return
        self.handles.append(self.uc.hook_add(UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE,
                                             self._on_mem))
        self.handles.append(self.uc.hook_add(UC_HOOK_BLOCK, self._on_block))
        if known is not None:
            self.handles.append(self.uc.hook_add(UC_HOOK_CODE, self._on_p0, None,
                                                 self.pc0, self.pc0))
        self.uc.ctl_flush_tb()           # translations made before carry no hooks

    def _satp(self) -> int:
        return self.hart.csr(Csr.SATP)

    def _priv(self) -> int:
        return int(self.uc.reg_read(UC_RISCV_REG_PRIV))

    def _events(self) -> int:
        return len(self.m.events) + int(self.hart.state.ev_len)

    def _regs(self) -> tuple[int, ...]:
        return tuple(self.uc.reg_read_batch(_REGS)) + (self._priv(),)

    def _csrs(self) -> tuple[int, ...]:
        return tuple(self.hart.csr(c) for c in IDLE_CSRS)

    def _fail(self) -> None:
        """No proof this turn: the hooks stop calling back (Unicorn frees them when
        it next starts; the turn's end flushes the translations that call them)."""
        self.failed = True
        for h in self.handles:
            self.uc.hook_del(h)
        self.handles = []
        self.deleted = True

    def _prepare(self, known: Watched) -> None:
        """At P: its state and the watched pages' contents."""
        if (known.satp, known.priv) != (self.seen.satp, self.seen.priv):
            self.failed = True
            return
        mem = self.m.memory
        ram = mem.host
        for vpage in sorted(known.pages):
            pa = mem.translate(vpage)
            if pa is None or not mem.in_ram(pa & ~(PAGE - 1), PAGE):
                self.failed = True
                return
            off = (pa & ~(PAGE - 1)) - mem.ram_base
            self.pages.append((off, bytes(ram[off:off + PAGE])))
        self.start = self._regs()
        self.start_csrs = self._csrs()

    # -- hooks (inside Unicorn: no translation, no stop other than the park) --------
    def _on_mem(self, uc: Any, access: int, addr: int, size: int, value: int,
                _ud: Any) -> None:
        first, last = addr & ~(PAGE - 1), (addr + size - 1) & ~(PAGE - 1)
        if self.failed:
            return
        self.seen.pages.add(first)
        self.seen.pages.add(last)
        if len(self.seen.pages) > MAX_PAGES or (
                self.known is not None and not (first in self.known.pages
                                                and last in self.known.pages)):
            self._fail()

    def _on_block(self, uc: Any, addr: int, size: int, _ud: Any) -> None:
        if self.failed:
            return
        self.seen.blocks.add((addr, size))
        if self.known is not None and (addr, size) not in self.known.blocks:
            self._fail()

    def _on_p0(self, uc: Any, addr: int, size: int, _ud: Any) -> None:
        if self.failed or self.proven is not None:
            return
        self.arrivals += 1
        if self.arrivals == 1:
            return                       # the turn's first instruction: P itself
        if self._events() != self.events or self.arrivals > MAX_ARRIVALS:
            self._fail()
            return
        read = self.uc.reg_read
        start = self.start
        assert start is not None
        for i in _ORDER:                 # most loops differ in an a or t register
            if read(_REGS[i]) != start[i]:
                return
        if self._regs() != start or self._csrs() != self.start_csrs:
            return
        ram = self.m.memory.host
        if any(ram[off:off + PAGE] != data for off, data in self.pages):
            return
        if self.seen.pages - self.known.pages or self.seen.blocks - self.known.blocks:
            self._fail()
            return
        # Proven: stop before P's instruction, and park there.
        self.proven = Idle(self.pages)
        self.m.turns.parking = True
        self.hart.pc = self.pc0
        uc.emu_stop()

    # -- the turn is over --------------------------------------------------------
    def close(self) -> None:
        for h in self.handles:
            self.uc.hook_del(h)
        if self.handles or self.deleted:
            self.uc.ctl_flush_tb()       # back to translations without the hooks
        self.handles = []
        self.deleted = False

    def watched(self) -> Watched | None:
        """What a quiet watching turn saw, or None if it cannot lead to a proof."""
        if self.failed or self._events() != self.events:
            return None
        if (self._satp(), self._priv()) != (self.seen.satp, self.seen.priv):
            return None
        for addr, size in self.seen.blocks:
            try:
                code = self.m.memory.read_virtual(addr, size, "x")
            except Exception:            # noqa: BLE001 - unmapped now: no proof
                return None
            if reads_timely_csr(code):
                return None
        return self.seen
