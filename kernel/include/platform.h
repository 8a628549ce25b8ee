// platform.h: the physical memory map of the QEMU `virt` board, which privlab emulates.
//
// This header is the single source of truth for these addresses: the firmware, the
// kernel and the bare-metal tests include it, and the Python harness parses its
// `#define PLATFORM_...` lines (harness/abi/platform.py), so nothing is hand-synced.
// Values must stay plain integer literals so both C and the harness can read them.
#ifndef PLATFORM_H
#define PLATFORM_H

// sifive_test finisher: write FINISHER_PASS to power off with status 0,
// FINISHER_FAIL | (code << 16) to exit with `code`, FINISHER_RESET to reset.
#define PLATFORM_FINISHER_BASE   0x00100000
#define PLATFORM_FINISHER_SIZE   0x00001000
#define FINISHER_FAIL            0x3333
#define FINISHER_PASS            0x5555
#define FINISHER_RESET           0x7777

// CLINT: core-local interruptor, one hart.
#define PLATFORM_CLINT_BASE      0x02000000
#define PLATFORM_CLINT_SIZE      0x00010000
#define CLINT_MSIP               0x0000   // machine software interrupt pending (bit 0)
#define CLINT_MTIMECMP           0x4000   // 64-bit timer compare, hart 0
#define CLINT_MTIME              0xbff8   // 64-bit time, counts at PLATFORM_TIMEBASE_HZ
#define PLATFORM_TIMEBASE_HZ     10000000

// PLIC: platform-level interrupt controller (sifive,plic-1.0.0), QEMU 7.2's layout.
// Sources 1..PLIC_NUM_SOURCES-1 (0 means "none"); hart 0 has context 0 (M-mode,
// drives mip.MEIP) and context 1 (S-mode, drives mip.SEIP). Registers are 32-bit.
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
#define PLIC_NUM_CONTEXTS        2

// UART0: NS16550A, byte registers.
#define PLATFORM_UART0_BASE      0x10000000
#define PLATFORM_UART0_SIZE      0x00000100
#define PLATFORM_UART0_IRQ       10

// virtio-mmio transports (not yet emulated); slot i interrupts on PLIC source
// PLATFORM_VIRTIO_IRQ + i.
#define PLATFORM_VIRTIO0_BASE    0x10001000
#define PLATFORM_VIRTIO_IRQ      1

// RAM: the firmware (or a bare-metal ELF) is entered here in M-mode.
#define PLATFORM_RAM_BASE        0x80000000
#define PLATFORM_RAM_SIZE_DEFAULT 0x08000000   // 128 MiB
#define PLATFORM_RAM_SIZE_MAX     0x80000000   // 2 GiB: the most RAM the firmware accepts

// With firmware, the S-mode kernel is entered here (OpenSBI fw_jump convention).
#define PLATFORM_KERNEL_BASE     0x80200000

#endif // PLATFORM_H
