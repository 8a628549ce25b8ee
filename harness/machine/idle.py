"""Idle harts: proving that a hart spins in a loop that changes nothing, so that its
turns can go by without running it (schedule.py's HartTurns).

A hart is *idle* at a point P (a pc, with its integer and floating-point registers,
privilege, the CSRs in COMPARED, and the contents of every RAM page it reads, writes or
fetches from, with the page-table pages that map them) when, running from P, it comes
back to P with all of them equal, having taken no trap, touched no device, read no
counter, `mip` or `sip`, written no CSR outside COMPARED and made no LR reservation. What
it does from P depends on nothing but that state, so it would go round the same loop
forever, changing nothing another hart can see at P, until another hart (or a device's
DMA) writes one of those pages or an interrupt becomes pending and enabled in its `mie`.
xv6's scheduler with nothing to run is such a loop: it takes and releases every
process's lock, and the stores leave memory as it was.

A proof (`Probe`) takes two turns of the hart, run as any turn is, only watched through
hooks on that hart's engine alone that only record (harness/native/idlewatch.c, C
callbacks). The *survey* turn counts the blocks the hart enters; P is the start of the
one entered least often (a loop's head, entered once per iteration). In the hart's next
turn the core's breakpoint stops it at every arrival at P, and a memory hook records
every load and store (address and size). The first arrival takes P's state; the next
arrival in that same state closes a first iteration: its code is checked (no counter,
`mip`, `sip` or other CSR outside COMPARED, no LR), its accesses and code are translated
to physical bytes, with the page-table entries that map them, and those bytes are
copied. The next such arrival closes a second iteration, which must have touched no
address and run no block the first did not, and found every byte as copied: the loop is
proven, and the hart is parked right there, at P, its turn over. A proof that fails (a
trap, a device access, something new, a byte changed, no return within PROBE_INSNS
instructions or MAX_ARRIVALS arrivals in another state) just ends, and the next waits
for more quiet turns (MAX_BACKOFF at most). While a proof runs, its turn may run past its
quantum (up to PROBE_INSNS), which is a function of guest state like everything here.

A loop that stores (xv6's takes and releases locks) is parked only if P is where the
hart *holds nothing*: interrupts enabled in its mode (`sstatus.SIE` or `mstatus.MIE`).
Kernels hold their spinlocks with interrupts off (xv6's push_off, Linux's
spin_lock_irqsave); parked with memory as it is at P for good, a hart must not be
holding what others wait for. A loop that only loads (a hart waiting for a flag) leaves
memory the same at every point, so any P will do. Only S- and M-mode loops are proven.

A parked hart yields its turns, retiring nothing, as a hart in `wfi` does: guest time
advances with the other harts' instructions, and when every hart waits or is parked, time
skips to the first timer due. It takes its turns again, from P, as soon as one of its
bytes differs from its copy or an interrupt would wake it: any interrupt pending and
enabled in `mie` if its loop writes CSRs (xv6's turns interrupts on and off), as for
`wfi`; otherwise one it would take there, with its enables as they are. All of it depends
only on guest state: the same image, input and seed park the same harts at the same
instructions, whether the run is run in one go, stopped, stepped or replayed from a
snapshot (which keeps the parked harts and a proof under way).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from unicorn.riscv_const import UC_RISCV_REG_F0, UC_RISCV_REG_PRIV, UC_RISCV_REG_X1

from ..abi.csr import Csr, Priv
from ..abi.paging import PAGE_SIZE
from ..errors import GuestError
from ..mmu.walk import walk
from ..native.clib import CLibrary, built_library
from ..native.library import SOURCE_DIR
from .until import AfterTrap

if TYPE_CHECKING:
    from .hart import Hart
    from .machine import Machine

__all__ = ["IDLE_LIBRARY", "PROBE_INSNS", "Parked", "Probe", "holds_nothing",
           "load_idle_library", "may_probe", "reads_timely_csr"]

IDLE_LIBRARY = CLibrary("libprivlab_idle.so", SOURCE_DIR, ("idlewatch.c",), (), "idle_gen.h",
                        lambda: "/* nothing generated */\n", unicorn=True,
                        what="the idle-loop watch (harness/native/idlewatch.c)")

PROBE_INSNS = 40_000       # a proof's two iterations must end within this many instructions
MAX_ACCESSES = 4096        # idlewatch.c's bounds
MAX_BLOCKS = 512
MERGE_GAP = 16             # ranges this close are compared as one
MAX_BACKOFF = 256          # turns between failed proofs, at most
WOKEN_BACKOFF = 4          # turns a woken hart runs before its next proof
MAX_ARRIVALS = 256         # returns to P's pc in another state before a proof gives up

# What besides the registers decides what a loop does: compared at P.
COMPARED = (Csr.MSTATUS, Csr.MIE, Csr.MEPC, Csr.MCAUSE, Csr.MTVAL, Csr.MSCRATCH, Csr.MTVEC,
            Csr.MEDELEG, Csr.MIDELEG, Csr.MCOUNTEREN, Csr.MENVCFG, Csr.SEPC, Csr.SCAUSE,
            Csr.STVAL, Csr.SSCRATCH, Csr.STVEC, Csr.SATP, Csr.SCOUNTEREN, Csr.SENVCFG)
# CSRs a loop may name: the compared ones, their S-mode views and the constant ID
# registers (not fcsr: its accrued flags are not compared, and only a CSR read shows
# them). Any other (counters, mip/sip, timers, PMP, triggers...)
# makes the loop one that is not parked.
_ALLOWED = {int(c) for c in COMPARED} | {int(c) for c in (
    Csr.SSTATUS, Csr.SIE, Csr.MHARTID, Csr.MVENDORID, Csr.MARCHID,
    Csr.MIMPID, Csr.MISA)}
_XREGS = [UC_RISCV_REG_X1 + i for i in range(31)]
_FREGS = [UC_RISCV_REG_F0 + i for i in range(32)]
_MSTATUS_MIE, _MSTATUS_SIE, _MSTATUS_MPRV = 1 << 3, 1 << 1, 1 << 17
_NO_PC = (1 << 64) - 1


@cache
def load_idle_library() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(built_library(IDLE_LIBRARY)))
    vp, u64, i64 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64
    for name, res, args in (("watch_new", vp, [vp]), ("watch_free", None, [vp]),
                            ("watch_clear", None, [vp]), ("watch_pages", i64, [vp, vp, u64]),
                            ("watch_blocks", i64, [vp, vp, u64])):
        fn = getattr(lib, name)
        fn.restype, fn.argtypes = res, args
    lib.watch_note_access.restype = None
    lib.watch_note_access.argtypes = [vp, u64, ctypes.c_uint32]
    lib.watch_accesses.restype, lib.watch_accesses.argtypes = i64, [vp, vp, u64]
    lib.watch_note_block.restype = None
    lib.watch_note_block.argtypes = [vp, u64, ctypes.c_uint32]
    lib.watch_set_overflow.restype, lib.watch_set_overflow.argtypes = None, [vp]
    lib.watch_stored.restype, lib.watch_stored.argtypes = ctypes.c_int, [vp]
    lib.watch_memory.restype, lib.watch_memory.argtypes = ctypes.c_int, [vp]
    lib.watch_block_counts.restype, lib.watch_block_counts.argtypes = i64, [vp, vp, u64]
    lib.watch_set_stored.restype, lib.watch_set_stored.argtypes = None, [vp]
    return lib


def writes_csr(code: bytes) -> bool:
    """Does this straight run of code hold a CSR instruction that writes its CSR?"""
    i = 0
    while i + 2 <= len(code):
        if code[i] & 3 != 3:
            i += 2
            continue
        if i + 4 > len(code):
            break
        insn = int.from_bytes(code[i:i + 4], "little")
        funct3, rs1 = (insn >> 12) & 7, (insn >> 15) & 31
        if insn & 0x7F == 0x73 and (funct3 in (1, 5) or (funct3 in (2, 3, 6, 7) and rs1)):
            return True
        i += 4
    return False


def would_trap(hart: Hart) -> bool:
    """Is an interrupt pending that the hart takes now, in its mode with its enables
    (the privileged spec's rule: an M-level one unless in M-mode with MIE clear, a
    delegated one below S-mode or in S-mode with SIE set)?"""
    pending = hart.mip() & hart.csr(Csr.MIE)
    if not pending:
        return False
    priv, mstatus = hart.priv, hart.csr(Csr.MSTATUS)
    delegated = pending & hart.csr(Csr.MIDELEG)
    m_level = pending & ~delegated
    if m_level and (priv != Priv.M or mstatus & _MSTATUS_MIE):
        return True
    return bool(delegated) and (priv == Priv.U or (priv == Priv.S and bool(mstatus & _MSTATUS_SIE)))


def reads_timely_csr(code: bytes) -> bool:
    """Does this straight run of code hold an instruction that makes a loop depend on
    more than its registers and memory: a CSR instruction on a CSR outside _ALLOWED
    (counters, `mip`, `sip`, timers...), or an LR (whose reservation is not compared)?"""
    i = 0
    while i + 2 <= len(code):
        if code[i] & 3 != 3:
            i += 2                        # compressed: none of them is either
            continue
        if i + 4 > len(code):
            break
        insn = int.from_bytes(code[i:i + 4], "little")
        op, funct3 = insn & 0x7F, (insn >> 12) & 7
        if op == 0x73 and funct3 not in (0, 4) and (insn >> 20) not in _ALLOWED:
            return True
        if op == 0x2F and (insn >> 27) == 0b00010:     # LR.W / LR.D
            return True
        i += 4
    return False


@dataclass
class Parked:
    """A parked hart: the RAM bytes its loop depends on (ranges at offsets into RAM)
    and what they held when it was parked."""

    pages: list[tuple[int, bytes]]
    # Its code writes CSRs (xv6's loop turns interrupts on and off): it wakes on any
    # interrupt pending and enabled in mie, as wfi does. One whose CSRs stay as they
    # are wakes only on an interrupt it would take there (would_trap).
    writes_csrs: bool = True

    def wakes(self, hart: Hart, ram: object) -> bool:
        """Would the hart, spinning on, do something else now?"""
        pending = would_trap(hart) if not self.writes_csrs \
            else bool(hart.mip() & hart.csr(Csr.MIE))
        return pending or self.disturbed(ram)

    def disturbed(self, ram: object) -> bool:
        view = memoryview(ram)            # type: ignore[arg-type]
        return any(view[off:off + len(data)] != data for off, data in self.pages)


def _csr(hart: Hart, csr: Csr) -> int | None:
    try:
        return hart.csr(csr)
    except KeyError:                      # not on this hart (RV32's, or no extension)
        return None


def may_probe(hart: Hart) -> bool:
    """S-mode, or M-mode without MPRV: where a proof may start (a kernel's or a
    firmware's idle loop; user programs are left alone)."""
    priv = hart.priv
    if priv == Priv.M:
        return not hart.csr(Csr.MSTATUS) & _MSTATUS_MPRV
    return priv == Priv.S


def holds_nothing(hart: Hart) -> bool:
    """Interrupts are enabled in the hart's mode: kernels hold no spinlock there."""
    bit = _MSTATUS_MIE if hart.priv == Priv.M else _MSTATUS_SIE
    return bool(hart.csr(Csr.MSTATUS) & bit)


class Probe:
    """A proof under way on hart `k` (see the module's docstring): a survey turn, then
    a proving turn."""

    def __init__(self, m: Machine, k: int, saved: dict[str, Any] | None = None) -> None:
        """A proof starting now on hart k with its survey, or (`saved`) the one
        `state()` saw in a snapshot, going on."""
        self.m = m
        self.k = k
        hart = m.harts[k]
        self.hart = hart
        self.events = len(m.events) + int(hart.state.ev_len)
        self.pc: int | None = None        # P, chosen by the survey
        self.start: tuple[int | None, ...] | None = None   # the state at P
        self.begun = int(hart.state.instret)
        self.last_arrival = -1
        self.arrivals = 0                 # at P in another state
        self.free = False
        self.writes_csrs = False
        self.pages: list[tuple[int, bytes]] | None = None   # copied after iteration 1
        self.vpages: set[tuple[int, int]] = set()   # the accesses of iteration 1
        self.blocks: set[tuple[int, int]] = set()
        if saved is not None:
            for name in ("pc", "start", "begun", "last_arrival", "arrivals", "free",
                         "writes_csrs", "pages"):
                setattr(self, name, saved[name])
            self.vpages, self.blocks = set(saved["vpages"]), set(saved["blocks"])
        self.trap = AfterTrap()            # its own object: told apart by identity
        lib = load_idle_library()
        self._lib = lib
        self._w = ctypes.c_void_p(lib.watch_new(m.ucs[k]._uch))
        if not self._w.value:
            raise GuestError("cannot hook the engine to watch an idle loop")
        if self.pc is not None:
            self._watch_memory()
        if saved is not None:
            if saved["recorded"] is None:
                lib.watch_set_overflow(self._w)
            else:
                accesses, blocks, stored = saved["recorded"]
                for addr, size in accesses:
                    lib.watch_note_access(self._w, addr, size)
                for start, size, count in blocks:
                    for _ in range(count):
                        lib.watch_note_block(self._w, start, size)
                if stored:
                    lib.watch_set_stored(self._w)
        if self.pc is None:
            self._flush()                 # translations made before call no block hook
        else:
            self._arm()
            if saved is not None and hart.pc == self.pc and saved["skip"]:
                hart.skip_breakpoint_once(self.pc)

    def _watch_memory(self) -> None:
        if not self._lib.watch_memory(self._w):
            raise GuestError("cannot hook the engine to watch an idle loop")
        self._flush()                     # translations made before call no memory hook

    def _arm(self) -> None:
        """A stop at every arrival at P: the core's breakpoint, armed for the proof's
        whole life (arming one is a retranslation), a stop the turn goes on from."""
        assert self.pc is not None
        self.hart.set_breakpoint(self.pc)

    def _flush(self) -> None:
        """Drop this hart's translations through the core (its guards and caches with
        them), as a write to its code pages does."""
        self.hart._lib.hart_code_written(self.hart._h, None, -1)

    def close(self) -> None:
        if self._w.value:
            self._lib.watch_free(self._w)
            self._w = ctypes.c_void_p(None)
            self._flush()                 # back to translations without the hooks
            if self.pc is not None and self.pc not in self.m.breakpoints:
                self.hart.set_breakpoint(self.pc, False)
            self.hart.skip_breakpoint_once(_NO_PC)   # no skip left for a later breakpoint

    def state(self) -> dict[str, Any]:
        """The proof as a snapshot keeps it (a snapshot may be taken within a turn)."""
        accesses, _ = self._recorded()
        blocks = self._block_counts()
        stored = bool(self._lib.watch_stored(self._w))
        return {"k": self.k, "pc": self.pc, "start": self.start, "begun": self.begun,
                "last_arrival": self.last_arrival, "arrivals": self.arrivals,
                "free": self.free, "writes_csrs": self.writes_csrs, "pages": self.pages,
                "vpages": set(self.vpages), "blocks": set(self.blocks),
                "skip": self.last_arrival == int(self.hart.state.instret),
                "recorded": None if accesses is None or blocks is None
                else (accesses, blocks, stored)}

    def _block_counts(self) -> list[tuple[int, int, int]] | None:
        out = (ctypes.c_uint64 * (3 * MAX_BLOCKS))()
        n = self._lib.watch_block_counts(self._w, out, MAX_BLOCKS)
        if n < 0:
            return None
        return [(out[3 * i], out[3 * i + 1], out[3 * i + 2]) for i in range(n)]

    def _state(self) -> tuple[int | None, ...]:
        hart = self.hart
        uc = self.m.ucs[self.k]
        return (hart.pc, int(uc.reg_read(UC_RISCV_REG_PRIV)), *uc.reg_read_batch(_XREGS),
                *uc.reg_read_batch(_FREGS), *(_csr(hart, c) for c in COMPARED))

    def turn_begins(self) -> None:
        """A turn of the hart begins: only its own traps from here count."""
        self.events = len(self.m.events) + int(self.hart.state.ev_len)
        if self.pc is not None and self.start is None:
            self.begun = int(self.hart.state.instret)

    def survey_over(self) -> bool:
        """The survey turn is over: P is the start of the block it entered least often
        (a loop's head, once per iteration). False if there is no proof to make."""
        counts = self._block_counts()
        if self.trapped() or not counts:
            return False
        self.pc = min(counts, key=lambda b: (b[2], b[0]))[0]
        self._lib.watch_clear(self._w)
        self._watch_memory()
        self._arm()
        return True

    def trapped(self) -> bool:
        return len(self.m.events) + int(self.hart.state.ev_len) != self.events

    def over(self) -> bool:
        """Past the instructions a proof may take."""
        return self.pc is not None and \
            int(self.hart.state.instret) - self.begun >= PROBE_INSNS

    def arrive(self) -> bool | None:
        """The hart is at P (before its instruction). True: proven, park it here; False:
        the proof failed; None: go on."""
        now = int(self.hart.state.instret)
        if now == self.last_arrival:
            return None                   # the same arrival, seen again
        self.last_arrival = now
        if self.trapped() or self.over():
            return False
        if self.start is None:            # the first arrival: the proof starts here
            if not may_probe(self.hart):
                return False
            self.start = self._state()
            self.free = holds_nothing(self.hart)
            self._lib.watch_clear(self._w)
            return None
        xregs = self.m.ucs[self.k].reg_read_batch(_XREGS)
        if tuple(xregs) != self.start[2:2 + len(_XREGS)] or self._state() != self.start:
            self.arrivals += 1
            return False if self.arrivals > MAX_ARRIVALS else None   # not round yet
        vpages, blocks = self._recorded()
        if vpages is None or blocks is None:
            return False
        # A loop that stores may be parked only where it holds nothing: parked, it
        # leaves memory as it is at P for good, where it would have gone round its
        # stores (a lock taken and released) and let others in between.
        if not self.free and self._lib.watch_stored(self._w):
            return False
        self._lib.watch_clear(self._w)
        if self.pages is None:            # iteration 1: what the loop depends on
            ranges = self._physical(vpages, blocks)
            if ranges is None:
                return False
            ram = self.m.memory.host
            self.pages = [(off, bytes(ram[off:off + n])) for off, n in ranges]
            self.vpages, self.blocks = vpages, blocks
            return None
        if not (vpages <= self.vpages and blocks <= self.blocks):
            return False
        return not Parked(self.pages).disturbed(self.m.memory.host)

    def parked(self) -> Parked:
        assert self.pages is not None
        return Parked(self.pages, self.writes_csrs)

    def _recorded(self) -> tuple[set[tuple[int, int]] | None, set[tuple[int, int]] | None]:
        """The (address, size) accesses and (start, size) blocks recorded since the last
        clear; None where the watch overflowed."""
        lib, w = self._lib, self._w
        accesses = (ctypes.c_uint64 * (2 * MAX_ACCESSES))()
        n = lib.watch_accesses(w, accesses, MAX_ACCESSES)
        blocks = (ctypes.c_uint64 * (2 * MAX_BLOCKS))()
        nb = lib.watch_blocks(w, blocks, MAX_BLOCKS)
        if n < 0 or nb < 0:
            return None, None
        return ({(accesses[2 * i], accesses[2 * i + 1]) for i in range(n)},
                {(blocks[2 * i], blocks[2 * i + 1]) for i in range(nb)})

    def _physical(self, accesses: set[tuple[int, int]],
                  blocks: set[tuple[int, int]]) -> list[tuple[int, int]] | None:
        """The RAM bytes (offsets, merged ranges) the loop depends on: those it loaded
        or stored, its code, and the page-table entries that map them; None if one is
        not RAM or its code reads something that is not state."""
        m = self.m
        mem = m.memory
        hart = self.hart
        spans: list[tuple[int, int, str]] = [(a, n, "r") for a, n in accesses]
        for start, size in blocks:
            try:
                code = mem.read_virtual(start, size, "x")
            except GuestError:
                return None
            if reads_timely_csr(code):
                return None
            self.writes_csrs = self.writes_csrs or writes_csr(code)
            spans.append((start, max(size, 1), "x"))
        satp = hart.csr(Csr.SATP)
        translated = hart.priv != Priv.M and satp >> (m.xlen - (4 if m.xlen == 64 else 1))
        pte = 8 if m.xlen == 64 else 4
        pages: dict[tuple[int, str], int | None] = {}
        ranges: list[tuple[int, int]] = []
        for va, size, access in spans:
            end = va + size
            while va < end:
                page = va & ~(PAGE_SIZE - 1)
                chunk = min(end, page + PAGE_SIZE) - va
                key = (page, access)
                if key not in pages:
                    pa = mem.translate(page, access)
                    if pa is None and access == "r":
                        pa = mem.translate(page, "w")
                    if pa is None or not mem.in_ram(pa, PAGE_SIZE):
                        return None
                    pages[key] = pa
                    if translated:
                        for step in walk(mem, satp, page, xlen=m.xlen).steps:
                            if not mem.in_ram(int(step.pte_addr), pte):
                                return None
                            ranges.append((int(step.pte_addr) - mem.ram_base, pte))
                pa = pages[key]
                assert pa is not None
                ranges.append((pa + (va - page) - mem.ram_base, chunk))
                va += chunk
        merged: list[tuple[int, int]] = []
        for off, n in sorted(ranges):
            if merged and off <= merged[-1][0] + merged[-1][1] + MERGE_GAP:
                last_off, last_n = merged[-1]
                merged[-1] = (last_off, max(last_n, off + n - last_off))
            else:
                merged.append((off, n))
        return merged
