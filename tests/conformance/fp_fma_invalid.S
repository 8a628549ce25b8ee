// fp_fma_invalid.S: infinity times zero in a fused multiply-add is invalid even when
// the addend is a quiet NaN (unprivileged spec 11.6), as QEMU 7.2 does it.
//
// fmadd, fmsub, fnmsub and fnmadd of (inf x 0) + qNaN give the canonical NaN and set
// NV. Unicorn's QEMU 5.0 softfloat sets NV there only for a signalling NaN. Without
// the infinity-times-zero product a quiet NaN addend propagates silently (canonical
// NaN, no flag), and inf x 0 plus a number is invalid in both.
//
// Expected traps (taken in M from M):
//   1: illegal instruction: fmadd.s with mstatus.FS Off, tval = its bits 0x18208043
#include "conformance.h"
#include "fp.h"

TEST_MAIN fp_fma_invalid
    EXPECT 1, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, m_fmadd_off, 0x18208043, RESUME_AT, 1f
m_fmadd_off:
    fmadd.s f0, f1, f2, f3, rne
1:
    FP_STATE FS_DIRTY
    csrwi fflags, 0
    // single: inf, 0, qNaN
    SET_FREG f1, BOXED, 0x7f800000
    SET_FREG f2, BOXED, 0x00000000
    SET_FREG f3, BOXED, 0x7fc00000
    fmadd.s f0, f1, f2, f3
    CHECK_FREG 2, f0, BOXED, CANON_S
    CHECK_FFLAGS 3, FFLAGS_NV
    fnmsub.s f0, f2, f1, f3
    CHECK_FREG 4, f0, BOXED, CANON_S
    CHECK_FFLAGS 5, FFLAGS_NV
    // no inf x 0: 1.0 x 0 + qNaN is quiet
    SET_FREG f4, BOXED, 0x3f800000
    fmsub.s f0, f4, f2, f3
    CHECK_FREG 6, f0, BOXED, CANON_S
    CHECK_FFLAGS 7, 0
    // inf x 0 + 1.0: invalid
    fnmadd.s f0, f1, f2, f4
    CHECK_FREG 8, f0, BOXED, CANON_S
    CHECK_FFLAGS 9, FFLAGS_NV
    // double: -inf, 0, qNaN with a payload
    SET_FREG f1, 0xfff00000, 0
    SET_FREG f2, 0, 0
    SET_FREG f3, 0x7ff80000, 0x00000123
    fmadd.d f0, f2, f1, f3
    CHECK_FREG 10, f0, CANON_D_HI, 0
    CHECK_FFLAGS 11, FFLAGS_NV
    fmsub.d f0, f1, f2, f3
    CHECK_FREG 12, f0, CANON_D_HI, 0
    CHECK_FFLAGS 13, FFLAGS_NV
    fnmadd.d f0, f1, f2, f3
    CHECK_FREG 14, f0, CANON_D_HI, 0
    CHECK_FFLAGS 15, FFLAGS_NV
    SET_FREG f4, 0x3ff00000, 0
    fnmsub.d f0, f4, f2, f3
    CHECK_FREG 16, f0, CANON_D_HI, 0
    CHECK_FFLAGS 17, 0
    TEST_PASS
    FP_SCRATCH
