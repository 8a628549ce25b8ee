"""What a guest's virtio-blk requests can cost the host. Each
malicious guest (tests/devices/guests.py) runs on a machine with a small disk; the
host's own allocations during the run are measured with tracemalloc (before the fix
each all-RAM descriptor was copied: 128 MiB apiece)."""

from __future__ import annotations

import struct
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from devices.guests import HEADER, RAM, RAM_SIZE, RING, STATUS_BYTE, USED, build_guest
from privlab.abi.platform import PLATFORM
from privlab.devices.disk import Drive
from privlab.devices.virtio_blk import VirtioBlk
from privlab.devices.virtio_mmio import Reg
from privlab.machine import Machine, load_elf
from privlab.machine.assemble import boot_bare
from privlab.machine.results import RunResult, Stop

V = PLATFORM.virtio
OK, IOERR, UNSUPP = V["VIRTIO_BLK_S_OK"], V["VIRTIO_BLK_S_IOERR"], V["VIRTIO_BLK_S_UNSUPP"]
SECTOR = V["VIRTIO_BLK_SECTOR_SIZE"]
HOST_BYTES = 1 << 20        # what a run may allocate on the host, at most, beyond its start
SECONDS = 10                # a generous bound for a run of about 10,000 instructions


@pytest.fixture
def disk(tmp_path: Path) -> Path:
    path = tmp_path / "disk.img"
    path.write_bytes(bytes(64 * SECTOR))
    return path


@pytest.fixture
def machines() -> Iterator[list[Machine]]:
    made: list[Machine] = []
    yield made
    for m in made:
        m.close()


def boot(name: str, disk: Path, machines: list[Machine]) -> Machine:
    image = load_elf(build_guest(name))
    m = Machine(image.xlen, drive=Drive(disk, snapshot=True))
    boot_bare(m, image)
    machines.append(m)
    return m


def run_measured(m: Machine) -> tuple[RunResult, int, float]:
    """The run's result, the peak of the host's Python allocations during it, seconds."""
    tracemalloc.start()
    start = time.monotonic()
    try:
        result = m.run(max_insns=1_000_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak, time.monotonic() - start


def u16(m: Machine, addr: int) -> int:
    value: int = struct.unpack("<H", m.read_physical(addr, 2))[0]
    return value


def test_avail_ring_on_used_ring_ends_the_notify_after_the_one_request_made_available(
        disk: Path, machines: list[Machine]) -> None:
    m = boot("avail_on_used", disk, machines)
    result, peak, seconds = run_measured(m)
    assert (result.stop, result.exit_status) == (Stop.HALT, 0)
    assert seconds < SECONDS and peak < HOST_BYTES
    # One request: its completion went to used slot 1 and moved the shared index 1 -> 2;
    # the "request" that move made available waits for the next notify.
    assert u16(m, RING + 2) == 2
    assert struct.unpack("<II", m.read_physical(RING + 4 + 8, 8)) == (0, 1)
    assert m.read_physical(STATUS_BYTE, 1) == bytes([OK])
    assert m.virtio[0].queues[0].last_avail == 1


def test_32_all_ram_descriptors_are_checked_by_bounds_not_copied(
        disk: Path, machines: list[Machine]) -> None:
    m = boot("all_ram_chain", disk, machines)
    result, peak, seconds = run_measured(m)
    assert (result.stop, result.exit_status) == (Stop.HALT, 0)
    assert seconds < SECONDS and peak < HOST_BYTES
    # The header is this program's first instruction words: no request type, UNSUPP,
    # written to the last byte of RAM; the used length is the one writable buffer.
    assert m.read_physical(RAM + RAM_SIZE - 1, 1) == bytes([UNSUPP])
    assert u16(m, USED + 2) == 1
    assert struct.unpack("<II", m.read_physical(USED + 4, 8)) == (0, RAM_SIZE)


def test_a_chain_looping_over_all_ram_buffers_is_one_line_at_the_queue_size(
        disk: Path, machines: list[Machine]) -> None:
    m = boot("looping_chain", disk, machines)
    result, peak, seconds = run_measured(m)
    assert result.stop is Stop.ERROR and result.status == 3
    assert result.message == ("virtqueue 0: descriptor 1023 (chain from 0): the chain "
                              "loops (longer than the queue size 1024)")
    assert seconds < SECONDS and peak < HOST_BYTES


def test_writable_bytes_past_4_gib_give_the_used_length_modulo_2_to_the_32(
        disk: Path, machines: list[Machine]) -> None:
    m = boot("writable_past_4g", disk, machines)
    result, peak, seconds = run_measured(m)
    # The guest itself checks used[0].len == 40 * 128 MiB mod 2^32 (exit 1 otherwise).
    assert (result.stop, result.exit_status) == (Stop.HALT, 0)
    assert struct.unpack("<II", m.read_physical(USED + 4, 8)) == (0, (40 * RAM_SIZE) % 2**32)
    assert m.read_physical(RAM + RAM_SIZE - 1, 1) == bytes([IOERR])   # not whole sectors
    assert m.read_physical(HEADER, 16) == bytes(16)                   # nothing else written
    assert seconds < SECONDS and peak < HOST_BYTES


# ---- a request's own cost, from Python ------------------------------------------------

Q, AV, US, HDR, DATA, ST = (PLATFORM.ram_base + off for off in
                            (0x10000, 0x11000, 0x12000, 0x20000, 0x100000, 0x30000))
F, W = V["VIRTQ_DESC_F_NEXT"], V["VIRTQ_DESC_F_WRITE"]


def driver_up(m: Machine, num: int) -> None:
    t = m.virtio[0]
    t.write(Reg.STATUS, 4, 3)
    t.write(Reg.DEVICE_FEATURES_SEL, 4, 1)
    t.write(Reg.DRIVER_FEATURES_SEL, 4, 1)
    t.write(Reg.DRIVER_FEATURES, 4, 1)
    t.write(Reg.STATUS, 4, 11)
    t.write(Reg.QUEUE_NUM, 4, num)
    for reg, addr in ((Reg.QUEUE_DESC_LOW, Q), (Reg.QUEUE_DRIVER_LOW, AV),
                      (Reg.QUEUE_DEVICE_LOW, US)):
        t.write(reg, 4, addr)
    t.write(Reg.QUEUE_READY, 4, 1)
    t.write(Reg.STATUS, 4, 15)


def in_request(m: Machine, head: int, sector: int, length: int) -> None:
    """Descriptors head..head+2: header (IN at `sector`), `length` bytes at DATA, status."""
    m.write_physical(HDR + 16 * head, struct.pack("<IIQ", 0, 0, sector))
    m.write_physical(Q + 16 * head, struct.pack("<QIHH", HDR + 16 * head, 16, F, head + 1))
    m.write_physical(Q + 16 * (head + 1), struct.pack("<QIHH", DATA, length, F | W, head + 2))
    m.write_physical(Q + 16 * (head + 2), struct.pack("<QIHH", ST + head, 1, W, 0))


def make_available(m: Machine, heads: list[int]) -> None:
    for n, head in enumerate(heads):
        m.write_physical(AV + 4 + 2 * n, struct.pack("<H", head))
    m.write_physical(AV + 2, struct.pack("<H", len(heads)))


def test_reading_the_whole_disk_moves_it_in_64_kib_pieces(tmp_path: Path) -> None:
    image = tmp_path / "big.img"
    image.write_bytes(bytes(range(256)) * (4 << 20 >> 8))        # 4 MiB
    m = Machine(64, drive=Drive(image, snapshot=True))
    try:
        driver_up(m, 8)
        in_request(m, 0, 0, 4 << 20)
        make_available(m, [0])
        tracemalloc.start()
        try:
            m.virtio[0].write(Reg.QUEUE_NOTIFY, 4, 0)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert m.read_physical(ST, 1) == bytes([OK])
        assert m.read_physical(DATA, 4 << 20) == image.read_bytes()
        assert peak < HOST_BYTES
    finally:
        m.close()


def test_a_stop_request_ends_a_notify_between_two_requests_and_the_next_notify_goes_on(
        disk: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = Machine(64, drive=Drive(disk, snapshot=True))
    try:
        driver_up(m, 16)
        for head in (0, 3, 6):
            in_request(m, head, head, SECTOR)
        make_available(m, [0, 3, 6])
        done: list[int] = []
        process = VirtioBlk.process

        def process_then_stop(self: VirtioBlk, ram: Machine, chain: object) -> int:
            n = process(self, ram, chain)   # type: ignore[arg-type]
            done.append(chain.head)         # type: ignore[attr-defined]
            m.request_stop()                # Ctrl-C arrives during the first request
            return n

        monkeypatch.setattr(VirtioBlk, "process", process_then_stop)
        m.virtio[0].write(Reg.QUEUE_NOTIFY, 4, 0)
        assert done == [0] and u16(m, US + 2) == 1
        assert m.read_physical(ST + 3, 1) == b"\0" and m.read_physical(ST + 6, 1) == b"\0"
        m.cancel_stop()
        m.virtio[0].write(Reg.QUEUE_NOTIFY, 4, 0)
        assert done == [0, 3] and u16(m, US + 2) == 2   # stopped again after one more
        m.cancel_stop()
        monkeypatch.setattr(VirtioBlk, "process", process)
        m.virtio[0].write(Reg.QUEUE_NOTIFY, 4, 0)
        assert u16(m, US + 2) == 3 and m.read_physical(ST + 6, 1) == bytes([OK])
    finally:
        m.close()
