// fp.h: helpers for the floating-point conformance programs (fp_*.S).
//
// The conformance runtime is built for IMAC only; a program that includes this file
// may use F and D instructions (`.option arch`). mstatus.FS is Off on entry
// (lib/entry.S clears mstatus): FP_STATE sets it.
#ifndef CONFORMANCE_FP_H
#define CONFORMANCE_FP_H

.option arch, +d

#if __riscv_xlen == 64
#define LWU lwu
#else
#define LWU lw
#endif

// mstatus.FS encodings (privileged spec 3.1.6.6).
#define FS_OFF     0
#define FS_INITIAL 1
#define FS_CLEAN   2
#define FS_DIRTY   3

// fflags bits (unprivileged spec 11.2).
#define FFLAGS_NX 0x01
#define FFLAGS_UF 0x02
#define FFLAGS_OF 0x04
#define FFLAGS_DZ 0x08
#define FFLAGS_NV 0x10

// Canonical NaNs (spec 11.3, 12.3) and the upper word of a NaN-boxed single (12.2).
#define CANON_S 0x7fc00000
#define CANON_D_HI 0x7ff80000
#define BOXED 0xffffffff

// mstatus.FS := fs (clobbers t5, t6).
.macro FP_STATE fs
    li t5, MSTATUS_FS
    csrc mstatus, t5
    li t5, (\fs << MSTATUS_FS_SHIFT)
    csrs mstatus, t5
.endm

// f register `freg` := hi:lo, its whole 64 bits (clobbers t5, t6; fld: FS Dirty).
.macro SET_FREG freg, hi, lo
    la t5, fp_scratch
    li t6, \lo
    sw t6, 0(t5)
    li t6, \hi
    sw t6, 4(t5)
    fld \freg, 0(t5)
.endm

// The whole 64 bits of f register `freg` must be hi:lo (fsd changes no FP state).
.macro CHECK_FREG check, freg, hi, lo
    la t5, fp_scratch
    fsd \freg, 0(t5)
    LWU t5, 4(t5)
    li t6, \hi
    CHECK_T5_T6 \check
    la t5, fp_scratch
    LWU t5, 0(t5)
    li t6, \lo
    CHECK_T5_T6 \check
.endm

// fflags must be `value`; then cleared.
.macro CHECK_FFLAGS check, value
    csrr t5, fflags
    li t6, \value
    CHECK_T5_T6 \check
    csrwi fflags, 0
.endm

// mstatus.FS must be `fs`, and mstatus.SD set exactly when it is Dirty.
.macro CHECK_FS check, fs
    CHECK_CSR_BITS \check, mstatus, (MSTATUS_FS | MSTATUS_SD), \
        ((\fs << MSTATUS_FS_SHIFT) | (MSTATUS_SD * (\fs == FS_DIRTY)))
.endm

.macro FP_SCRATCH
    .pushsection .data.fp_scratch, "aw"
    .balign 8
fp_scratch:
    .dword 0
    .popsection
.endm

#endif
