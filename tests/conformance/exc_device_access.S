// exc_device_access.S: loads and stores device registers take, and those they refuse.
//
// QEMU 7.2 gives each device region the access sizes it accepts: the sifive_test
// finisher 2 to 4 bytes anywhere in its page (reads 0), the CLINT's msip words 4, its
// timer 4 or 8 (nothing mapped past mtime), the PLIC 4, the UART 1 to 8 over its eight
// byte registers (nothing past them). Any other access fails on the bus: a load or store
// access fault with tval = the address, rd unchanged. The UART answers an access of
// any size with the one register at its address (a load zero-extends it, a store
// writes the low byte): an 8-byte load of RBR is not RBR | MCR << 32.
//
// A page-table root on the UART: the walk reads a PTE there as a load would (RBR,
// zero-extended, for the first entry; nothing mapped for the others), which is not a
// valid PTE, so the access is a page fault (tval = the virtual address), not an
// access fault. Translated loads come from M with mstatus.MPRV and MPP = S.
//
// Only naturally aligned accesses: QEMU splits a misaligned device access into aligned
// pieces and reports the piece that failed.
//
// Expected traps (all taken in M, from M):
//   1: fault_load   lb finisher                    tval 0x100000
//   2: fault_store  sb finisher                    tval 0x100000
//   3: fault_store  sb CLINT msip 0                tval 0x2000000
//   4: fault_load   lb CLINT mtime                 tval 0x200bff8
//   5: fault_load   lw CLINT + 0xc000 (past mtime) tval 0x200c000
//   6: fault_load   lw UART + 8                    tval 0x10000008
//   7: fault_store  sw UART + 8                    tval 0x10000008
//   RV64 (8-byte accesses):
//   20: fault_load  ld finisher                    tval 0x100000
//   21: fault_store sd finisher                    tval 0x100000
//   22: fault_load  ld CLINT msip 0                tval 0x2000000
//   23: fault_store sd CLINT msip 0                tval 0x2000000
//   24: fault_load  ld PLIC priority 2             tval 0x0c000008
//   40: load_page_fault  lw VA 0 through a root at the UART (its RBR)     tval 0
//   41: load_page_fault  lw VA TEST_VA (root entry past the UART's registers)
//   Value checks (no trap): lh/lw of the finisher read 0, anywhere in its page; a
//   4-byte read of msip for a hart the machine does not have reads 0; lw UART + 4
//   reads MCR; (RV64) ld UART + 0 reads RBR zero-extended, an sd to UART + 0 leaves
//   MCR as it was, ld of mtimecmp reads all 64 bits.
#include "conformance.h"

// `insn` (a load or store of address s0) must fault with `cause`, tval = s0 + off.
.macro FAULT check, cause, addr, insn:vararg
    li s0, \addr
    li a0, 0x600d
    EXPECT \check, PRV_M, PRV_M, \cause, .Linsn\@, \addr, RESUME_AT, .Lnext\@
.Linsn\@:
    \insn
    FAIL_NO_TRAP \check
.Lnext\@:
.endm

TEST_MAIN exc_device_access
    FAULT 1, CAUSE_FAULT_LOAD, FINISHER_ADDR, lb a0, 0(s0)
    CHECK_REG 8, a0, 0x600d                 // rd unchanged by the faulting load
    FAULT 2, CAUSE_FAULT_STORE, FINISHER_ADDR, sb a0, 0(s0)
    FAULT 3, CAUSE_FAULT_STORE, CLINT_MSIP_ADDR, sb a0, 0(s0)
    FAULT 4, CAUSE_FAULT_LOAD, CLINT_MTIME_ADDR, lb a0, 0(s0)
    FAULT 5, CAUSE_FAULT_LOAD, PLATFORM_CLINT_BASE + 0xc000, lw a0, 0(s0)
    FAULT 6, CAUSE_FAULT_LOAD, PLATFORM_UART0_BASE + 8, lw a0, 0(s0)
    FAULT 7, CAUSE_FAULT_STORE, PLATFORM_UART0_BASE + 8, sw a0, 0(s0)

    // What the finisher, the CLINT and the UART take.
    li s0, FINISHER_ADDR
    lh a0, 0(s0)
    CHECK_REG 9, a0, 0
    li s0, FINISHER_ADDR + 0xff0
    lw a0, 0(s0)
    CHECK_REG 10, a0, 0
    li s0, CLINT_MSIP_ADDR + 4 * 7          // hart 7: none on a one-hart machine
    lw a0, 0(s0)
    CHECK_REG 11, a0, 0
    li s0, PLATFORM_UART0_BASE
    li t0, 0x0f                             // MCR: DTR, RTS, OUT1, OUT2 (no loopback)
    sb t0, 4(s0)
    lw a0, 4(s0)
    CHECK_REG 12, a0, 0x0f

#if __riscv_xlen == 64
    FAULT 20, CAUSE_FAULT_LOAD, FINISHER_ADDR, ld a0, 0(s0)
    FAULT 21, CAUSE_FAULT_STORE, FINISHER_ADDR, sd a0, 0(s0)
    FAULT 22, CAUSE_FAULT_LOAD, CLINT_MSIP_ADDR, ld a0, 0(s0)
    FAULT 23, CAUSE_FAULT_STORE, CLINT_MSIP_ADDR, sd a0, 0(s0)
    FAULT 24, CAUSE_FAULT_LOAD, PLIC_PRIORITY_ADDR(2), ld a0, 0(s0)

    li s0, PLATFORM_UART0_BASE
    ld a0, 0(s0)                            // RBR, nothing received: 0 (not MCR << 32)
    CHECK_REG 25, a0, 0
    li t0, (0x13 << 32) | 0x0a              // THR gets the newline; MCR is not written
    sd t0, 0(s0)
    lbu a0, 4(s0)
    CHECK_REG 26, a0, 0x0f
    li s0, CLINT_MTIMECMP_ADDR
    li t0, 0x123456789abcdef0
    sd t0, 0(s0)
    ld a0, 0(s0)
    CHECK_REG 27, a0, 0x123456789abcdef0
    li t0, -1                               // no timer interrupt later
    sd t0, 0(s0)
#endif

    // A page-table root on the UART: loads from M with MPRV and MPP = S translate.
    li t0, SATP_MODE | (PLATFORM_UART0_BASE >> PAGE_SHIFT)
    csrw satp, t0
    sfence.vma
    li t1, 0
    li t0, MSTATUS_MPP
    csrc mstatus, t0
    li t0, MSTATUS_MPP_S | MSTATUS_MPRV
    csrs mstatus, t0
    EXPECT 40, PRV_M, PRV_M, CAUSE_LOAD_PAGE_FAULT, 1f, 0, RESUME_AT, 2f
1:  lw a0, 0(t1)
    FAIL_NO_TRAP 40
2:  // The trap set MPP to M (it came from M); translate as S again.
    li t0, MSTATUS_MPP
    csrc mstatus, t0
    li t0, MSTATUS_MPP_S
    csrs mstatus, t0
    li t1, TEST_VA
    EXPECT 41, PRV_M, PRV_M, CAUSE_LOAD_PAGE_FAULT, 3f, TEST_VA, RESUME_AT, 4f
3:  lw a0, 0(t1)
    FAIL_NO_TRAP 41
4:  li t0, MSTATUS_MPRV
    csrc mstatus, t0
    csrw satp, zero
    sfence.vma
    TEST_PASS
