// fp_minmax.S: fmin/fmax as IEEE 754-2019 minimumNumber/maximumNumber (unprivileged
// spec 11.6, F and D version 2.2), as QEMU 7.2 does them.
//
// A NaN operand, quiet or signalling, gives the other operand; two NaNs give the
// canonical NaN; a signalling NaN operand sets NV (and nothing else does); -0 is
// below +0. Unicorn's QEMU 5.0 FPU gives the canonical NaN for fmax.s(sNaN, 1.0)
// (IEEE 754-2008 maxNum), which riscv-tests' rv*uf/ud fmin test 20 catches.
// Every single-precision result is NaN-boxed. fmin/fmax write an f register, so FS
// goes from Initial to Dirty and SD follows.
//
// Expected traps (taken in M from M):
//   1: illegal instruction: fmax.s with mstatus.FS Off, tval = its bits 0x28209053
#include "conformance.h"
#include "fp.h"

TEST_MAIN fp_minmax
    EXPECT 1, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, m_fmax_off, 0x28209053, RESUME_AT, 1f
m_fmax_off:
    fmax.s f0, f1, f2
1:
    FP_STATE FS_DIRTY
    csrwi fflags, 0
    // fmax.s(sNaN, 1.0) = 1.0, NV
    SET_FREG f1, BOXED, 0x7f800001
    SET_FREG f2, BOXED, 0x3f800000
    FP_STATE FS_INITIAL
    fmax.s f0, f1, f2
    CHECK_FS 2, FS_DIRTY
    CHECK_FREG 3, f0, BOXED, 0x3f800000
    CHECK_FFLAGS 4, FFLAGS_NV
    // fmin.s(1.0, sNaN) = 1.0, NV
    fmin.s f0, f2, f1
    CHECK_FREG 5, f0, BOXED, 0x3f800000
    CHECK_FFLAGS 6, FFLAGS_NV
    // fmax.s(qNaN, -1.0) = -1.0, no flag
    SET_FREG f1, BOXED, 0x7fc00000
    SET_FREG f2, BOXED, 0xbf800000
    fmax.s f0, f1, f2
    CHECK_FREG 7, f0, BOXED, 0xbf800000
    CHECK_FFLAGS 8, 0
    // fmin.s(sNaN, qNaN) = the canonical NaN, NV
    SET_FREG f2, BOXED, 0xffa00000
    fmin.s f0, f2, f1
    CHECK_FREG 9, f0, BOXED, CANON_S
    CHECK_FFLAGS 10, FFLAGS_NV
    // fmin.s(+0, -0) = -0 and fmax.s(-0, +0) = +0
    SET_FREG f1, BOXED, 0x00000000
    SET_FREG f2, BOXED, 0x80000000
    fmin.s f0, f1, f2
    CHECK_FREG 11, f0, BOXED, 0x80000000
    fmax.s f0, f2, f1
    CHECK_FREG 12, f0, BOXED, 0x00000000
    CHECK_FFLAGS 13, 0
    // fmax.d(sNaN, 1.0) = 1.0, NV; fmin.d(-1.0, sNaN) = -1.0, NV
    SET_FREG f1, 0x7ff00000, 0x00000001
    SET_FREG f2, 0x3ff00000, 0x00000000
    fmax.d f0, f1, f2
    CHECK_FREG 14, f0, 0x3ff00000, 0
    CHECK_FFLAGS 15, FFLAGS_NV
    SET_FREG f2, 0xbff00000, 0x00000000
    fmin.d f0, f2, f1
    CHECK_FREG 16, f0, 0xbff00000, 0
    CHECK_FFLAGS 17, FFLAGS_NV
    // fmax.d(qNaN with a payload, qNaN) = the canonical NaN, no flag
    SET_FREG f1, 0xfff80000, 0x00012345
    SET_FREG f2, 0x7ff80000, 0x00000001
    fmax.d f0, f1, f2
    CHECK_FREG 18, f0, CANON_D_HI, 0
    CHECK_FFLAGS 19, 0
    // fmin.d(-0, +0) = -0
    SET_FREG f1, 0x80000000, 0
    SET_FREG f2, 0, 0
    fmin.d f0, f2, f1
    CHECK_FREG 20, f0, 0x80000000, 0
    TEST_PASS
    FP_SCRATCH
