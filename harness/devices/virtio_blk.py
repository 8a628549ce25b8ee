"""virtio-blk (virtio 1.2, 5.2): the block device behind virtio-mmio slot 0.

Each request is one descriptor chain: a 16-byte header the device reads (le32 type,
le32 reserved, le64 sector), the data (device-readable for OUT, device-writable for IN
and GET_ID), and one status byte the device writes last. As in QEMU, the chain is a
scatter list: the header, data and status may be split across descriptors any way
(ANY_LAYOUT). The used length is every device-writable byte of the chain, status
included (QEMU's `in_len`).

A request completes inside the QueueNotify write that announced it (virtio_mmio.py).
An out-of-range sector or a length that is not whole sectors is IOERR; an unknown type
is UNSUPP; a chain with no header or no status byte is a one-line GuestError.

Features offered: SEG_MAX, BLK_SIZE, FLUSH (and VERSION_1 on the modern transport).
QEMU 7.2 offers more by default (GEOMETRY, TOPOLOGY, CONFIG_WCE, DISCARD, WRITE_ZEROES,
and the transport's INDIRECT_DESC, EVENT_IDX, NOTIFY_ON_EMPTY, ANY_LAYOUT); a driver
that negotiates, as drivers must, works with either (docs/machine.md).
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from ..abi.platform import PLATFORM
from ..errors import GuestError
from .disk import SECTOR, Disk
from .virtqueue import Buffer, Chain, GuestRam, VirtqueueError

__all__ = ["BlkStatus", "VirtioBlk"]

_V = PLATFORM.virtio
T_IN = _V["VIRTIO_BLK_T_IN"]
T_OUT = _V["VIRTIO_BLK_T_OUT"]
T_FLUSH = _V["VIRTIO_BLK_T_FLUSH"]
T_GET_ID = _V["VIRTIO_BLK_T_GET_ID"]
ID_BYTES = _V["VIRTIO_BLK_ID_BYTES"]
HEADER = struct.Struct("<IIQ")
QUEUE_SIZE = 256          # QEMU 7.2's virtio-blk queue-size default
SEG_MAX = QUEUE_SIZE - 2  # QEMU 7.2 with seg-max-adjust (the default)
SERIAL = b""              # QEMU's default: no serial= given


class BlkStatus:
    OK = _V["VIRTIO_BLK_S_OK"]
    IOERR = _V["VIRTIO_BLK_S_IOERR"]
    UNSUPP = _V["VIRTIO_BLK_S_UNSUPP"]


def _gather(ram: GuestRam, buffers: list[Buffer]) -> bytes:
    return b"".join(ram.read_physical(b.addr, b.length) for b in buffers if b.length)


def _scatter(ram: GuestRam, buffers: list[Buffer], data: bytes) -> None:
    done = 0
    for b in buffers:
        if done >= len(data):
            return
        part = data[done:done + b.length]
        ram.write_physical(b.addr, part)
        done += len(part)


class VirtioBlk:
    """The device behind a transport: features, config space, request handling."""

    device_id = _V["VIRTIO_ID_BLOCK"]
    num_queues = 1
    queue_size = QUEUE_SIZE

    def __init__(self, disk: Disk) -> None:
        self.disk = disk

    def features(self, legacy: bool) -> int:
        bits = (_V["VIRTIO_BLK_F_SEG_MAX"], _V["VIRTIO_BLK_F_BLK_SIZE"], _V["VIRTIO_BLK_F_FLUSH"])
        value = sum(1 << b for b in bits)
        return value if legacy else value | 1 << _V["VIRTIO_F_VERSION_1"]

    def config(self) -> bytes:
        """struct virtio_blk_config up to blk_size: capacity, size_max (0: not offered),
        seg_max, geometry (0: not offered), blk_size."""
        cfg = bytearray(_V["VIRTIO_BLK_CFG_BLK_SIZE"] + 4)
        struct.pack_into("<Q", cfg, _V["VIRTIO_BLK_CFG_CAPACITY"], self.disk.sectors)
        struct.pack_into("<I", cfg, _V["VIRTIO_BLK_CFG_SEG_MAX"], SEG_MAX)
        struct.pack_into("<I", cfg, _V["VIRTIO_BLK_CFG_BLK_SIZE"], SECTOR)
        return bytes(cfg)

    def process(self, ram: GuestRam, chain: Chain) -> int:
        """Carry out one request; the used length."""
        readable, writable = chain.readable, chain.writable
        where = f"virtio-blk: request at descriptor {chain.head}"
        out = _gather(ram, readable)
        if len(out) < HEADER.size:
            raise VirtqueueError(f"{where} has {len(out)} device-readable bytes, fewer "
                                 f"than the {HEADER.size}-byte request header")
        in_len = sum(b.length for b in writable)
        if in_len < 1:
            raise VirtqueueError(f"{where} has no device-writable byte for the status")
        kind, _, sector = HEADER.unpack_from(out)
        data_in = in_len - 1
        reply = b""
        if kind == T_IN:
            status = self._check(sector, data_in)
            if status == BlkStatus.OK:
                try:
                    reply = self.disk.read(sector, data_in // SECTOR)
                except OSError:       # the host failed: IOERR, as QEMU's rerror=report
                    status = BlkStatus.IOERR
        elif kind == T_OUT:
            data = out[HEADER.size:]
            status = self._check(sector, len(data))
            if status == BlkStatus.OK:
                status = self._host(lambda: self.disk.write(sector, data))
        elif kind == T_FLUSH:
            status = self._host(self.disk.flush)
        elif kind == T_GET_ID:
            reply = (SERIAL + b"\0")[:min(data_in, ID_BYTES)]
            status = BlkStatus.OK
        else:
            status = BlkStatus.UNSUPP
        try:
            _scatter(ram, writable, reply)      # never reaches the status byte
            last = [b for b in writable if b.length][-1]
            ram.write_physical(last.addr + last.length - 1, bytes([status]))
        except GuestError as e:
            raise VirtqueueError(f"{where}: {e}") from None
        return in_len

    @staticmethod
    def _host(op: Callable[[], None]) -> int:
        """OK, or IOERR when the host's write or flush fails (a full disk, say)."""
        try:
            op()
        except OSError:
            return BlkStatus.IOERR
        return BlkStatus.OK

    def _check(self, sector: int, length: int) -> int:
        """QEMU's virtio_blk_sect_range_ok: whole sectors, inside the disk."""
        total = self.disk.sectors
        if length % SECTOR or sector > total or length // SECTOR > total - sector:
            return BlkStatus.IOERR
        return BlkStatus.OK
