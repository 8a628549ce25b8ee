// fp_nanbox.S: NaN-boxing of single-precision values in the 64-bit f registers
// (unprivileged spec 12.2), as QEMU 7.2 does it.
//
// A single-precision operand whose upper 32 bits are not all ones is the canonical
// NaN 0x7fc00000; every instruction that writes a single-precision result to an f
// register sets the upper 32 bits. Unicorn's QEMU 5.0 FPU reads the low word of any
// operand, leaves the upper word of arithmetic results zero, and copies the source's
// upper word in fsgnj.s/fsgnjn.s/fsgnjx.s (fmv.s, fneg.s, fabs.s) and fmv.w.x
// (riscv-tests' rv64ud move test 40). Instructions that move bits without
// interpreting them do not check boxing: fsw stores, and fmv.x.w returns, the low
// word. The operand used throughout, 0x7ffffffe12345678, is the one riscv-tests uses.
//
// Expected traps (taken in M from M):
//   1: illegal instruction: fsgnj.s with mstatus.FS Off, tval = its bits 0x20208053
#include "conformance.h"
#include "fp.h"

#define UNBOXED_HI 0x7ffffffe
#define UNBOXED_LO 0x12345678

TEST_MAIN fp_nanbox
    EXPECT 1, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, m_fsgnj_off, 0x20208053, RESUME_AT, 1f
m_fsgnj_off:
    fsgnj.s f0, f1, f2
1:
    FP_STATE FS_DIRTY
    csrwi fflags, 0
    SET_FREG f1, UNBOXED_HI, UNBOXED_LO
    SET_FREG f2, BOXED, 0x00000000          // +0
    SET_FREG f3, BOXED, 0x3f800000          // 1.0
    // sign injection reads the canonical NaN; the result is boxed; FS becomes Dirty
    FP_STATE FS_INITIAL
    fsgnj.s f0, f1, f2
    CHECK_FS 2, FS_DIRTY
    CHECK_FREG 3, f0, BOXED, CANON_S
    fsgnjn.s f0, f1, f2
    CHECK_FREG 4, f0, BOXED, 0xffc00000
    fsgnjx.s f0, f1, f1
    CHECK_FREG 5, f0, BOXED, CANON_S
    fmv.s f0, f1
    CHECK_FREG 6, f0, BOXED, CANON_S
    fneg.s f0, f1
    CHECK_FREG 7, f0, BOXED, 0xffc00000
    fabs.s f0, f1
    CHECK_FREG 8, f0, BOXED, CANON_S
    // a boxed operand keeps its value: fneg.s of 1.0
    fneg.s f0, f3
    CHECK_FREG 9, f0, BOXED, 0xbf800000
    CHECK_FFLAGS 10, 0
    // fmv.w.x boxes the low word of the x register
    li a0, 0x3f800000
    FP_STATE FS_CLEAN
    fmv.w.x f0, a0
    CHECK_FS 11, FS_DIRTY
    CHECK_FREG 12, f0, BOXED, 0x3f800000
    // arithmetic: boxed results, and an unboxed operand is the canonical (quiet) NaN
    fadd.s f0, f3, f3
    CHECK_FREG 13, f0, BOXED, 0x40000000
    fadd.s f0, f1, f3
    CHECK_FREG 14, f0, BOXED, CANON_S
    CHECK_FFLAGS 15, 0
    fmadd.s f0, f3, f3, f1
    CHECK_FREG 16, f0, BOXED, CANON_S
    fsqrt.s f0, f1
    CHECK_FREG 17, f0, BOXED, CANON_S
    // comparisons: feq is quiet, flt signals NV on any NaN
    feq.s a0, f1, f1
    CHECK_REG 18, a0, 0
    CHECK_FFLAGS 19, 0
    flt.s a0, f1, f3
    CHECK_REG 20, a0, 0
    CHECK_FFLAGS 21, FFLAGS_NV
    // fclass: quiet NaN (bit 9)
    fclass.s a0, f1
    CHECK_REG 22, a0, 0x200
    // conversions
    fcvt.w.s a0, f1, rtz
    CHECK_REG 23, a0, 0x7fffffff
    CHECK_FFLAGS 24, FFLAGS_NV
    fcvt.d.s f0, f1
    CHECK_FREG 25, f0, CANON_D_HI, 0
    li a0, 3
    fcvt.s.w f0, a0
    CHECK_FREG 26, f0, BOXED, 0x40400000
    SET_FREG f4, 0x3ff00000, 0              // 1.0 as a double
    fcvt.s.d f0, f4
    CHECK_FREG 27, f0, BOXED, 0x3f800000
    fmin.s f0, f1, f3                       // the canonical NaN is quiet: the other
    CHECK_FREG 28, f0, BOXED, 0x3f800000
    CHECK_FFLAGS 29, 0
    // moves that do not interpret the value use the low word as it is
    fmv.x.w a0, f1
    li t0, UNBOXED_LO
    CHECK_REG 30, a0, UNBOXED_LO
    la a1, fp_word
    fsw f1, 0(a1)
    LWU a0, 0(a1)
    CHECK_REG 31, a0, UNBOXED_LO
    // flw boxes what it loads
    flw f0, 0(a1)
    CHECK_FREG 32, f0, BOXED, UNBOXED_LO
    TEST_PASS
    FP_SCRATCH
    .pushsection .data.fp_word, "aw"
    .balign 4
fp_word:
    .word 0
    .popsection
