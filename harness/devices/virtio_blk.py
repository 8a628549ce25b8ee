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
CHUNK_SECTORS = 128       # data moves between RAM and the disk 64 KiB at a time


class BlkStatus:
    OK = _V["VIRTIO_BLK_S_OK"]
    IOERR = _V["VIRTIO_BLK_S_IOERR"]
    UNSUPP = _V["VIRTIO_BLK_S_UNSUPP"]


class _Cursor:
    """A position in a scatter list of guest buffers, reached through `ram_view`: bytes
    are copied only as they are read or written, a bounded piece at a time."""

    def __init__(self, ram: GuestRam, buffers: list[Buffer], skip: int = 0) -> None:
        self._ram = ram
        self._buffers = [b for b in buffers if b.length]
        self._i = 0
        self._offset = 0
        self.skip(skip)

    def skip(self, n: int) -> None:
        while n and self._i < len(self._buffers):
            step = min(n, self._buffers[self._i].length - self._offset)
            self._advance(step)
            n -= step

    def _advance(self, step: int) -> None:
        self._offset += step
        if self._offset == self._buffers[self._i].length:
            self._i, self._offset = self._i + 1, 0

    def take(self, n: int) -> bytes:
        """The next n bytes (fewer at the end of the list)."""
        out = bytearray()
        while len(out) < n and self._i < len(self._buffers):
            b = self._buffers[self._i]
            step = min(n - len(out), b.length - self._offset)
            with self._ram.ram_view(b.addr + self._offset, step) as view:
                out += view
            self._advance(step)
        return bytes(out)

    def put(self, data: bytes) -> None:
        """Write data at the cursor (the caller keeps it inside the list)."""
        done = 0
        while done < len(data) and self._i < len(self._buffers):
            b = self._buffers[self._i]
            step = min(len(data) - done, b.length - self._offset)
            with self._ram.ram_view(b.addr + self._offset, step) as view:
                view[:] = data[done:done + step]
            self._advance(step)
            done += step


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
        """Carry out one request; the used length. Host cost: the chain's descriptors
        (at most the queue size), the 16-byte header, and the data moved, which is at
        most the disk's size (a longer request is IOERR before anything moves), a
        CHUNK_SECTORS piece at a time: never a copy of a guest buffer whole."""
        readable, writable = chain.readable, chain.writable
        where = f"virtio-blk: request at descriptor {chain.head}"
        out_len = sum(b.length for b in readable)
        if out_len < HEADER.size:
            raise VirtqueueError(f"{where} has {out_len} device-readable bytes, fewer "
                                 f"than the {HEADER.size}-byte request header")
        in_len = sum(b.length for b in writable)
        if in_len < 1:
            raise VirtqueueError(f"{where} has no device-writable byte for the status")
        try:
            status = self._carry_out(ram, readable, writable, out_len, in_len)
            last = [b for b in writable if b.length][-1]
            with ram.ram_view(last.addr + last.length - 1, 1) as view:
                view[0] = status
        except GuestError as e:
            raise VirtqueueError(f"{where}: {e}") from None
        return in_len

    def _carry_out(self, ram: GuestRam, readable: list[Buffer], writable: list[Buffer],
                   out_len: int, in_len: int) -> int:
        """Do the request; its status. Data goes to the writable bytes before the
        status byte, never into it."""
        source = _Cursor(ram, readable)
        kind, _, sector = HEADER.unpack(source.take(HEADER.size))
        data_in = in_len - 1
        if kind == T_IN:
            status = self._check(sector, data_in)
            if status == BlkStatus.OK:
                status = self._host(lambda: self._read_into(_Cursor(ram, writable), sector,
                                                            data_in // SECTOR))
        elif kind == T_OUT:
            data_out = out_len - HEADER.size
            status = self._check(sector, data_out)
            if status == BlkStatus.OK:
                status = self._host(lambda: self._write_from(source, sector,
                                                             data_out // SECTOR))
        elif kind == T_FLUSH:
            status = self._host(self.disk.flush)
        elif kind == T_GET_ID:
            _Cursor(ram, writable).put((SERIAL + b"\0")[:min(data_in, ID_BYTES)])
            status = BlkStatus.OK
        else:
            status = BlkStatus.UNSUPP
        return status

    def _read_into(self, dest: _Cursor, sector: int, count: int) -> None:
        for first in range(sector, sector + count, CHUNK_SECTORS):
            dest.put(self.disk.read(first, min(CHUNK_SECTORS, sector + count - first)))

    def _write_from(self, source: _Cursor, sector: int, count: int) -> None:
        for first in range(sector, sector + count, CHUNK_SECTORS):
            n = min(CHUNK_SECTORS, sector + count - first)
            self.disk.write(first, source.take(n * SECTOR))

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
