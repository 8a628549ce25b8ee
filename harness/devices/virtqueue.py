"""The split virtqueue (virtio 1.2, 2.7): descriptor table, available ring, used ring.

The device side: `Virtqueue.pop` takes the next chain the driver made available and
walks its descriptors; `Virtqueue.push` returns it through the used ring. Rings live in
guest RAM, reached through `GuestRam` (physical addresses). A chain that cannot be
walked (an index past the queue, a loop, a readable buffer after a writable one, an
indirect descriptor, a buffer outside RAM) is a `VirtqueueError`: a one-line diagnosis
that ends the run, where QEMU marks the device broken (NEEDS_RESET) and stops it.

What a guest can make this cost the host: buffers are checked against RAM
by their bounds and reached through `GuestRam.ram_view` (the host's RAM, never a
copy), so a walk is at most `num` descriptors of 16 bytes read, whatever the buffers'
lengths; `available()` reads the available index once per notify, so one notify pops
at most `num` chains even when the rings overlap and the device's own writes move the
index.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from ..abi.platform import PLATFORM
from ..errors import GuestError
from ..protocol import Protocol

__all__ = ["Buffer", "Chain", "GuestRam", "Virtqueue", "VirtqueueError"]

_V = PLATFORM.virtio
DESC_F_NEXT = _V["VIRTQ_DESC_F_NEXT"]
DESC_F_WRITE = _V["VIRTQ_DESC_F_WRITE"]
DESC_F_INDIRECT = _V["VIRTQ_DESC_F_INDIRECT"]
AVAIL_F_NO_INTERRUPT = _V["VIRTQ_AVAIL_F_NO_INTERRUPT"]
DESC_SIZE = 16          # le64 addr, le32 len, le16 flags, le16 next
USED_ELEM_SIZE = 8      # le32 id, le32 len
RING_HEADER = 4         # le16 flags, le16 idx
LEGACY_ALIGN = 4096     # QEMU's default legacy QueueAlign (VIRTIO_PCI_VRING_ALIGN)


class VirtqueueError(GuestError):
    """The driver handed the device a queue or descriptor chain it cannot use."""


class GuestRam(Protocol):
    """Guest RAM by physical address; GuestError outside RAM (harness/machine's
    Machine). `ram_view` is the host's RAM itself, for buffers of any size; after
    writing through it the device calls `dma_written`. `stop_requested`: Ctrl-C or a
    debugger asked the machine to stop."""

    def read_physical(self, paddr: int, size: int) -> bytes: ...

    def write_physical(self, paddr: int, data: bytes) -> None: ...

    def ram_view(self, paddr: int, size: int) -> memoryview: ...

    def dma_written(self) -> None: ...

    @property
    def stop_requested(self) -> bool: ...


@dataclass(frozen=True)
class Buffer:
    """One descriptor: `length` bytes at `addr`, device-writable or device-readable."""

    addr: int
    length: int
    writable: bool


@dataclass(frozen=True)
class Chain:
    """A descriptor chain, from its head: readable buffers first, then writable ones."""

    head: int
    buffers: list[Buffer] = field(default_factory=list)

    @property
    def readable(self) -> list[Buffer]:
        return [b for b in self.buffers if not b.writable]

    @property
    def writable(self) -> list[Buffer]:
        return [b for b in self.buffers if b.writable]


class Virtqueue:
    """One split virtqueue's device-side state."""

    def __init__(self, index: int, size: int) -> None:
        self.index = index
        self.default_size = size
        self.reset()

    def reset(self) -> None:
        self.num = self.default_size
        self.desc = self.avail = self.used = 0
        self.ready = False
        self.last_avail = 0
        self.align = LEGACY_ALIGN

    def place_legacy(self, desc: int) -> None:
        """The legacy layout from one address: the descriptor table, the available
        ring right after it, the used ring at the next QueueAlign boundary (QEMU's
        virtio_queue_update_rings)."""
        self.desc = desc
        self.avail = desc + DESC_SIZE * self.num
        end = self.avail + RING_HEADER + 2 * self.num
        self.used = -(-end // self.align) * self.align
        self.ready = desc != 0

    def _u16(self, ram: GuestRam, addr: int) -> int:
        value: int = struct.unpack("<H", self._read(ram, addr, 2, "ring"))[0]
        return value

    def _read(self, ram: GuestRam, addr: int, size: int, what: str) -> bytes:
        try:
            return ram.read_physical(addr, size)
        except GuestError:
            raise VirtqueueError(f"virtqueue {self.index}: {what} at {addr:#x} "
                                 f"(+{size:#x}) is not RAM") from None

    def no_interrupt(self, ram: GuestRam) -> bool:
        """The driver set VIRTQ_AVAIL_F_NO_INTERRUPT in the available ring's flags."""
        return bool(self._u16(ram, self.avail) & AVAIL_F_NO_INTERRUPT)

    def available(self, ram: GuestRam) -> int:
        """The available ring's index, read once for a notify: `pop(ram, upto=...)`
        then takes the chains before it and no more, so the device's own writes to an
        overlapping ring cannot keep a notify going (QEMU 7.2 finishes such a notify
        too; its requests complete after it)."""
        idx = self._u16(ram, self.avail + 2)
        pending = (idx - self.last_avail) & 0xFFFF
        if pending > self.num:
            raise VirtqueueError(f"virtqueue {self.index}: the available index moved by "
                                 f"{pending}, more than the queue size {self.num}")
        return idx

    def pop(self, ram: GuestRam, upto: int | None = None) -> Chain | None:
        """The next available chain before index `upto` (by default the available
        index now), or None when there is none."""
        idx = self.available(ram) if upto is None else upto
        if idx == self.last_avail:
            return None
        slot = self.avail + RING_HEADER + 2 * (self.last_avail % self.num)
        head = self._u16(ram, slot)
        self.last_avail = (self.last_avail + 1) & 0xFFFF
        if head >= self.num:
            raise VirtqueueError(f"virtqueue {self.index}: available ring names descriptor "
                                 f"{head}, past the queue size {self.num}")
        return Chain(head, self._walk(ram, head))

    def _walk(self, ram: GuestRam, head: int) -> list[Buffer]:
        buffers: list[Buffer] = []
        i = head
        while True:
            addr, length, flags, nxt = struct.unpack(
                "<QIHH", self._read(ram, self.desc + DESC_SIZE * i, DESC_SIZE, "descriptor"))
            where = f"virtqueue {self.index}: descriptor {i} (chain from {head})"
            if flags & DESC_F_INDIRECT:
                raise VirtqueueError(f"{where} is indirect, a feature the device does "
                                     "not offer")
            writable = bool(flags & DESC_F_WRITE)
            if not writable and any(b.writable for b in buffers):
                raise VirtqueueError(f"{where} is device-readable after a device-writable "
                                     "one")
            try:                           # must be RAM: checked by its bounds, not read
                ram.ram_view(addr, length).release()
            except GuestError:
                raise VirtqueueError(f"virtqueue {self.index}: descriptor {i}'s buffer at "
                                     f"{addr:#x} (+{length:#x}) is not RAM") from None
            buffers.append(Buffer(addr, length, writable))
            if not flags & DESC_F_NEXT:
                return buffers
            if len(buffers) >= self.num:
                raise VirtqueueError(f"{where}: the chain loops (longer than the queue "
                                     f"size {self.num})")
            if nxt >= self.num:
                raise VirtqueueError(f"{where} has next {nxt}, past the queue size "
                                     f"{self.num}")
            i = nxt

    def push(self, ram: GuestRam, head: int, written: int) -> None:
        """Return chain `head` in the used ring, `written` bytes written into it (a le32:
        a chain's writable bytes can add up past 2^32, and QEMU 7.2 reports them modulo
        2^32)."""
        idx = self._u16(ram, self.used + 2)
        elem = self.used + RING_HEADER + USED_ELEM_SIZE * (idx % self.num)
        self._write(ram, elem, struct.pack("<II", head, written & 0xFFFF_FFFF))
        self._write(ram, self.used + 2, struct.pack("<H", (idx + 1) & 0xFFFF))

    def _write(self, ram: GuestRam, addr: int, data: bytes) -> None:
        try:
            ram.write_physical(addr, data)
        except GuestError:
            raise VirtqueueError(f"virtqueue {self.index}: used ring at {addr:#x} is not "
                                 "RAM") from None
