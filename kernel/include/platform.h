// platform.h: the physical memory map of the QEMU `virt` board, which privlab emulates.
//
// This header is the single source of truth for these addresses: the firmware, the
// kernel and the bare-metal tests include it, and the Python harness parses its
// `#define PLATFORM_...` lines (harness/abi/platform.py), so nothing is hand-synced.
// Values must stay plain integer literals so both C and the harness can read them.
#ifndef PLATFORM_H
#define PLATFORM_H

// MROM: QEMU's reset ROM. It holds the reset vector's words and, right after them,
// OpenSBI's fw_dynamic_info, whose address the hart has in a2 at reset.
#define PLATFORM_MROM_BASE       0x00001000
#define PLATFORM_MROM_SIZE       0x0000f000

// sifive_test finisher: write FINISHER_PASS to power off with status 0,
// FINISHER_FAIL | (code << 16) to exit with `code`, FINISHER_RESET to reset.
#define PLATFORM_FINISHER_BASE   0x00100000
#define PLATFORM_FINISHER_SIZE   0x00001000
#define FINISHER_FAIL            0x3333
#define FINISHER_PASS            0x5555
#define FINISHER_RESET           0x7777

// Harts: 1 to PLATFORM_MAX_HARTS (privlab run --smp N, QEMU -smp N), ids 0..N-1.
#define PLATFORM_MAX_HARTS       8

// CLINT: core-local interruptor. Hart k's registers: msip at CLINT_MSIP + 4k,
// mtimecmp at CLINT_MTIMECMP + 8k; one mtime for all.
#define PLATFORM_CLINT_BASE      0x02000000
#define PLATFORM_CLINT_SIZE      0x00010000
#define CLINT_MSIP               0x0000   // machine software interrupt pending (bit 0), hart 0
#define CLINT_MTIMECMP           0x4000   // 64-bit timer compare, hart 0
#define CLINT_MTIME              0xbff8   // 64-bit time, counts at PLATFORM_TIMEBASE_HZ
#define PLATFORM_TIMEBASE_HZ     10000000

// PLIC: platform-level interrupt controller (sifive,plic-1.0.0), QEMU 7.2's layout.
// Sources 1..PLIC_NUM_SOURCES-1 (0 means "none"); hart k has context 2k (M-mode,
// drives mip.MEIP) and context 2k+1 (S-mode, drives mip.SEIP). Registers are 32-bit.
#define PLATFORM_PLIC_BASE       0x0c000000
#define PLATFORM_PLIC_SIZE       0x00600000
#define PLIC_NUM_SOURCES         96         // including source 0
#define PLIC_MAX_PRIORITY        7          // priorities and thresholds are 0..7
#define PLIC_PRIORITY            0x000000   // source n's priority: + 4 * n (n >= 1)
#define PLIC_PENDING             0x001000   // pending bits, 32 sources a word (read-only)
#define PLIC_ENABLE              0x002000   // context c's enable bits: + c * stride
#define PLIC_ENABLE_STRIDE       0x80
#define PLIC_CONTEXT             0x200000   // context c's registers: + c * stride
#define PLIC_CONTEXT_STRIDE      0x1000
#define PLIC_THRESHOLD           0x0        // in a context: priority threshold
#define PLIC_CLAIM               0x4        // in a context: claim (read) / complete (write)
#define PLIC_CONTEXT_M           0          // hart 0, M-mode
#define PLIC_CONTEXT_S           1          // hart 0, S-mode
#define PLIC_NUM_CONTEXTS        2          // per hart

// UART0: NS16550A, byte registers.
#define PLATFORM_UART0_BASE      0x10000000
#define PLATFORM_UART0_SIZE      0x00000100
#define PLATFORM_UART0_IRQ       10

// virtio-mmio transports: PLATFORM_VIRTIO_COUNT slots, slot i at
// PLATFORM_VIRTIO0_BASE + i * PLATFORM_VIRTIO_STRIDE, PLIC source PLATFORM_VIRTIO0_IRQ + i.
// Each transport's registers fill the first PLATFORM_VIRTIO_SIZE bytes of its slot.
#define PLATFORM_VIRTIO0_BASE    0x10001000
#define PLATFORM_VIRTIO_COUNT    8
#define PLATFORM_VIRTIO_STRIDE   0x00001000
#define PLATFORM_VIRTIO_SIZE     0x00000200
#define PLATFORM_VIRTIO0_IRQ     1

// virtio-mmio register offsets (virtio 1.2, 4.2.2; "legacy" only in version 1).
#define VIRTIO_MMIO_MAGIC_VALUE         0x000   // reads VIRTIO_MMIO_MAGIC
#define VIRTIO_MMIO_VERSION             0x004   // 2 modern, 1 legacy
#define VIRTIO_MMIO_DEVICE_ID           0x008   // 0: no device in this slot
#define VIRTIO_MMIO_VENDOR_ID           0x00c
#define VIRTIO_MMIO_DEVICE_FEATURES     0x010
#define VIRTIO_MMIO_DEVICE_FEATURES_SEL 0x014
#define VIRTIO_MMIO_DRIVER_FEATURES     0x020
#define VIRTIO_MMIO_DRIVER_FEATURES_SEL 0x024
#define VIRTIO_MMIO_GUEST_PAGE_SIZE     0x028   // legacy
#define VIRTIO_MMIO_QUEUE_SEL           0x030
#define VIRTIO_MMIO_QUEUE_NUM_MAX       0x034
#define VIRTIO_MMIO_QUEUE_NUM           0x038
#define VIRTIO_MMIO_QUEUE_ALIGN         0x03c   // legacy
#define VIRTIO_MMIO_QUEUE_PFN           0x040   // legacy
#define VIRTIO_MMIO_QUEUE_READY         0x044   // modern
#define VIRTIO_MMIO_QUEUE_NOTIFY        0x050
#define VIRTIO_MMIO_INTERRUPT_STATUS    0x060
#define VIRTIO_MMIO_INTERRUPT_ACK       0x064
#define VIRTIO_MMIO_STATUS              0x070
#define VIRTIO_MMIO_QUEUE_DESC_LOW      0x080   // modern
#define VIRTIO_MMIO_QUEUE_DESC_HIGH     0x084
#define VIRTIO_MMIO_QUEUE_DRIVER_LOW    0x090   // the available ring
#define VIRTIO_MMIO_QUEUE_DRIVER_HIGH   0x094
#define VIRTIO_MMIO_QUEUE_DEVICE_LOW    0x0a0   // the used ring
#define VIRTIO_MMIO_QUEUE_DEVICE_HIGH   0x0a4
#define VIRTIO_MMIO_CONFIG_GENERATION   0x0fc   // modern
#define VIRTIO_MMIO_CONFIG              0x100   // device-specific configuration space
#define VIRTIO_MMIO_MAGIC               0x74726976   // "virt"
#define VIRTIO_MMIO_VENDOR_QEMU         0x554d4551   // "QEMU"
#define VIRTIO_MMIO_QUEUE_NUM_MAX_VALUE 1024         // QEMU's VIRTQUEUE_MAX_SIZE

// Device status bits (Status register), interrupt bits (InterruptStatus).
#define VIRTIO_STATUS_ACKNOWLEDGE  1
#define VIRTIO_STATUS_DRIVER       2
#define VIRTIO_STATUS_DRIVER_OK    4
#define VIRTIO_STATUS_FEATURES_OK  8
#define VIRTIO_STATUS_NEEDS_RESET  64
#define VIRTIO_STATUS_FAILED       128
#define VIRTIO_INT_USED_BUFFER     1
#define VIRTIO_INT_CONFIG_CHANGE   2

// Split virtqueue: descriptor flags, available-ring flags.
#define VIRTQ_DESC_F_NEXT          1
#define VIRTQ_DESC_F_WRITE         2
#define VIRTQ_DESC_F_INDIRECT      4
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1

// virtio-blk (device id VIRTIO_ID_BLOCK): feature bits, config offsets, requests.
#define VIRTIO_ID_BLOCK            2
#define VIRTIO_F_VERSION_1         32
#define VIRTIO_BLK_F_SEG_MAX       2
#define VIRTIO_BLK_F_BLK_SIZE      6
#define VIRTIO_BLK_F_FLUSH         9
#define VIRTIO_BLK_CFG_CAPACITY    0x00   // u64, in 512-byte sectors
#define VIRTIO_BLK_CFG_SEG_MAX     0x0c   // u32
#define VIRTIO_BLK_CFG_BLK_SIZE    0x14   // u32
#define VIRTIO_BLK_SECTOR_SIZE     512
#define VIRTIO_BLK_T_IN            0
#define VIRTIO_BLK_T_OUT           1
#define VIRTIO_BLK_T_FLUSH         4
#define VIRTIO_BLK_T_GET_ID        8
#define VIRTIO_BLK_ID_BYTES        20
#define VIRTIO_BLK_S_OK            0
#define VIRTIO_BLK_S_IOERR         1
#define VIRTIO_BLK_S_UNSUPP        2

// RAM: the firmware (or a bare-metal ELF) is entered here in M-mode.
#define PLATFORM_RAM_BASE        0x80000000
#define PLATFORM_RAM_SIZE_DEFAULT 0x08000000   // 128 MiB
#define PLATFORM_RAM_SIZE_MAX     0x80000000   // 2 GiB: the most RAM the firmware accepts

// With firmware, the S-mode kernel is entered here (OpenSBI fw_jump convention).
#define PLATFORM_KERNEL_BASE     0x80200000

#endif // PLATFORM_H
