"""virtio-mmio transports and virtio-blk, driven from Python: queues set up in guest
RAM, requests notified through the transport's registers, results read back from the
used ring, the status byte and the image file."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from privlab.abi.platform import PLATFORM
from privlab.devices.base import DeviceError
from privlab.devices.disk import Disk, Drive
from privlab.devices.virtio_blk import VirtioBlk
from privlab.devices.virtio_mmio import Reg, VirtioMmio
from privlab.devices.virtqueue import VirtqueueError
from privlab.machine import Machine

V = PLATFORM.virtio
SECTOR = V["VIRTIO_BLK_SECTOR_SIZE"]
QUEUE = PLATFORM.ram_base + 0x10000       # descriptor table (legacy: the whole queue)
AVAIL = PLATFORM.ram_base + 0x11000
USED = PLATFORM.ram_base + 0x12000
HDR = PLATFORM.ram_base + 0x20000
DATA = PLATFORM.ram_base + 0x21000
STATUS = PLATFORM.ram_base + 0x23000
NUM = 8
F, W = V["VIRTQ_DESC_F_NEXT"], V["VIRTQ_DESC_F_WRITE"]
OK, IOERR, UNSUPP = V["VIRTIO_BLK_S_OK"], V["VIRTIO_BLK_S_IOERR"], V["VIRTIO_BLK_S_UNSUPP"]
T_IN, T_OUT = V["VIRTIO_BLK_T_IN"], V["VIRTIO_BLK_T_OUT"]
T_FLUSH, T_GET_ID = V["VIRTIO_BLK_T_FLUSH"], V["VIRTIO_BLK_T_GET_ID"]


class Driver:
    """Just enough of a driver: one queue of NUM descriptors, one request at a time."""

    def __init__(self, m: Machine, legacy: bool) -> None:
        self.m, self.t, self.legacy = m, m.virtio[0], legacy
        self.avail_idx = 0
        self.irqs: list[bool] = []
        self.t._irq = self.irqs.append
        st = V["VIRTIO_STATUS_ACKNOWLEDGE"] | V["VIRTIO_STATUS_DRIVER"]
        self.reg(Reg.STATUS, st)
        self.reg(Reg.DRIVER_FEATURES, self.t.read(Reg.DEVICE_FEATURES, 4))
        if not legacy:
            self.reg(Reg.DEVICE_FEATURES_SEL, 1)
            self.reg(Reg.DRIVER_FEATURES_SEL, 1)
            self.reg(Reg.DRIVER_FEATURES, self.t.read(Reg.DEVICE_FEATURES, 4))
            st |= V["VIRTIO_STATUS_FEATURES_OK"]
            self.reg(Reg.STATUS, st)
        self.reg(Reg.QUEUE_SEL, 0)
        self.reg(Reg.QUEUE_NUM, NUM)
        if legacy:
            self.reg(Reg.GUEST_PAGE_SIZE, 4096)
            self.reg(Reg.QUEUE_ALIGN, 4096)
            self.reg(Reg.QUEUE_PFN, QUEUE >> 12)
            self.avail, self.used = QUEUE + 16 * NUM, QUEUE + 0x1000
        else:
            for reg, addr in ((Reg.QUEUE_DESC_LOW, QUEUE), (Reg.QUEUE_DRIVER_LOW, AVAIL),
                              (Reg.QUEUE_DEVICE_LOW, USED)):
                self.reg(reg, addr & 0xFFFFFFFF)
                self.reg(Reg(reg + 4), addr >> 32)
            self.reg(Reg.QUEUE_READY, 1)
            self.avail, self.used = AVAIL, USED
        self.reg(Reg.STATUS, st | V["VIRTIO_STATUS_DRIVER_OK"])

    def reg(self, reg: Reg, value: int) -> None:
        self.t.write(reg, 4, value)

    def desc(self, i: int, addr: int, length: int, flags: int, nxt: int = 0) -> None:
        self.m.write_physical(QUEUE + 16 * i, struct.pack("<QIHH", addr, length, flags, nxt))

    def submit(self, head: int) -> None:
        self.m.write_physical(self.avail + 4 + 2 * (self.avail_idx % NUM),
                              struct.pack("<H", head))
        self.avail_idx += 1
        self.m.write_physical(self.avail + 2, struct.pack("<H", self.avail_idx))
        self.reg(Reg.QUEUE_NOTIFY, 0)

    def request(self, kind: int, sector: int, data: bytes = b"", read: int = 0) -> int:
        """One request as three descriptors (header, data, status); the status byte."""
        self.m.write_physical(HDR, struct.pack("<IIQ", kind, 0, sector))
        self.m.write_physical(STATUS, b"\xff")
        if data:
            self.m.write_physical(DATA, data)
        size = len(data) or read
        if size:
            self.desc(0, HDR, 16, F, 1)
            self.desc(1, DATA, size, F | (W if read else 0), 2)
            self.desc(2, STATUS, 1, W)
        else:
            self.desc(0, HDR, 16, F, 2)
            self.desc(2, STATUS, 1, W)
        self.submit(0)
        return self.m.read_physical(STATUS, 1)[0]

    def used_elem(self, n: int) -> tuple[int, int, int]:
        """(used idx, id, len) of used-ring entry n."""
        idx = struct.unpack("<H", self.m.read_physical(self.used + 2, 2))[0]
        head, length = struct.unpack("<II", self.m.read_physical(self.used + 4 + 8 * n, 8))
        return idx, head, length


@pytest.fixture
def image(tmp_path: Path) -> Path:
    path = tmp_path / "disk.img"
    path.write_bytes(b"".join(bytes([i]) * SECTOR for i in range(16)))
    return path


@pytest.fixture(params=[False, True], ids=["modern", "legacy"])
def legacy(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def machine(image: Path, legacy: bool) -> Iterator[Machine]:
    m = Machine(64, drive=Drive(image), virtio_legacy=legacy)
    yield m
    m.close()


@pytest.fixture
def driver(machine: Machine, legacy: bool) -> Driver:
    return Driver(machine, legacy)


# ---- the transport's identity ---------------------------------------------------------

def test_slot_0_is_a_block_device_and_the_other_slots_are_empty(machine: Machine) -> None:
    t0, t7 = machine.virtio[0], machine.virtio[7]
    assert (t0.base, t7.base) == (0x10001000, 0x10008000)
    assert [t0.read(r, 4) for r in (Reg.MAGIC_VALUE, Reg.DEVICE_ID, Reg.VENDOR_ID)] == \
        [0x74726976, 2, 0x554D4551]
    assert [t7.read(r, 4) for r in (Reg.MAGIC_VALUE, Reg.DEVICE_ID, Reg.VENDOR_ID)] == \
        [0x74726976, 0, 0x554D4551]


def test_version_is_2_modern_and_1_legacy(machine: Machine, legacy: bool) -> None:
    assert [t.read(Reg.VERSION, 4) for t in machine.virtio] == [1 if legacy else 2] * 8


def test_an_empty_slot_reads_zero_and_ignores_writes() -> None:
    m = Machine(64)
    try:
        t = m.virtio[0]
        t.write(Reg.STATUS, 4, 7)
        assert [t.read(r, 4) for r in (Reg.DEVICE_ID, Reg.STATUS, Reg.QUEUE_NUM_MAX)] == \
            [0, 0, 0]
    finally:
        m.close()


def test_modern_features_are_seg_max_blk_size_flush_and_version_1(machine: Machine,
                                                                   legacy: bool) -> None:
    t = machine.virtio[0]
    low = t.read(Reg.DEVICE_FEATURES, 4)
    t.write(Reg.DEVICE_FEATURES_SEL, 4, 1)
    high = t.read(Reg.DEVICE_FEATURES, 4)
    assert low == (1 << 2) | (1 << 6) | (1 << 9)
    assert high == (0 if legacy else 1)


def test_config_space_has_capacity_seg_max_and_blk_size(machine: Machine) -> None:
    t = machine.virtio[0]
    assert t.read(Reg.CONFIG, 8) == 16
    assert t.read(Reg.CONFIG, 4) == 16 and t.read(Reg.CONFIG + 4, 4) == 0
    assert t.read(Reg.CONFIG + 0x0C, 4) == 254
    assert t.read(Reg.CONFIG + 0x14, 4) == 512
    assert t.read(Reg.CONFIG + 0x14, 2) == 512


def test_queue_num_max_is_1024_for_queue_0_and_0_for_queue_1(machine: Machine) -> None:
    t = machine.virtio[0]
    assert t.read(Reg.QUEUE_NUM_MAX, 4) == 1024
    t.write(Reg.QUEUE_SEL, 4, 1)
    assert t.read(Reg.QUEUE_NUM_MAX, 4) == 0


# ---- requests ----------------------------------------------------------------------

def test_read_returns_the_sectors_and_ok(driver: Driver) -> None:
    assert driver.request(T_IN, 3, read=2 * SECTOR) == OK
    assert driver.m.read_physical(DATA, 2 * SECTOR) == bytes([3]) * SECTOR + bytes([4]) * SECTOR
    assert driver.used_elem(0) == (1, 0, 2 * SECTOR + 1)


def test_write_reaches_the_file(driver: Driver, image: Path) -> None:
    assert driver.request(T_OUT, 5, data=b"\xab" * SECTOR) == OK
    assert driver.used_elem(0) == (1, 0, 1)
    assert image.read_bytes()[5 * SECTOR:6 * SECTOR] == b"\xab" * SECTOR
    assert image.read_bytes()[4 * SECTOR:5 * SECTOR] == b"\x04" * SECTOR


def test_flush_is_ok(driver: Driver) -> None:
    assert driver.request(T_FLUSH, 0) == OK


def test_get_id_writes_the_empty_serial(driver: Driver) -> None:
    driver.m.write_physical(DATA, b"\x55" * 20)
    assert driver.request(T_GET_ID, 0, read=20) == OK
    assert driver.m.read_physical(DATA, 20) == b"\0" + b"\x55" * 19


def test_unknown_request_type_is_unsupp(driver: Driver) -> None:
    assert driver.request(42, 0) == UNSUPP


def test_reading_past_the_end_is_ioerr(driver: Driver) -> None:
    assert driver.request(T_IN, 15, read=2 * SECTOR) == IOERR
    assert driver.request(T_IN, 17, read=SECTOR) == IOERR
    assert driver.request(T_IN, 15, read=SECTOR) == OK


def test_writing_past_the_end_is_ioerr_and_leaves_the_file(driver: Driver,
                                                           image: Path) -> None:
    before = image.read_bytes()
    assert driver.request(T_OUT, 16, data=b"\x01" * SECTOR) == IOERR
    assert image.read_bytes() == before


def test_a_length_that_is_not_whole_sectors_is_ioerr(driver: Driver) -> None:
    assert driver.request(T_IN, 0, read=100) == IOERR


def test_completion_sets_interrupt_status_and_raises_the_line(driver: Driver) -> None:
    driver.request(T_IN, 0, read=SECTOR)
    assert driver.t.read(Reg.INTERRUPT_STATUS, 4) == 1
    assert driver.irqs == [True]
    driver.reg(Reg.INTERRUPT_ACK, 1)
    assert driver.t.read(Reg.INTERRUPT_STATUS, 4) == 0
    assert driver.irqs == [True, False]


def test_no_interrupt_flag_suppresses_interrupt_status(driver: Driver) -> None:
    driver.m.write_physical(driver.avail, struct.pack("<H", V["VIRTQ_AVAIL_F_NO_INTERRUPT"]))
    assert driver.request(T_IN, 0, read=SECTOR) == OK
    assert driver.t.read(Reg.INTERRUPT_STATUS, 4) == 0
    assert driver.irqs == []


def test_status_0_resets_the_device(driver: Driver) -> None:
    driver.request(T_IN, 0, read=SECTOR)
    driver.reg(Reg.STATUS, 0)
    assert driver.t.read(Reg.STATUS, 4) == 0
    assert driver.t.read(Reg.INTERRUPT_STATUS, 4) == 0
    assert driver.t.queues[0].last_avail == 0
    assert driver.irqs == [True, False]


def test_snapshot_keeps_the_file_and_reads_back_the_write(tmp_path: Path,
                                                          image: Path) -> None:
    before = image.read_bytes()
    m = Machine(64, drive=Drive(image, snapshot=True))
    try:
        d = Driver(m, legacy=False)
        assert d.request(T_OUT, 2, data=b"\x77" * SECTOR) == OK
        assert d.request(T_IN, 2, read=SECTOR) == OK
        assert m.read_physical(DATA, SECTOR) == b"\x77" * SECTOR
    finally:
        m.close()
    assert image.read_bytes() == before


# ---- broken chains and misuse: one-line diagnoses ---------------------------------------

def test_a_chain_with_next_past_the_queue_is_a_diagnosis(driver: Driver) -> None:
    driver.desc(0, HDR, 16, F, 9)
    with pytest.raises(VirtqueueError, match=r"descriptor 0 .* has next 9, past the queue "
                                             r"size 8"):
        driver.submit(0)


def test_a_looping_chain_is_a_diagnosis(driver: Driver) -> None:
    driver.desc(0, HDR, 16, F, 1)
    driver.desc(1, DATA, 16, F, 0)
    with pytest.raises(VirtqueueError, match="the chain loops"):
        driver.submit(0)


def test_a_chain_without_a_status_byte_is_a_diagnosis(driver: Driver) -> None:
    driver.m.write_physical(HDR, struct.pack("<IIQ", T_FLUSH, 0, 0))
    driver.desc(0, HDR, 16, 0)
    with pytest.raises(VirtqueueError, match="no device-writable byte for the status"):
        driver.submit(0)


def test_a_buffer_outside_ram_is_a_diagnosis(driver: Driver) -> None:
    driver.desc(0, 0x1000, 16, 0)
    with pytest.raises(VirtqueueError, match="descriptor 0's buffer at 0x1000"):
        driver.submit(0)


def test_notify_before_the_queue_is_ready_is_a_device_error(machine: Machine) -> None:
    with pytest.raises(DeviceError, match="QueueNotify for queue 0, which is not set up"):
        machine.virtio[0].write(Reg.QUEUE_NOTIFY, 4, 0)


def test_a_legacy_register_on_the_modern_transport_is_a_device_error(image: Path) -> None:
    m = Machine(64, drive=Drive(image))
    try:
        with pytest.raises(DeviceError, match=r"QUEUE_PFN .* legacy .* version 2"):
            m.virtio[0].write(Reg.QUEUE_PFN, 4, 1)
    finally:
        m.close()


def test_a_byte_access_to_a_register_is_a_device_error(machine: Machine) -> None:
    with pytest.raises(DeviceError, match="1-byte read of register STATUS"):
        machine.virtio[0].read(Reg.STATUS, 1)


def test_an_unknown_offset_is_a_device_error(machine: Machine) -> None:
    with pytest.raises(DeviceError, match="offset 0x18"):
        machine.virtio[0].read(0x18, 4)


def test_the_transport_can_stand_alone_with_its_own_irq(image: Path) -> None:
    levels: list[bool] = []
    m = Machine(64)
    disk = Disk(Drive(image))
    try:
        t = VirtioMmio(3, levels.append, m, VirtioBlk(disk))
        assert (t.base, t.name) == (0x10004000, "virtio_mmio@10004000")
    finally:
        disk.close()
        m.close()


def test_the_machine_wires_slot_0_to_plic_source_1(machine: Machine, legacy: bool) -> None:
    wired = machine.virtio[0]._irq          # what the Machine connected, before Driver records
    driver = Driver(machine, legacy)
    driver.t._irq = wired
    driver.request(T_IN, 0, read=SECTOR)
    assert machine.plic.pending == 1 << PLATFORM.virtio0_irq == 1 << 1
    driver.reg(Reg.INTERRUPT_ACK, 1)
    assert machine.plic.pending == 0
