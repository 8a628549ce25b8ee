// exc_uart_fetch.S: instruction fetches from the UART's registers.
//
// QEMU 7.2 fetches from a device as a 2-byte read of its registers and executes what
// the read returns. The NS16550A answers with the one byte register at the address,
// zero-extended: after reset, with nothing received, RBR (+0) reads 0, the all-zero
// parcel, an illegal instruction (cause 2, tval = the parcel); MCR (+4) reads 0x08
// (OUT2), a c.addi4spn with a zero immediate, illegal too (tval 0x08). The same through
// an executable page that maps the UART in S-mode: epc is the virtual address.
// (privlab: Unicorn stops with UC_ERR_FETCH_PROT and the machine reads the parcel as
// QEMU does, Machine._device_fetch.) Not checked: a register that reads as a legal
// instruction (IIR at +2 reads 0x01, a c.nop), which QEMU executes and privlab turns
// into an instruction access fault (docs/machine.md).
//
// Run against QEMU with the host clock only (programs.py HOST_CLOCK_ONLY): under
// -icount QEMU 7.2 never completes a fetch from the UART.
//
// Expected traps (taken in M):
//   1: illegal_instruction from M   epc = 0x10000000, tval 0      (RBR)
//   2: illegal_instruction from M   epc = 0x10000004, tval 0x08   (MCR)
//   3: illegal_instruction from S   epc = TEST_VA, tval 0         (RBR through a page)
//   4: supervisor_ecall back to M
#include "conformance.h"

TEST_MAIN exc_uart_fetch
    FETCH_ILLEGAL 1, PRV_M, PLATFORM_UART0_BASE, 0
    FETCH_ILLEGAL 2, PRV_M, PLATFORM_UART0_BASE + 4, 0x08

    call vm_init
    mv s11, a0
    li a0, TEST_VA
    li a1, PLATFORM_UART0_BASE
    li a2, PTE_R | PTE_W | PTE_X | PTE_A | PTE_D
    call vm_map
    csrw satp, s11
    sfence.vma
    MRET_TO PRV_S, in_s
in_s:
    FETCH_ILLEGAL 3, PRV_S, TEST_VA, 0
    ECALL_TO_M 4, PRV_S
    csrw satp, zero
    sfence.vma
    TEST_PASS
