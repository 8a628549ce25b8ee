"""Malicious bare-metal guests: each tries to make one device cost the host
more than the guest's own instructions do. Bodies for tests/machine/asm.py's build_asm,
so the same ELF runs on privlab and on QEMU 7.2:

    ELF=$(PYTHONPATH=tests python -m devices.guests avail_on_used)
    qemu-system-riscv64 -machine virt -bios none -nographic -kernel $ELF \
        -global virtio-mmio.force-legacy=false \
        -drive file=disk.img,format=raw,if=none,id=x0 \
        -device virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0
    privlab run --bios none --kernel $ELF --drive disk.img,snapshot=on
"""

from __future__ import annotations

import sys
from pathlib import Path

from machine.asm import build_asm

__all__ = ["GUESTS", "build_guest"]

# Bring up virtio-blk in slot 0 (modern transport) with one queue of \num descriptors:
# the descriptor table at \desc, the available ring at \avail, the used ring at \used.
VIRTIO_UP = """\
.macro MMIO_W off, value
    li t0, PLATFORM_VIRTIO0_BASE + \\off
    li t1, \\value
    sw t1, 0(t0)
.endm
#define ACK_DRIVER (VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER)
.macro VIRTIO_UP num, desc, avail, used
    MMIO_W VIRTIO_MMIO_STATUS, ACK_DRIVER
    MMIO_W VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1
    MMIO_W VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1
    MMIO_W VIRTIO_MMIO_DRIVER_FEATURES, 1      // VERSION_1 (bit 32)
    MMIO_W VIRTIO_MMIO_STATUS, ACK_DRIVER | VIRTIO_STATUS_FEATURES_OK
    MMIO_W VIRTIO_MMIO_QUEUE_SEL, 0
    MMIO_W VIRTIO_MMIO_QUEUE_NUM, \\num
    MMIO_W VIRTIO_MMIO_QUEUE_DESC_LOW, \\desc
    MMIO_W VIRTIO_MMIO_QUEUE_DRIVER_LOW, \\avail
    MMIO_W VIRTIO_MMIO_QUEUE_DEVICE_LOW, \\used
    MMIO_W VIRTIO_MMIO_QUEUE_READY, 1
    MMIO_W VIRTIO_MMIO_STATUS, ACK_DRIVER | VIRTIO_STATUS_FEATURES_OK | VIRTIO_STATUS_DRIVER_OK
.endm
// descriptor \\i at \\table: le64 addr (in a0), le32 len (in a1), le16 flags, le16 next
.macro DESC table, i, flags, next
    li t0, \\table + 16 * \\i
    sd a0, 0(t0)
    sw a1, 8(t0)
    li t1, (\\flags) | ((\\next) << 16)
    sw t1, 12(t0)
.endm
.macro NOTIFY
    MMIO_W VIRTIO_MMIO_QUEUE_NOTIFY, 0
.endm
// Make the chain at descriptor 0 the avail ring's one entry: ring[0] = 0, idx = 1.
.macro OFFER_HEAD0 avail
    li t0, \\avail
    sh zero, 4(t0)
    li t1, 1
    sh t1, 2(t0)
.endm
"""

DESC = 0x80100000
RING = 0x80110000
USED = 0x80111000
HEADER = 0x80112000
STATUS_BYTE = 0x80112100
RAM = 0x80000000
RAM_SIZE = 128 << 20

# 1. The available ring on the used ring, queue size 2: each completion the device
# writes moves the available index too, so a device that re-reads it after every
# request finds a new one for ever. QEMU 7.2 ends the notify at once.
AVAIL_ON_USED = VIRTIO_UP + f"""\
    VIRTIO_UP 2, {DESC:#x}, {RING:#x}, {RING:#x}
    li a0, {HEADER:#x}              // header: IN (0), sector 0; no data
    li a1, 16
    DESC {DESC:#x}, 0, VIRTQ_DESC_F_NEXT, 1
    li a0, {STATUS_BYTE:#x}
    li a1, 1
    DESC {DESC:#x}, 1, VIRTQ_DESC_F_WRITE, 0
    li t0, {RING:#x}
    sw zero, 4(t0)                  // ring[0] = ring[1] = descriptor 0
    li t1, 1
    sh t1, 2(t0)                    // idx = 1: one request
    NOTIFY
    PASS
"""

# 2. One request of 32 descriptors, each covering all of RAM: 31 device-readable, the
# last device-writable. QEMU 7.2 maps them (45 MB, 0.05 s) and answers UNSUPP (the
# header is this code's first words).
ALL_RAM_CHAIN = VIRTIO_UP + f"""\
    VIRTIO_UP 32, {DESC:#x}, {RING:#x}, {USED:#x}
    li a0, {RAM:#x}
    li a1, {RAM_SIZE:#x}
    .set i, 0
    .rept 31
    DESC {DESC:#x}, i, VIRTQ_DESC_F_NEXT, i + 1
    .set i, i + 1
    .endr
    DESC {DESC:#x}, 31, VIRTQ_DESC_F_WRITE, 0
    OFFER_HEAD0 {RING:#x}
    NOTIFY
    PASS
"""

# 3a. A chain that loops (descriptor 1023's next is 0) over all-RAM buffers, queue size
# 1024: longer than the queue, a device error (virtio 1.2, 2.7.5.3.1).
LOOPING_CHAIN = VIRTIO_UP + f"""\
    VIRTIO_UP 1024, {DESC:#x}, {RING:#x}, {USED:#x}
    li a0, {RAM:#x}
    li a1, {RAM_SIZE:#x}
    li t2, {DESC:#x}
    li t3, 0
1:  sd a0, 0(t2)
    sw a1, 8(t2)
    addi t4, t3, 1
    andi t4, t4, 1023
    slli t4, t4, 16
    ori t4, t4, VIRTQ_DESC_F_NEXT
    sw t4, 12(t2)
    addi t2, t2, 16
    addi t3, t3, 1
    li t4, 1024
    bne t3, t4, 1b
    OFFER_HEAD0 {RING:#x}
    NOTIFY
    PASS
"""

# 3b. A 16-byte header, then 40 device-writable all-RAM buffers: 5 GiB of writable
# bytes. QEMU 7.2 answers IOERR (not whole sectors) and reports the used length
# truncated to 32 bits: 40 * 128 MiB mod 2^32 = 1 GiB. Exit status 0 when it is.
WRITABLE_PAST_4G = VIRTIO_UP + f"""\
    VIRTIO_UP 64, {DESC:#x}, {RING:#x}, {USED:#x}
    li a0, {HEADER:#x}
    li a1, 16
    DESC {DESC:#x}, 0, VIRTQ_DESC_F_NEXT, 1
    li a0, {RAM:#x}
    li a1, {RAM_SIZE:#x}
    .set i, 1
    .rept 39
    DESC {DESC:#x}, i, VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE, i + 1
    .set i, i + 1
    .endr
    DESC {DESC:#x}, 40, VIRTQ_DESC_F_WRITE, 0
    OFFER_HEAD0 {RING:#x}
    fence
    NOTIFY
    li t0, {USED:#x}
1:  lhu t1, 2(t0)                   // QEMU completes on its own time: wait for it
    beqz t1, 1b
    fence
    lwu t1, 8(t0)                   // used[0].len
    li t2, (40 * {RAM_SIZE:#x}) & 0xffffffff
    beq t1, t2, 2f
    FAIL 1
2:  PASS
"""

# 4. Not a device: the history gdb and `privlab step` keep for going back. S-mode under
# Sv39 (RAM's second alias, at VA 4 GiB, is not executable, so stores run at full speed)
# gives every page of RAM above the first MiB new contents, pass after pass, for ever:
# each snapshot of it finds (nearly) all of RAM changed. It never ends by itself.
FRESH_PAGES = f"""\
    OPEN_PMP
    ENTER_S_SV39 fresh_root, 3f
3:  li t2, 0                        // the pass
1:  addi t2, t2, 1
    li t0, {(1 << 32) + (1 << 20):#x}
    li t1, {(1 << 32) + RAM_SIZE:#x}
    li t3, 4096
2:  sd t2, 0(t0)                    // this page's first words: the pass number and the
    sd t0, 8(t0)                    // page's address, so no two pages are alike
    add t0, t0, t3
    bltu t0, t1, 2b
    j 1b
    .data
    .balign 4096
fresh_root:                         // VA 2 GiB: RAM, V R W X A D; VA 4 GiB: RAM, V R W A D
    .dword 0, 0
    .dword ((0x80000000 >> 12) << 10) | 0xCF
    .dword 0
    .dword ((0x80000000 >> 12) << 10) | 0xC7
    .fill 507, 8, 0
"""

GUESTS: dict[str, str] = {
    "avail_on_used": AVAIL_ON_USED,
    "all_ram_chain": ALL_RAM_CHAIN,
    "looping_chain": LOOPING_CHAIN,
    "writable_past_4g": WRITABLE_PAST_4G,
    "fresh_pages": FRESH_PAGES,
}


def build_guest(name: str) -> Path:
    return build_asm(GUESTS[name], "rv64")


if __name__ == "__main__":
    print(build_guest(sys.argv[1]))
