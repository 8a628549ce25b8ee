// sstc.S: the Sstc extension as QEMU 7.2 enables it on virt (QEMU runs this suite
// with its default sstc=true).
//
// menvcfg.STCE (bit 63; menvcfgh bit 31 on RV32) resets to 0 and is writable. S may
// access stimecmp only with mcounteren.TM and STCE both set: otherwise an illegal
// instruction, tval = its bits. U never may. With STCE set, mip.STIP is the comparator
// (time >= stimecmp): an M write of STIP is ignored, stimecmp = all ones clears it,
// stimecmp <= time sets it; a wfi with STIE enabled (and interrupts disabled) waits
// until time reaches a stimecmp in the future and then sees STIP set.
//
// Expected traps, in order (illegal_instruction unless said):
//  2: csrr a0, stimecmp from S, mcounteren = 0, STCE = 0 (0x14d02573)
//  9: supervisor_ecall
//  3: csrr a0, stimecmp from S, mcounteren = TM, STCE = 0
//  4: supervisor_ecall
//  6: supervisor_ecall (stimecmp read and written from S with TM and STCE)
//  7: csrr a0, stimecmp from U (TM and STCE set, scounteren = TM)
//  8: user_ecall
#include "conformance.h"

.macro ILLEGAL check, from, bits, insn:vararg
    EXPECT \check, PRV_M, \from, CAUSE_ILLEGAL_INSTRUCTION, .Linsn\@, \bits, RESUME_AT, .Lnext\@
.Linsn\@:
    \insn
    FAIL_NO_TRAP \check
.Lnext\@:
.endm

#if __riscv_xlen == 64
.macro STCE_ON
    li t0, MENVCFG_STCE
    csrs menvcfg, t0
.endm
.macro STCE_OFF
    li t0, MENVCFG_STCE
    csrc menvcfg, t0
.endm
.macro SET_STIMECMP reg
    csrw CSR_STIMECMP, \reg
.endm
.macro STIMECMP_MAX
    li t0, -1
    csrw CSR_STIMECMP, t0
.endm
#else
.macro STCE_ON
    li t0, MENVCFG_STCE >> 32
    csrs menvcfgh, t0
.endm
.macro STCE_OFF
    li t0, MENVCFG_STCE >> 32
    csrc menvcfgh, t0
.endm
.macro SET_STIMECMP reg         // the high half is 0 here: times stay below 2^32 ticks
    li t0, -1
    csrw CSR_STIMECMP, t0
    csrw CSR_STIMECMPH, zero
    csrw CSR_STIMECMP, \reg
.endm
.macro STIMECMP_MAX
    li t0, -1
    csrw CSR_STIMECMP, t0
    csrw CSR_STIMECMPH, t0
.endm
#endif

TEST_MAIN sstc
#if __riscv_xlen == 64
    CHECK_CSR 1, menvcfg, 0
#else
    CHECK_CSR 15, menvcfgh, 0
#endif
    csrw mcounteren, zero
    MRET_TO PRV_S, in_s
in_s:
    ILLEGAL 2, PRV_S, 0x14d02573, csrr a0, CSR_STIMECMP
    ECALL_TO_M 9, PRV_S
    li t0, COUNTEREN_TM
    csrw mcounteren, t0
    MRET_TO PRV_S, in_s2
in_s2:
    ILLEGAL 3, PRV_S, 0x14d02573, csrr a0, CSR_STIMECMP
    ECALL_TO_M 4, PRV_S
    STCE_ON
    MRET_TO PRV_S, in_s3
in_s3:
    li t1, 12345
    SET_STIMECMP t1
    csrr a0, CSR_STIMECMP
    ECALL_TO_M 6, PRV_S
    li t1, 12345
    bne a0, t1, fail
    li t0, COUNTEREN_TM
    csrw scounteren, t0
    MRET_TO PRV_U, in_u
in_u:
    ILLEGAL 7, PRV_U, 0x14d02573, csrr a0, CSR_STIMECMP
    ECALL_TO_M 8, PRV_U
    csrw scounteren, zero

    // STIP follows the comparator; software cannot set it.
    STIMECMP_MAX
    CHECK_CSR_BITS 10, mip, MIP_STIP, 0
    li t0, MIP_STIP
    csrs mip, t0
    CHECK_CSR_BITS 11, mip, MIP_STIP, 0
    csrw CSR_STIMECMP, zero
#if __riscv_xlen == 32
    csrw CSR_STIMECMPH, zero
#endif
    CHECK_CSR_BITS 12, mip, MIP_STIP, MIP_STIP
    STIMECMP_MAX
    CHECK_CSR_BITS 13, mip, MIP_STIP, 0

    // A comparator in the future: wfi (STIE on, interrupts off) waits for it.
    li t0, MIP_STIP
    csrs mie, t0
    rdtime t1
    li t2, 200000               // 20 ms at 10 MHz
    add t1, t1, t2
    SET_STIMECMP t1
    CHECK_CSR_BITS 14, mip, MIP_STIP, 0
1:  wfi
    csrr t0, mip
    andi t0, t0, MIP_STIP
    beqz t0, 1b
    rdtime t3
    bltu t3, t1, fail
    li t0, MIP_STIP
    csrc mie, t0
    STIMECMP_MAX
    STCE_OFF
    csrw mcounteren, zero
    TEST_PASS

fail:
    FAIL 20
