"""A virtio-mmio transport (virtio 1.2, 4.2), as QEMU 7.2's `virtio-mmio` device.

Version 2 (modern) by default; `legacy=True` is version 1, as QEMU's
`-global virtio-mmio.force-legacy=true`: the queue is placed by GuestPageSize,
QueueAlign and QueuePFN instead of QueueDesc/Driver/Device and QueueReady.

A slot with no device behind it reads as QEMU's empty transports do: MagicValue,
Version and VendorID, and zero for everything else (DeviceID 0: nobody claims it);
writes are ignored. With a device, a register that does not exist in this version,
a read of a write-only register, a write to a read-only one or an access narrower or
wider than 32 bits (outside the config space) is a DeviceError: QEMU ignores these
and logs a guest error.

Requests complete synchronously: a write to QueueNotify processes every chain the
driver has made available, fills the used ring and sets InterruptStatus before the
write returns, so the next instruction sees them (0 instructions after the notify,
whatever the host does). A notify takes the chains made available before it, at most
the queue size of them (the available index is read once), and a Ctrl-C or debugger
stop ends it between two requests (the rest wait for the next notify). The interrupt
line is a level: `irq(True)` while InterruptStatus is not 0, `irq(False)` when
InterruptACK (or a reset) clears it.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum

from ..abi.platform import PLATFORM
from ..protocol import Protocol
from .base import DeviceError, unknown_register

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .virtqueue import Chain, GuestRam, Virtqueue

__all__ = ["Reg", "VirtioBackend", "VirtioMmio"]

_V = PLATFORM.virtio


class Reg(IntEnum):
    MAGIC_VALUE = _V["VIRTIO_MMIO_MAGIC_VALUE"]
    VERSION = _V["VIRTIO_MMIO_VERSION"]
    DEVICE_ID = _V["VIRTIO_MMIO_DEVICE_ID"]
    VENDOR_ID = _V["VIRTIO_MMIO_VENDOR_ID"]
    DEVICE_FEATURES = _V["VIRTIO_MMIO_DEVICE_FEATURES"]
    DEVICE_FEATURES_SEL = _V["VIRTIO_MMIO_DEVICE_FEATURES_SEL"]
    DRIVER_FEATURES = _V["VIRTIO_MMIO_DRIVER_FEATURES"]
    DRIVER_FEATURES_SEL = _V["VIRTIO_MMIO_DRIVER_FEATURES_SEL"]
    GUEST_PAGE_SIZE = _V["VIRTIO_MMIO_GUEST_PAGE_SIZE"]
    QUEUE_SEL = _V["VIRTIO_MMIO_QUEUE_SEL"]
    QUEUE_NUM_MAX = _V["VIRTIO_MMIO_QUEUE_NUM_MAX"]
    QUEUE_NUM = _V["VIRTIO_MMIO_QUEUE_NUM"]
    QUEUE_ALIGN = _V["VIRTIO_MMIO_QUEUE_ALIGN"]
    QUEUE_PFN = _V["VIRTIO_MMIO_QUEUE_PFN"]
    QUEUE_READY = _V["VIRTIO_MMIO_QUEUE_READY"]
    QUEUE_NOTIFY = _V["VIRTIO_MMIO_QUEUE_NOTIFY"]
    INTERRUPT_STATUS = _V["VIRTIO_MMIO_INTERRUPT_STATUS"]
    INTERRUPT_ACK = _V["VIRTIO_MMIO_INTERRUPT_ACK"]
    STATUS = _V["VIRTIO_MMIO_STATUS"]
    QUEUE_DESC_LOW = _V["VIRTIO_MMIO_QUEUE_DESC_LOW"]
    QUEUE_DESC_HIGH = _V["VIRTIO_MMIO_QUEUE_DESC_HIGH"]
    QUEUE_DRIVER_LOW = _V["VIRTIO_MMIO_QUEUE_DRIVER_LOW"]
    QUEUE_DRIVER_HIGH = _V["VIRTIO_MMIO_QUEUE_DRIVER_HIGH"]
    QUEUE_DEVICE_LOW = _V["VIRTIO_MMIO_QUEUE_DEVICE_LOW"]
    QUEUE_DEVICE_HIGH = _V["VIRTIO_MMIO_QUEUE_DEVICE_HIGH"]
    CONFIG_GENERATION = _V["VIRTIO_MMIO_CONFIG_GENERATION"]
    CONFIG = _V["VIRTIO_MMIO_CONFIG"]


MAGIC = _V["VIRTIO_MMIO_MAGIC"]
VENDOR = _V["VIRTIO_MMIO_VENDOR_QEMU"]
QUEUE_NUM_MAX = _V["VIRTIO_MMIO_QUEUE_NUM_MAX_VALUE"]
INT_USED_BUFFER = _V["VIRTIO_INT_USED_BUFFER"]
STATUS_FEATURES_OK = _V["VIRTIO_STATUS_FEATURES_OK"]
MODERN, LEGACY = 2, 1

_LEGACY_ONLY = {Reg.GUEST_PAGE_SIZE, Reg.QUEUE_ALIGN, Reg.QUEUE_PFN}
_MODERN_ONLY = {Reg.QUEUE_READY, Reg.CONFIG_GENERATION, Reg.QUEUE_DESC_LOW,
                Reg.QUEUE_DESC_HIGH, Reg.QUEUE_DRIVER_LOW, Reg.QUEUE_DRIVER_HIGH,
                Reg.QUEUE_DEVICE_LOW, Reg.QUEUE_DEVICE_HIGH}
_READ_ONLY = {Reg.MAGIC_VALUE, Reg.VERSION, Reg.DEVICE_ID, Reg.VENDOR_ID,
              Reg.DEVICE_FEATURES, Reg.QUEUE_NUM_MAX, Reg.INTERRUPT_STATUS,
              Reg.CONFIG_GENERATION}
_WRITE_ONLY = {Reg.DEVICE_FEATURES_SEL, Reg.DRIVER_FEATURES, Reg.DRIVER_FEATURES_SEL,
               Reg.GUEST_PAGE_SIZE, Reg.QUEUE_SEL, Reg.QUEUE_NUM, Reg.QUEUE_ALIGN,
               Reg.QUEUE_NOTIFY, Reg.INTERRUPT_ACK, Reg.QUEUE_DESC_LOW,
               Reg.QUEUE_DESC_HIGH, Reg.QUEUE_DRIVER_LOW, Reg.QUEUE_DRIVER_HIGH,
               Reg.QUEUE_DEVICE_LOW, Reg.QUEUE_DEVICE_HIGH}
_HALVES = {Reg.QUEUE_DESC_LOW: ("desc", 0), Reg.QUEUE_DESC_HIGH: ("desc", 32),
           Reg.QUEUE_DRIVER_LOW: ("avail", 0), Reg.QUEUE_DRIVER_HIGH: ("avail", 32),
           Reg.QUEUE_DEVICE_LOW: ("used", 0), Reg.QUEUE_DEVICE_HIGH: ("used", 32)}
_QUEUE_MAX = 1024          # QueueSel values QEMU accepts (VIRTIO_QUEUE_MAX)


class VirtioBackend(Protocol):
    """The device behind a transport (virtio_blk.VirtioBlk)."""

    device_id: int
    num_queues: int
    queue_size: int

    def features(self, legacy: bool) -> int: ...

    def config(self) -> bytes: ...

    def process(self, ram: GuestRam, chain: Chain) -> int: ...


class VirtioMmio:
    """Transport `slot` (0..7) at PLATFORM.virtio_base(slot). `irq(level)` is the
    interrupt line (PLIC source PLATFORM.virtio0_irq + slot); `ram` is where the
    queues and buffers are; `backend` None is an empty slot."""

    def __init__(self, slot: int, irq: Callable[[bool], None], ram: GuestRam,
                 backend: VirtioBackend | None = None, *, legacy: bool = False) -> None:
        self.slot = slot
        self.base = PLATFORM.virtio_base(slot)
        self.size = PLATFORM.virtio_size
        self.name = f"virtio_mmio@{self.base:x}"
        self.version = LEGACY if legacy else MODERN
        self.backend = backend
        self._irq = irq
        self._ram = ram
        self.queues: list[Virtqueue] = []
        if backend is not None:     # the queues' model, only where a device serves them
            from .virtqueue import Virtqueue

            self.queues = [Virtqueue(i, backend.queue_size) for i in range(backend.num_queues)]
        self.guest_page_shift = 0     # legacy; kept over a Status reset, as QEMU
        self.isr = 0
        self.reset()

    @property
    def legacy(self) -> bool:
        return self.version == LEGACY

    def reset(self) -> None:
        """A device reset (Status := 0, or legacy QueuePFN := 0)."""
        self.status = 0
        self.device_features_sel = self.driver_features_sel = 0
        self.driver_features = [0, 0]
        self.features = 0             # what the driver accepted (and the device offers)
        self.queue_sel = 0
        for q in self.queues:
            q.reset()
        self._set_isr(0)

    def _set_isr(self, value: int) -> None:
        """InterruptStatus, and the level of the line that follows it."""
        before, self.isr = self.isr, value
        if bool(before) != bool(value):
            self._irq(bool(value))

    def _queue(self, what: str) -> Virtqueue:
        if self.queue_sel >= len(self.queues):
            raise DeviceError(f"{self.name}: {what} of queue {self.queue_sel}, which the "
                              f"device does not have ({len(self.queues)} queue(s))")
        return self.queues[self.queue_sel]

    def _register(self, offset: int, size: int, what: str) -> Reg:
        try:
            reg = Reg(offset)
        except ValueError:
            raise unknown_register(self, offset, what) from None
        if size != 4:
            raise DeviceError(f"{self.name}: {size}-byte {what} of register {reg.name} "
                              f"(offset {offset:#x}): registers are 32-bit")
        if reg in (_LEGACY_ONLY if not self.legacy else _MODERN_ONLY):
            kind = "legacy (version 1)" if not self.legacy else "modern (version 2)"
            raise DeviceError(f"{self.name}: {what} of {reg.name} (offset {offset:#x}), a "
                              f"{kind} register, on a version {self.version} transport")
        return reg

    # -- reads -----------------------------------------------------------------------
    def read(self, offset: int, size: int) -> int:
        if offset >= self.size:
            raise unknown_register(self, offset, "read")
        if self.backend is None:
            empty: dict[int, int] = {Reg.MAGIC_VALUE: MAGIC, Reg.VERSION: self.version,
                                     Reg.VENDOR_ID: VENDOR}
            return empty.get(offset, 0)   # QEMU: the rest of an empty slot reads as zero
        if offset >= Reg.CONFIG:
            return self._config_read(offset - Reg.CONFIG, size)
        reg = self._register(offset, size, "read")
        if reg in _WRITE_ONLY:
            raise DeviceError(f"{self.name}: read of write-only register {reg.name} "
                              f"(offset {offset:#x})")
        return self._read(reg)

    def _read(self, reg: Reg) -> int:
        backend = self.backend
        assert backend is not None
        if reg == Reg.MAGIC_VALUE:
            return MAGIC
        if reg == Reg.VERSION:
            return self.version
        if reg == Reg.DEVICE_ID:
            return backend.device_id
        if reg == Reg.VENDOR_ID:
            return VENDOR
        if reg == Reg.DEVICE_FEATURES:
            sel = self.device_features_sel
            if sel > (0 if self.legacy else 1):
                return 0
            return (backend.features(self.legacy) >> (32 * sel)) & 0xFFFFFFFF
        if reg == Reg.QUEUE_NUM_MAX:
            return QUEUE_NUM_MAX if self.queue_sel < len(self.queues) else 0
        if reg == Reg.QUEUE_PFN:
            q = self._queue("QueuePFN read")
            return q.desc >> self.guest_page_shift
        if reg == Reg.QUEUE_READY:
            return int(self.queue_sel < len(self.queues) and self.queues[self.queue_sel].ready)
        if reg == Reg.INTERRUPT_STATUS:
            return self.isr
        if reg == Reg.STATUS:
            return self.status
        if reg == Reg.CONFIG_GENERATION:
            return 0                  # the config space never changes
        raise unknown_register(self, reg, "read")

    def _config_read(self, offset: int, size: int) -> int:
        assert self.backend is not None
        config = self.backend.config()
        if offset + size > len(config):
            raise DeviceError(f"{self.name}: {size}-byte config read at {offset:#x}, past "
                              f"the {len(config)}-byte config space")
        return int.from_bytes(config[offset:offset + size], "little")

    # -- writes ----------------------------------------------------------------------
    def write(self, offset: int, size: int, value: int) -> None:
        if offset >= self.size:
            raise unknown_register(self, offset, "write")
        if self.backend is None:
            return                    # QEMU: an empty transport ignores writes
        if offset >= Reg.CONFIG:
            raise DeviceError(f"{self.name}: write to the config space (offset "
                              f"{offset:#x}): virtio-blk's config is read-only here")
        reg = self._register(offset, size, "write")
        if reg in _READ_ONLY:
            raise DeviceError(f"{self.name}: write to read-only register {reg.name} "
                              f"(offset {offset:#x})")
        self._write(reg, value & 0xFFFFFFFF)

    def _write(self, reg: Reg, value: int) -> None:
        if reg == Reg.DEVICE_FEATURES_SEL:
            self.device_features_sel = value
        elif reg == Reg.DRIVER_FEATURES_SEL:
            self.driver_features_sel = value
        elif reg == Reg.DRIVER_FEATURES:
            self._driver_features(value)
        elif reg == Reg.GUEST_PAGE_SIZE:
            shift = (value & -value).bit_length() - 1
            self.guest_page_shift = shift if 0 <= shift <= 31 else 0
        elif reg == Reg.QUEUE_SEL:
            if value < _QUEUE_MAX:
                self.queue_sel = value
        elif reg == Reg.QUEUE_NUM:
            self._queue_num(value)
        elif reg == Reg.QUEUE_ALIGN:
            q = self._queue("QueueAlign write")
            if value == 0 or value & (value - 1):
                raise DeviceError(f"{self.name}: QueueAlign {value:#x} is not a power of 2")
            q.align = value
            if q.ready:
                q.place_legacy(q.desc)
        elif reg == Reg.QUEUE_PFN:
            if value == 0:
                self.reset()
            else:
                self._queue("QueuePFN write").place_legacy(value << self.guest_page_shift)
        elif reg == Reg.QUEUE_READY:
            self._queue("QueueReady write").ready = bool(value & 1)
        elif reg in _HALVES:
            q = self._queue(f"{reg.name} write")
            attr, shift = _HALVES[reg]
            old = getattr(q, attr)
            setattr(q, attr, (old & ~(0xFFFFFFFF << shift)) | (value << shift))
        elif reg == Reg.QUEUE_NOTIFY:
            self._notify(value)
        elif reg == Reg.INTERRUPT_ACK:
            self._set_isr(self.isr & ~value)
        elif reg == Reg.STATUS:
            self._status(value & 0xFF)

    def _driver_features(self, value: int) -> None:
        sel = self.driver_features_sel
        if sel > (0 if self.legacy else 1):
            raise DeviceError(f"{self.name}: DriverFeatures write with DriverFeaturesSel "
                              f"{sel}: only {'0' if self.legacy else '0 and 1'} exist")
        self.driver_features[sel] = value
        if self.legacy:               # legacy features take effect at once
            assert self.backend is not None
            self.features = value & self.backend.features(True)

    def _queue_num(self, value: int) -> None:
        q = self._queue("QueueNum write")
        if not 1 <= value <= QUEUE_NUM_MAX:
            raise DeviceError(f"{self.name}: QueueNum {value} for queue {q.index} is not "
                              f"in 1..{QUEUE_NUM_MAX} (QueueNumMax)")
        q.num = value
        if self.legacy and q.ready:
            q.place_legacy(q.desc)

    def _status(self, value: int) -> None:
        if value == 0:
            self.reset()
            return
        if not self.legacy and value & STATUS_FEATURES_OK \
                and not self.status & STATUS_FEATURES_OK:
            assert self.backend is not None
            offered = self.backend.features(False)
            self.features = (self.driver_features[1] << 32 | self.driver_features[0]) & offered
        self.status = value

    def _notify(self, index: int) -> None:
        """Process every available chain of queue `index` now (see the module doc)."""
        assert self.backend is not None
        if index >= len(self.queues) or not self.queues[index].ready:
            raise DeviceError(f"{self.name}: QueueNotify for queue {index}, which is "
                              f"{'not set up' if index < len(self.queues) else 'absent'}")
        q = self.queues[index]
        upto = q.available(self._ram)       # read once: at most q.num chains
        used = False
        try:
            while not self._ram.stop_requested \
                    and (chain := q.pop(self._ram, upto)) is not None:
                q.push(self._ram, chain.head, self.backend.process(self._ram, chain))
                used = True
        finally:
            if used:
                self._ram.dma_written()
        if used and not q.no_interrupt(self._ram):
            self._set_isr(self.isr | INT_USED_BUFFER)
