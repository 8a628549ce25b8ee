// pmp_ranges.S: PMP address matching at the edges of the address space and below a
// page, for both XLENs.
//
// 1. The largest NAPOT encoding riscv-tests' environment uses to open all memory:
//    pmpaddr0 = 2^31 - 1 on RV32 (2^34 bytes from 0, the whole 34-bit physical space)
//    and 2^53 - 1 on RV64 (2^56 bytes). U fetches, loads and stores, and reads the
//    value back unchanged. (Unicorn's QEMU 5.0 arithmetic made this entry 4 bytes on
//    RV32, so the first U fetch faulted.)
// 2. TOR up to exactly 4 GiB (pmpaddr = 2^30: the top overflows 32 bits on RV32),
//    behind two NA4 entries with no permission, inside a data page and inside the code
//    page U runs from: U loads and stores the words next to the denied one, before and
//    after, and its load and store of the denied word fault, each time (the page's
//    permissions are not cached from the first access). The NA4 entries have the
//    higher priority (lower index), so the TOR entry's RWX does not apply to them.
//    (Not checked: a fetch of the denied code word. QEMU 7.2 keeps a code page's
//    translation once one fetch from it passed, and so runs it; privlab does the same.)
// 3. pmpcfg2 reaches entries 8-11 (RV32) or 8-15 (RV64; pmpcfg1 and pmpcfg3 do not
//    exist there), and pmpcfg0 is untouched by it.
// 4. A locked TOR entry locks its own pmpaddr and its base, pmpaddr of the entry
//    before: writes to both are ignored; M keeps running inside it (it grants RWX).
//
// Expected traps, in order (to M):
//   1: user_ecall (part 1)
//   3: load_access from U, tval = deny_word
//   4: store_access from U, tval = deny_word
//   6: user_ecall (part 2)
//  13: illegal_instruction from M on RV64 only: csrr pmpcfg1, tval = its bits
#include "conformance.h"

#if __riscv_xlen == 64
#define NAPOT_ALL ((1 << 53) - 1)
#define CFG2_VALUE 0x0705040301000705
#else
#define NAPOT_ALL ((1 << 31) - 1)
#define CFG2_VALUE 0x03010705
#endif
#define TOR_4G (1 << 30)

TEST_MAIN pmp_ranges
    // 1. One NAPOT entry over everything.
    li t0, NAPOT_ALL
    csrw pmpaddr0, t0
    li t0, PMP_A_NAPOT | PMP_R | PMP_W | PMP_X
    csrw pmpcfg0, t0
    CHECK_CSR 2, pmpaddr0, NAPOT_ALL
    MRET_TO PRV_U, u_all
u_all:
    la a0, words
    lw t1, 0(a0)
    sw t1, 4(a0)
    ECALL_TO_M 1, PRV_U

    // 2. Entry 0: NA4 over deny_word, no permission; entry 1: NA4 over u_page's last word, no
    // permission; entry 2: off, its address the base (0) of entry 3: TOR to 4 GiB, RWX.
    la t0, deny_word
    srli t0, t0, 2
    csrw pmpaddr0, t0
    la t0, u_page + PAGE_SIZE - 4
    srli t0, t0, 2
    csrw pmpaddr1, t0
    csrw pmpaddr2, zero
    li t0, TOR_4G
    csrw pmpaddr3, t0
    li t0, ((PMP_A_TOR | PMP_R | PMP_W | PMP_X) << 24) | (PMP_A_NA4 << 8) | PMP_A_NA4
    csrw pmpcfg0, t0
    la s0, deny_word
    MRET_TO PRV_U, u_page
    // U code on a page of its own, one of whose words no entry lets U fetch.
    .balign PAGE_SIZE
u_page:
    lw t1, -4(s0)               // the words around deny_word: allowed
    sw t1, 4(s0)
    lw t1, 4(s0)
    EXPECT 3, PRV_M, PRV_U, CAUSE_FAULT_LOAD, 1f, deny_word, RESUME_AT, 2f
1:  lw t1, 0(s0)
    FAIL_NO_TRAP 3
2:  EXPECT 4, PRV_M, PRV_U, CAUSE_FAULT_STORE, 1f, deny_word, RESUME_AT, 2f
1:  sw t1, 0(s0)
    FAIL_NO_TRAP 4
2:  sw t1, -4(s0)               // and still, after the faults
    lw t1, 4(s0)
    ECALL_TO_M 6, PRV_U


    // 3. pmpcfg2: entries 8 and up (all off: R/W/X bits only).
    li t1, CFG2_VALUE
    csrw pmpcfg2, t1
    CHECK_CSR 7, pmpcfg2, CFG2_VALUE
    CHECK_CSR 8, pmpcfg0, ((PMP_A_TOR | PMP_R | PMP_W | PMP_X) << 24) | (PMP_A_NA4 << 8) | PMP_A_NA4
#if __riscv_xlen == 64
    EXPECT 13, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 1f, 0x3a102373, RESUME_AT, 2f
1:  .word 0x3a102373          // csrr t1, pmpcfg1 (RV32 only, so no mnemonic here)
    FAIL_NO_TRAP 13
2:
#else
    li t1, 0x05000107
    csrw pmpcfg3, t1
    CHECK_CSR 9, pmpcfg3, 0x05000107
    CHECK_CSR 10, pmpcfg2, CFG2_VALUE
#endif

    // 4. Lock entry 3 (TOR): pmpaddr3 and pmpaddr2 ignore writes from now on.
    li t0, PMP_L << 24
    csrs pmpcfg0, t0
    li t0, 0x1000
    csrw pmpaddr2, t0
    csrw pmpaddr3, t0
    CHECK_CSR 11, pmpaddr2, 0
    CHECK_CSR 12, pmpaddr3, TOR_4G
    la a0, words                // M inside the locked entry: RWX
    lw t1, 0(a0)
    sw t1, 4(a0)
    TEST_PASS

    .data
    .balign 16
words:
    .space 16
    .balign PAGE_SIZE
    .space 64
    .word 0x11111111
deny_word:
    .word 0x22222222
    .word 0x33333333
