"""PLIC: the platform-level interrupt controller of QEMU 7.2's `virt` board, hart 0.

Layout and semantics follow QEMU's sifive_plic with the virt board's parameters (all
from kernel/include/platform.h): PLIC_NUM_SOURCES sources (0 means "none"), priorities
0..PLIC_MAX_PRIORITY, and two contexts, PLIC_CONTEXT_M (drives mip.MEIP) and
PLIC_CONTEXT_S (drives mip.SEIP). Every register is 32 bits wide.

- priority (source n at PLIC_PRIORITY + 4n, n >= 1) and threshold are WARL: a write keeps the
  value modulo PLIC_MAX_PRIORITY + 1.
- pending bits follow the device lines; software writes to them are ignored.
- a context's output is high while some source is pending, enabled in it, not claimed
  and of priority above its threshold.
- claim returns the highest-priority such source (ties: the lowest id), clears its
  pending bit and marks it claimed; 0 when there is none. Complete (writing the id)
  clears the claimed mark, whichever context it comes from and whether or not the
  source was claimed.
- lines are level lines: `set_level` makes pending follow the level each time a
  device reports it, as QEMU's qemu_set_irq does. A source claimed while its line
  stays high is pending again as soon as its device next reports the level (a device
  reports it on every change of its interrupt state, as QEMU's serial and virtio do),
  and can be claimed again once completed.

Devices drive sources through `line(source)` (an `IrqLine`) or `set_level(source,
level)`: the UART is source PLATFORM_UART0_IRQ, virtio-mmio slot i is source
PLATFORM_VIRTIO0_IRQ + i.

An offset with no register reads as zero and ignores writes, as QEMU 7.2 does (it
logs a guest error): OpenSBI writes one priority past the last source and goes on. An
access that is not an aligned 4-byte word is a DeviceError.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..abi.csr import Irq
from ..abi.platform import PLATFORM
from .base import AccessRule, DeviceError, HartLines

__all__ = ["IrqLine", "Plic"]

P = PLATFORM
WORDS = (P.plic_num_sources + 31) // 32          # bits per pending/enable block
ALL_SOURCES = (1 << P.plic_num_sources) - 1
# Context 2k is hart k's M-mode (mip.MEIP), 2k + 1 its S-mode (mip.SEIP), as QEMU's virt.
CONTEXT_MIP = {P.plic_context_m: 1 << Irq.M_EXTERNAL, P.plic_context_s: 1 << Irq.S_EXTERNAL}
EXT_BITS = (1 << Irq.M_EXTERNAL) | (1 << Irq.S_EXTERNAL)


class IrqLine:
    """One PLIC source as a device sees it. Call `set(level)` whenever the device's
    interrupt state may have changed (True while it wants service)."""

    def __init__(self, plic: Plic, source: int) -> None:
        self.plic = plic
        self.source = source

    def set(self, level: bool) -> None:
        self.plic.set_level(self.source, level)


class Plic:
    name = "plic"
    access_rules = (AccessRule(0, P.plic_size, 4, 4),)   # QEMU 7.2's sifive_plic: 4 only

    def __init__(self, hart: HartLines | None = None, harts: Sequence[HartLines] = ()) -> None:
        """`harts` (in mhartid order; default: `hart` alone) get two contexts each."""
        self.base = P.plic_base
        self.size = P.plic_size
        self._harts: list[HartLines] = list(harts) or ([hart] if hart is not None else [])
        self.contexts = P.plic_num_contexts * max(1, len(self._harts))
        self.priority = [0] * P.plic_num_sources
        self.threshold = [0] * self.contexts
        self.enable = [0] * self.contexts          # bit n: source n, one int a context
        self.pending = 0                           # bit n: source n
        self.claimed = 0
        self.outputs = 0                           # hart 0's mip bits this PLIC drives
        self.hart_outputs = [0] * max(1, len(self._harts))   # each hart's

    # -- the device side -------------------------------------------------------
    def line(self, source: int) -> IrqLine:
        self._check_source(source)
        return IrqLine(self, source)

    def set_level(self, source: int, level: bool) -> None:
        """A device reports the level of its line into `source` (1..NUM_SOURCES-1)."""
        self._check_source(source)
        bit = 1 << source
        self.pending = self.pending | bit if level else self.pending & ~bit
        self._update()

    @staticmethod
    def _check_source(source: int) -> None:
        if not 1 <= source < P.plic_num_sources:
            raise ValueError(f"PLIC source {source} out of range 1..{P.plic_num_sources - 1}")

    # -- the interrupt logic ---------------------------------------------------
    def best(self, context: int) -> int:
        """The source a claim in `context` would return now (0: none)."""
        candidates = self.pending & ~self.claimed & self.enable[context]
        best, best_prio = 0, self.threshold[context]
        while candidates:
            source = (candidates & -candidates).bit_length() - 1
            candidates &= candidates - 1
            if self.priority[source] > best_prio:
                best, best_prio = source, self.priority[source]
        return best

    def _update(self) -> None:
        per = P.plic_num_contexts
        for k in range(len(self.hart_outputs)):
            outputs = 0
            for context, bit in CONTEXT_MIP.items():
                if self.best(per * k + context):
                    outputs |= bit
            changed = outputs != self.hart_outputs[k]
            self.hart_outputs[k] = outputs
            if k < len(self._harts) and (changed or k == 0):
                s = self._harts[k].state
                s.mip_ext = (s.mip_ext & ~EXT_BITS) | outputs
                self._harts[k].update()
        self.outputs = self.hart_outputs[0]

    def claim(self, context: int) -> int:
        source = self.best(context)
        if source:
            self.pending &= ~(1 << source)
            self.claimed |= 1 << source
        self._update()
        return source

    def complete(self, source: int) -> None:
        if source < P.plic_num_sources:
            self.claimed &= ~(1 << source)
            self._update()

    # -- MMIO ------------------------------------------------------------------
    def _decode(self, offset: int, size: int, what: str) -> tuple[str, int, int]:
        """(register kind, index, word) for an access; ("invalid", 0, 0) for an offset
        with no register, which QEMU 7.2 reads as 0 and ignores writes to (logging a
        guest error): OpenSBI writes the priority of source riscv,ndev, one past the
        last (0x180), and goes on. Only a width other than aligned 32 bits raises."""
        if size != 4 or offset % 4:
            raise DeviceError(f"{what} of {size} bytes at {self.base + offset:#x}: the "
                              f"{self.name} has only aligned 32-bit registers")
        rel = offset - P.plic_priority
        if 4 <= rel < 4 * P.plic_num_sources:       # source 0 has none (QEMU 7.2)
            return "priority", rel // 4, 0
        rel = offset - P.plic_pending
        if 0 <= rel < 4 * WORDS:
            return "pending", 0, rel // 4
        rel = offset - P.plic_enable
        if 0 <= rel < self.contexts * P.plic_enable_stride:
            return "enable", rel // P.plic_enable_stride, rel % P.plic_enable_stride // 4
        rel = offset - P.plic_context
        if 0 <= rel < self.contexts * P.plic_context_stride:
            context, reg = divmod(rel, P.plic_context_stride)
            if reg == P.plic_threshold:
                return "threshold", context, 0
            if reg == P.plic_claim:
                return "claim", context, 0
        return "invalid", 0, 0

    def read(self, offset: int, size: int) -> int:
        kind, index, word = self._decode(offset, size, "read")
        if kind == "invalid":
            return 0
        if kind == "priority":
            return self.priority[index]
        if kind == "pending":
            return (self.pending >> (32 * word)) & 0xFFFFFFFF
        if kind == "enable":
            return (self.enable[index] >> (32 * word)) & 0xFFFFFFFF if word < WORDS else 0
        if kind == "threshold":
            return self.threshold[index]
        return self.claim(index)

    def write(self, offset: int, size: int, value: int) -> None:
        kind, index, word = self._decode(offset, size, "write")
        value &= 0xFFFFFFFF
        if kind == "invalid":
            return
        if kind == "priority":
            self.priority[index] = value % (P.plic_max_priority + 1)
        elif kind == "pending":
            return                       # read-only: QEMU ignores the write
        elif kind == "enable":
            if word >= WORDS:
                return
            mask = 0xFFFFFFFF << (32 * word)
            bits = (self.enable[index] & ~mask) | (value << (32 * word))
            self.enable[index] = bits & ALL_SOURCES
        elif kind == "threshold":
            self.threshold[index] = value % (P.plic_max_priority + 1)
        else:
            self.complete(value)
            return
        self._update()
