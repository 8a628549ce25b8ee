// fp_status.S: mstatus.FS and SD, and the rounding-mode field, as QEMU 7.2 does them.
//
// With FS Off every F/D instruction and every access to fflags, frm and fcsr is an
// illegal instruction (privileged spec 3.1.6.6), tval = its bits. An instruction that
// writes an f register, and a write to an FP CSR, make FS Dirty from Initial or
// Clean, and SD reads 1 exactly when FS is Dirty (sstatus shows the same FS and SD).
// fsd writes no FP state, so FS stays Clean. QEMU 7.2 departs from the spec in one
// place checked here: an instruction that only accrues fflags (fcvt.w.s of a NaN,
// flt.s on a NaN: NV) leaves FS as it was; the spec counts fflags as FP state.
// An rm field of 5 or 6, or rm = 7 (dyn) while frm holds 5, 6 or 7, is an illegal
// instruction (unprivileged spec 11.2); frm itself keeps any 3-bit value.
//
// Expected traps (taken in M from M, illegal instruction, tval = the bits):
//   1: flw f1, 0(a1) with FS Off (0x0005a087)
//   2: csrr a0, fflags with FS Off (0x00102573)
//   3: csrwi frm, 1 with FS Off (0x0020d073)
//   4: fadd.s f0, f1, f2 with rm = 5 (0x0020d053)
//   5: fadd.s f0, f1, f2 with rm = 6 (0x0020e053)
//   6: fadd.s f0, f1, f2, dyn with frm = 5 (0x0020f053)
//   7: fcvt.w.s a0, f1, dyn with frm = 7 (0xc000f553)
#include "conformance.h"
#include "fp.h"

TEST_MAIN fp_status
    la a1, fp_scratch
    CHECK_FS 8, FS_OFF
    EXPECT 1, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, m_flw_off, 0x0005a087, RESUME_AT, 1f
m_flw_off:
    flw f1, 0(a1)
1:
    EXPECT 2, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, m_fflags_off, 0x00102573, RESUME_AT, 1f
m_fflags_off:
    csrr a0, fflags
1:
    EXPECT 3, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, m_frm_off, 0x0020d073, RESUME_AT, 1f
m_frm_off:
    csrwi frm, 1
1:
    // Initial -> Dirty by an FP CSR write; sstatus shows it
    FP_STATE FS_INITIAL
    CHECK_FS 9, FS_INITIAL
    csrwi fflags, 0
    CHECK_FS 10, FS_DIRTY
    CHECK_CSR_BITS 11, sstatus, (SSTATUS_FS | MSTATUS_SD), ((FS_DIRTY << SSTATUS_FS_SHIFT) | MSTATUS_SD)
    // Clean -> Dirty by a load into an f register
    FP_STATE FS_CLEAN
    CHECK_FS 12, FS_CLEAN
    flw f1, 0(a1)
    CHECK_FS 13, FS_DIRTY
    // fsd and fmv.x.d/fmv.x.w write no FP state: FS stays Clean
    FP_STATE FS_CLEAN
    fsd f1, 0(a1)
    fmv.x.w a0, f1
    CHECK_FS 14, FS_CLEAN
    // fflags accrued by instructions that write only an x register: FS stays Clean
    SET_FREG f1, BOXED, 0x7fc00000
    SET_FREG f2, BOXED, 0x3f800000
    csrwi fflags, 0
    FP_STATE FS_CLEAN
    fcvt.w.s a0, f1, rtz
    flt.s a0, f1, f2
    CHECK_FS 15, FS_CLEAN
    CHECK_FFLAGS 16, FFLAGS_NV
    // frm keeps all three bits; fcsr is frm:fflags
    csrwi frm, 7
    CHECK_CSR 17, frm, 7
    CHECK_CSR 18, fcsr, 0xe0
    csrwi frm, 0
    // reserved static rounding modes
    EXPECT 4, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, m_rm5, 0x0020d053, RESUME_AT, 1f
m_rm5:
    .word 0x0020d053        // fadd.s f0, f1, f2, rm = 5
1:
    EXPECT 5, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, m_rm6, 0x0020e053, RESUME_AT, 1f
m_rm6:
    .word 0x0020e053        // fadd.s f0, f1, f2, rm = 6
1:
    // dyn with an invalid frm; the destination is not written
    SET_FREG f0, BOXED, 0x40400000
    csrwi frm, 5
    EXPECT 6, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, m_dyn5, 0x0020f053, RESUME_AT, 1f
m_dyn5:
    fadd.s f0, f1, f2, dyn
1:
    CHECK_FREG 19, f0, BOXED, 0x40400000
    csrwi frm, 7
    li a0, 0x55
    EXPECT 7, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, m_dyn7, 0xc000f553, RESUME_AT, 1f
m_dyn7:
    fcvt.w.s a0, f1, dyn
1:
    CHECK_REG 20, a0, 0x55
    // dyn with a valid frm rounds by it: 1.0 + 2^-24 (RUP) = 1.0 + 2^-23
    csrwi frm, 3
    SET_FREG f1, BOXED, 0x3f800000
    SET_FREG f2, BOXED, 0x33800000
    fadd.s f0, f1, f2, dyn
    CHECK_FREG 21, f0, BOXED, 0x3f800001
    CHECK_FFLAGS 22, FFLAGS_NX
    fadd.s f0, f1, f2, rne
    CHECK_FREG 23, f0, BOXED, 0x3f800000
    CHECK_FFLAGS 24, FFLAGS_NX
    TEST_PASS
    FP_SCRATCH
