"""The hart: Unicorn's CPU plus privlab's native core (trap entry, interrupts, time).

`Hart` is the Python face of harness/native: it owns the core, maps its shared state
block in place (`state`), and gives registers and CSRs as the guest sees them (the
virtualised ones — mip, time, counters — come from the core, not from Unicorn).
"""

from __future__ import annotations

import ctypes

from ..abi.csr import PMPCFG_FIELDS, Csr, Priv
from ..abi.unicorn_abi import UC_RISCV_REG_PC, UC_RISCV_REG_PRIV, UC_RISCV_REG_X0
from ..errors import GuestError
from ..native import EventRecord, SharedState, load_library

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .engine import Engine

_PMP = {f.name: f.mask(64) for f in PMPCFG_FIELDS}   # the core's access kinds (pmp.c)

__all__ = ["Hart"]

EVENT_BUFFER = 4096


class Hart:
    def __init__(self, uc: Engine, xlen: int) -> None:
        self._uc = uc
        self._lib = load_library()
        self.xlen = xlen
        self.mask = (1 << xlen) - 1
        handle = self._lib.hart_new(uc._uch, xlen)
        if not handle:
            raise GuestError("cannot run on this host: its libunicorn has neither the PLT "
                             "slots for the core's PMP check (pmp.c) nor a virtual TLB "
                             "(vtlb.c), see docs/install.md")
        self._h = ctypes.c_void_p(handle)
        self.state: SharedState = SharedState.from_address(handle)
        self.event_buffer = (EventRecord * EVENT_BUFFER)()
        self._ram = (0, 0, 0)
        self._lib.hart_set_event_buffer(self._h, ctypes.addressof(self.event_buffer),
                                        EVENT_BUFFER)

    def set_ram(self, host_address: int, base: int, size: int) -> None:
        """Tell the core where guest RAM lives in host memory (and so where memory
        is unmapped)."""
        if not self._lib.hart_set_ram(self._h, host_address, base, size):
            raise GuestError("cannot hook the physical memory outside RAM")

    def set_tohost(self, paddr: int) -> None:
        """HTIF: the core stops (StopReason.HALT) at every block entry while the
        XLEN-wide word at physical `paddr` is nonzero (0: never). No memory hook: any
        would send every load and store through Unicorn's slow path."""
        if not self._lib.hart_set_tohost(self._h, paddr, self.xlen // 8):
            raise GuestError(f"HTIF: tohost at {paddr:#x} is not in RAM")

    def resume(self) -> None:
        """The core stopped with StopReason.RESUME: it needed Unicorn restarted to
        reset its code-page guards (harness/native/guard.c). Call before running on."""
        self._lib.hart_resume(self._h)

    def unmapped_hook_ranges(self) -> list[tuple[int, int]]:
        """The physical ranges [lo, hi] the core watches for accesses to unmapped
        memory: everything outside RAM, never RAM itself
        (docs/unicorn.md#a-memory-hook-over-ram-slows-every-store)."""
        out: list[tuple[int, int]] = []
        lo, hi = ctypes.c_uint64(), ctypes.c_uint64()
        while self._lib.hart_unmapped_range(self._h, len(out), ctypes.byref(lo),
                                            ctypes.byref(hi)):
            out.append((lo.value, hi.value))
        return out

    def sync(self) -> None:
        """Refresh what the core caches after the host changed privilege, satp or
        memory contents directly."""
        self._lib.hart_sync(self._h)

    def close(self) -> None:
        if self._h:
            self._lib.hart_free(self._h)
            self._h = ctypes.c_void_p()

    def __del__(self) -> None:
        # A machine dropped without close(): its Unicorn engine goes with it, and a
        # core left registered would be taken for the next engine allocated at the
        # same address (pmp.c finds a hart by its engine's address).
        if getattr(self, "_h", None):
            self.close()

    # -- registers ---------------------------------------------------------------
    @property
    def pc(self) -> int:
        return int(self._uc.reg_read(UC_RISCV_REG_PC)) & self.mask

    @pc.setter
    def pc(self, value: int) -> None:
        self._uc.reg_write(UC_RISCV_REG_PC, value & self.mask)

    @property
    def priv(self) -> Priv:
        return Priv(int(self._uc.reg_read(UC_RISCV_REG_PRIV)) & 3)

    @priv.setter
    def priv(self, value: Priv) -> None:
        self._uc.reg_write(UC_RISCV_REG_PRIV, int(value))
        self.sync()

    def x(self, n: int) -> int:
        """Integer register x<n> (x0 reads 0)."""
        if not 0 <= n < 32:
            raise ValueError(f"no register x{n}")
        return 0 if n == 0 else int(self._uc.reg_read(UC_RISCV_REG_X0 + n)) & self.mask

    def set_x(self, n: int, value: int) -> None:
        if not 0 <= n < 32:
            raise ValueError(f"no register x{n}")
        if n:
            self._uc.reg_write(UC_RISCV_REG_X0 + n, value & self.mask)

    def csr(self, csr: Csr | int) -> int:
        """A CSR as the guest would read it, at any current privilege."""
        out = ctypes.c_uint64()
        if not self._lib.hart_read_csr(self._h, int(csr), ctypes.byref(out)):
            raise KeyError(f"CSR {int(csr):#x} is not available")
        return out.value & self.mask

    def set_csr(self, csr: Csr | int, value: int) -> None:
        if not self._lib.hart_write_csr(self._h, int(csr), value & self.mask):
            raise KeyError(f"CSR {int(csr):#x} is not available")

    # -- time and interrupts -----------------------------------------------------
    def mtime(self) -> int:
        return int(self._lib.hart_mtime(self._h))

    def mip(self) -> int:
        return int(self._lib.hart_mip(self._h))

    def update(self) -> None:
        """Recompute the core's deadline after a device or the host changed its state."""
        self._lib.hart_update(self._h)

    def take_pending_interrupt(self) -> bool:
        return bool(self._lib.hart_check_interrupts(self._h))

    def wfi_wake(self) -> bool:
        return bool(self._lib.hart_wfi_wake(self._h))

    def access_fault(self, pc: int) -> None:
        self._lib.hart_access_fault(self._h, pc)

    def device_fetch_trap(self, pc: int, code: int, tval: int) -> None:
        """A fetch from a device: the trap (cause `code`, `tval`) the machine decided."""
        self._lib.hart_device_fetch_trap(self._h, pc, code, tval)

    def stopped_at(self, pc: int) -> None:
        """A device ended the run inside a block, at `pc`: count only what ran."""
        self._lib.hart_stopped_at(self._h, pc)

    # -- debugging -----------------------------------------------------------------
    def set_breakpoint(self, addr: int, on: bool = True) -> None:
        self._lib.hart_set_breakpoint(self._h, addr, int(on))

    def skip_breakpoint_once(self, addr: int) -> None:
        self._lib.hart_skip_breakpoint_once(self._h, addr)

    def skip_watch_once(self, pc: int) -> None:
        """Resuming at `pc`, where a watchpoint stopped: that access goes through."""
        self._lib.hart_skip_watch_once(self._h, pc)

    def set_watch(self, slot: int, paddr: int, length: int, read: bool, write: bool) -> None:
        """Debugger watch slot `slot` on physical [paddr, paddr + length), for loads
        and/or stores (neither: the slot is cleared). A hit stops the run before the
        access (StopReason.WATCH)."""
        privs = (_PMP["R"] if read else 0) | (_PMP["W"] if write else 0)
        if not self._lib.hart_set_watch(self._h, slot, paddr, length, privs):
            raise ValueError(f"watch slot {slot} ({paddr:#x}+{length}) refused by the core")

    @property
    def vtlb(self) -> bool:
        """PMP and the MMU are the core's TLB hook (PRIVLAB_VTLB=1, native/vtlb.c)."""
        return bool(self._lib.hart_vtlb_on())

    def vtlb_stop(self) -> int:
        """A run stopped with UC_ERR_EXCEPTION with the TLB hook on: take the trap of a
        refused TLB fill, or run the instruction whose access was let through. Returns
        an error of that run to handle as the run's own (0 if none)."""
        return int(self._lib.hart_vtlb_stop(self._h))

    def step_begin(self) -> None:
        self._lib.hart_step_begin(self._h)

    def step_end(self) -> None:
        self._lib.hart_step_end(self._h)

    def in_block(self) -> bool:
        """The next instruction is inside a block a run has started: a run with a
        plain budget would go on to the block's end before it stops."""
        return bool(self._lib.hart_in_block(self._h))

    def hook_count(self) -> int:
        return int(self._lib.hart_hook_count(self._h))
