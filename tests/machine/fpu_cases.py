"""Five F/D results where Unicorn's own FPU (QEMU 5.0's) and QEMU 7.2 differ, as a
body for machine/asm.py's build_asm: shared by the test that shows Unicorn's answers
and the tests that check the core gives QEMU 7.2's."""

from __future__ import annotations

# a0-a4 after: fmax.s(sNaN, 1.0); fsgnj.s(0x7ffffffe12345678, +0); fmv.w.x(0x3f800000);
# fadd.s(1.0, 1.0); fflags after fmadd.s(inf, 0, qNaN). Each f result read whole.
BODY = """
    .option arch, +d
    li t0, 0x6000
    csrs mstatus, t0
    la t1, operands
    fld f1, 0(t1)
    fld f2, 8(t1)
    fmax.s f0, f1, f2
    fmv.x.d a0, f0
    fld f3, 16(t1)
    fld f4, 24(t1)
    fsgnj.s f0, f3, f4
    fmv.x.d a1, f0
    li t2, 0x3f800000
    fmv.w.x f0, t2
    fmv.x.d a2, f0
    fadd.s f0, f2, f2
    fmv.x.d a3, f0
    fld f5, 32(t1)
    fld f6, 40(t1)
    csrwi fflags, 0
    fmadd.s f0, f5, f4, f6
    csrr a4, fflags
    ecall
    .data
    .balign 8
operands:
    .dword 0xffffffff7f800001, 0xffffffff3f800000, 0x7ffffffe12345678
    .dword 0xffffffff00000000, 0xffffffff7f800000, 0xffffffff7fc00000
"""

QEMU_7_2 = [0xFFFFFFFF3F800000, 0xFFFFFFFF7FC00000, 0xFFFFFFFF3F800000, 0xFFFFFFFF40000000,
            0x10]
"""a0-a4 on QEMU 7.2 and by the spec: 1.0 (minimumNumber), the canonical NaN (an
unboxed operand), 1.0 boxed, 2.0 boxed, NV (inf x 0 is invalid whatever the addend)."""
