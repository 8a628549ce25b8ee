// bitmanip.S: Zba, Zbb, Zbc and Zbs, which QEMU 7.2's default CPU has, and their
// neighbours it leaves out.
//
// Every instruction of the four extensions (RV32's and RV64's forms) runs on the
// operands A (the sign bit and bit 31 set, so the W forms see a negative word),
// B = 0x25 (a shift amount above 31) and C = -5, the unary ones on A, 0 and C (cpop on -1 too), the
// immediate ones with shift amounts 0, 13 and XLEN - 1; each result is checked (checks
// 100 on, XV(RV64's, RV32's); the values are QEMU 7.2's). Writing x0 discards the
// result (check 99). Unicorn's decoder has none of them: privlab does them in the core
// (harness/native/bitmanip.c). Two run from U (checks 245, 246).
//   RV64: A = 0x80000000f00f0123, C = 0xfffffffffffffffb
//   RV32: A = 0xf00f0123, C = 0xfffffffb
//
// What QEMU 7.2's default CPU leaves out stays an illegal instruction, taken in M with
// tval = the instruction bits (Zbkb, Zbkx, and encodings between these that are no
// instruction), each resumed after it. Expected traps:
//   1: M  pack a0, a1, a2 (Zbkb) -> tval 0x08c5c533
//   2: M  packh a0, a1, a2 (Zbkb) -> tval 0x08c5f533
//   3: M  brev8 a0, a1 (Zbkb) -> tval 0x6875d513
//   4: M  xperm8 a0, a1, a2 (Zbkx) -> tval 0x28c5c533
//   5: M  xperm4 a0, a1, a2 (Zbkx) -> tval 0x28c5a533
//   6: M  clz's encoding with rs2 = 3 (no such instruction) -> tval 0x60359513
// RV64 only:
//   7: M  packw a0, a1, a2 (Zbkb) -> tval 0x08c5c53b
//   8: M  roriw a0, a1 with instruction bit 25 set -> tval 0x6205d51b
//   9: M  rev8's funct6 with shamt 32 (no such instruction) -> tval 0x6a05d513
// RV32 only:
//  10: M  zip a0, a1 (Zbkb, RV32) -> tval 0x08f59513
//  11: M  unzip a0, a1 (Zbkb, RV32) -> tval 0x08f5d513
//  12: M  rori a0, a1, 32 (shamt[5] set on RV32) -> tval 0x6205d513
//  13: M  bseti a0, a1, 32 (shamt[5] set on RV32) -> tval 0x2a059513
//  14: M  add.uw a0, a1, a2 (OP-32 does not exist on RV32) -> tval 0x08c5853b
//  15: U  ecall back to M (cause 8)
#include "conformance.h"

#if __riscv_xlen == 64
#define XV(rv64, rv32) rv64
#define A 0x80000000f00f0123
#else
#define XV(rv64, rv32) rv32
#define A 0xf00f0123
#endif

    .option arch, +zba, +zbb, +zbc, +zbs

TEST_MAIN bitmanip
    li s1, A
    li s2, 0x25
    li s3, -5
    li s4, -1
    sh1add a0, s1, s2
    CHECK_REG 100, a0, XV(0x1e01e026b, 0xe01e026b)
    sh1add a0, s1, s3
    CHECK_REG 101, a0, XV(0x1e01e0241, 0xe01e0241)
    sh1add a0, s3, s1
    CHECK_REG 102, a0, XV(0x80000000f00f0119, 0xf00f0119)
    sh2add a0, s1, s2
    CHECK_REG 103, a0, XV(0x3c03c04b1, 0xc03c04b1)
    sh2add a0, s1, s3
    CHECK_REG 104, a0, XV(0x3c03c0487, 0xc03c0487)
    sh2add a0, s3, s1
    CHECK_REG 105, a0, XV(0x80000000f00f010f, 0xf00f010f)
    sh3add a0, s1, s2
    CHECK_REG 106, a0, XV(0x78078093d, 0x8078093d)
    sh3add a0, s1, s3
    CHECK_REG 107, a0, XV(0x780780913, 0x80780913)
    sh3add a0, s3, s1
    CHECK_REG 108, a0, XV(0x80000000f00f00fb, 0xf00f00fb)
    andn a0, s1, s2
    CHECK_REG 109, a0, XV(0x80000000f00f0102, 0xf00f0102)
    andn a0, s1, s3
    CHECK_REG 110, a0, XV(0x0, 0x0)
    andn a0, s3, s1
    CHECK_REG 111, a0, XV(0x7fffffff0ff0fed8, 0xff0fed8)
    orn a0, s1, s2
    CHECK_REG 112, a0, XV(0xfffffffffffffffb, 0xfffffffb)
    orn a0, s1, s3
    CHECK_REG 113, a0, XV(0x80000000f00f0127, 0xf00f0127)
    orn a0, s3, s1
    CHECK_REG 114, a0, XV(0xffffffffffffffff, 0xffffffff)
    xnor a0, s1, s2
    CHECK_REG 115, a0, XV(0x7fffffff0ff0fef9, 0xff0fef9)
    xnor a0, s1, s3
    CHECK_REG 116, a0, XV(0x80000000f00f0127, 0xf00f0127)
    xnor a0, s3, s1
    CHECK_REG 117, a0, XV(0x80000000f00f0127, 0xf00f0127)
    max a0, s1, s2
    CHECK_REG 118, a0, XV(0x25, 0x25)
    max a0, s1, s3
    CHECK_REG 119, a0, XV(0xfffffffffffffffb, 0xfffffffb)
    max a0, s3, s1
    CHECK_REG 120, a0, XV(0xfffffffffffffffb, 0xfffffffb)
    maxu a0, s1, s2
    CHECK_REG 121, a0, XV(0x80000000f00f0123, 0xf00f0123)
    maxu a0, s1, s3
    CHECK_REG 122, a0, XV(0xfffffffffffffffb, 0xfffffffb)
    maxu a0, s3, s1
    CHECK_REG 123, a0, XV(0xfffffffffffffffb, 0xfffffffb)
    min a0, s1, s2
    CHECK_REG 124, a0, XV(0x80000000f00f0123, 0xf00f0123)
    min a0, s1, s3
    CHECK_REG 125, a0, XV(0x80000000f00f0123, 0xf00f0123)
    min a0, s3, s1
    CHECK_REG 126, a0, XV(0x80000000f00f0123, 0xf00f0123)
    minu a0, s1, s2
    CHECK_REG 127, a0, XV(0x25, 0x25)
    minu a0, s1, s3
    CHECK_REG 128, a0, XV(0x80000000f00f0123, 0xf00f0123)
    minu a0, s3, s1
    CHECK_REG 129, a0, XV(0x80000000f00f0123, 0xf00f0123)
    rol a0, s1, s2
    CHECK_REG 130, a0, XV(0x1e024700000001e, 0x1e0247e)
    rol a0, s1, s3
    CHECK_REG 131, a0, XV(0x1c00000007807809, 0x1f807809)
    rol a0, s3, s1
    CHECK_REG 132, a0, XV(0xffffffdfffffffff, 0xffffffdf)
    ror a0, s1, s2
    CHECK_REG 133, a0, XV(0x78078091c000000, 0x1f807809)
    ror a0, s1, s3
    CHECK_REG 134, a0, XV(0x1e01e02470, 0x1e0247e)
    ror a0, s3, s1
    CHECK_REG 135, a0, XV(0xffffffff7fffffff, 0x7fffffff)
    clmul a0, s1, s2
    CHECK_REG 136, a0, XV(0x8000001d31d321cf, 0x31d321cf)
    clmul a0, s1, s3
    CHECK_REG 137, a0, XV(0x800000039039046d, 0x9039046d)
    clmul a0, s3, s1
    CHECK_REG 138, a0, XV(0x800000039039046d, 0x9039046d)
    clmulh a0, s1, s2
    CHECK_REG 139, a0, XV(0x12, 0x1d)
    clmulh a0, s1, s3
    CHECK_REG 140, a0, XV(0x7fffffffaffaff1c, 0x500500e2)
    clmulh a0, s3, s1
    CHECK_REG 141, a0, XV(0x7fffffffaffaff1c, 0x500500e2)
    clmulr a0, s1, s2
    CHECK_REG 142, a0, XV(0x25, 0x3a)
    clmulr a0, s1, s3
    CHECK_REG 143, a0, XV(0xffffffff5ff5fe39, 0xa00a01c5)
    clmulr a0, s3, s1
    CHECK_REG 144, a0, XV(0xffffffff5ff5fe39, 0xa00a01c5)
    bclr a0, s1, s2
    CHECK_REG 145, a0, XV(0x80000000f00f0123, 0xf00f0103)
    bclr a0, s1, s3
    CHECK_REG 146, a0, XV(0x80000000f00f0123, 0xf00f0123)
    bclr a0, s3, s1
    CHECK_REG 147, a0, XV(0xfffffff7fffffffb, 0xfffffff3)
    bext a0, s1, s2
    CHECK_REG 148, a0, XV(0x0, 0x1)
    bext a0, s1, s3
    CHECK_REG 149, a0, XV(0x0, 0x0)
    bext a0, s3, s1
    CHECK_REG 150, a0, XV(0x1, 0x1)
    binv a0, s1, s2
    CHECK_REG 151, a0, XV(0x80000020f00f0123, 0xf00f0103)
    binv a0, s1, s3
    CHECK_REG 152, a0, XV(0x88000000f00f0123, 0xf80f0123)
    binv a0, s3, s1
    CHECK_REG 153, a0, XV(0xfffffff7fffffffb, 0xfffffff3)
    bset a0, s1, s2
    CHECK_REG 154, a0, XV(0x80000020f00f0123, 0xf00f0123)
    bset a0, s1, s3
    CHECK_REG 155, a0, XV(0x88000000f00f0123, 0xf80f0123)
    bset a0, s3, s1
    CHECK_REG 156, a0, XV(0xfffffffffffffffb, 0xfffffffb)
    clz a0, s1
    CHECK_REG 175, a0, XV(0x0, 0x0)
    clz a0, zero
    CHECK_REG 176, a0, XV(0x40, 0x20)
    clz a0, s3
    CHECK_REG 177, a0, XV(0x0, 0x0)
    ctz a0, s1
    CHECK_REG 178, a0, XV(0x0, 0x0)
    ctz a0, zero
    CHECK_REG 179, a0, XV(0x40, 0x20)
    ctz a0, s3
    CHECK_REG 180, a0, XV(0x0, 0x0)
    cpop a0, s1
    CHECK_REG 181, a0, XV(0xd, 0xc)
    cpop a0, zero
    CHECK_REG 182, a0, XV(0x0, 0x0)
    cpop a0, s4
    CHECK_REG 183, a0, XV(0x40, 0x20)
    cpop a0, s3
    CHECK_REG 184, a0, XV(0x3f, 0x1f)
    sext.b a0, s1
    CHECK_REG 185, a0, XV(0x23, 0x23)
    sext.b a0, zero
    CHECK_REG 186, a0, XV(0x0, 0x0)
    sext.b a0, s3
    CHECK_REG 187, a0, XV(0xfffffffffffffffb, 0xfffffffb)
    sext.h a0, s1
    CHECK_REG 188, a0, XV(0x123, 0x123)
    sext.h a0, zero
    CHECK_REG 189, a0, XV(0x0, 0x0)
    sext.h a0, s3
    CHECK_REG 190, a0, XV(0xfffffffffffffffb, 0xfffffffb)
    zext.h a0, s1
    CHECK_REG 191, a0, XV(0x123, 0x123)
    zext.h a0, zero
    CHECK_REG 192, a0, XV(0x0, 0x0)
    zext.h a0, s3
    CHECK_REG 193, a0, XV(0xfffb, 0xfffb)
    orc.b a0, s1
    CHECK_REG 194, a0, XV(0xff000000ffffffff, 0xffffffff)
    orc.b a0, zero
    CHECK_REG 195, a0, XV(0x0, 0x0)
    orc.b a0, s3
    CHECK_REG 196, a0, XV(0xffffffffffffffff, 0xffffffff)
    rev8 a0, s1
    CHECK_REG 197, a0, XV(0x23010ff000000080, 0x23010ff0)
    rev8 a0, zero
    CHECK_REG 198, a0, XV(0x0, 0x0)
    rev8 a0, s3
    CHECK_REG 199, a0, XV(0xfbffffffffffffff, 0xfbffffff)
    rori a0, s1, 0
    CHECK_REG 210, a0, XV(0x80000000f00f0123, 0xf00f0123)
    rori a0, s1, 13
    CHECK_REG 211, a0, XV(0x91c000000078078, 0x91f8078)
#if __riscv_xlen == 32
    rori a0, s1, 31
    CHECK_REG 213, a0, 0xe01e0247
#endif
    bclri a0, s1, 0
    CHECK_REG 214, a0, XV(0x80000000f00f0122, 0xf00f0122)
    bclri a0, s1, 13
    CHECK_REG 215, a0, XV(0x80000000f00f0123, 0xf00f0123)
#if __riscv_xlen == 32
    bclri a0, s1, 31
    CHECK_REG 217, a0, 0x700f0123
#endif
    bexti a0, s1, 0
    CHECK_REG 218, a0, XV(0x1, 0x1)
    bexti a0, s1, 13
    CHECK_REG 219, a0, XV(0x0, 0x0)
#if __riscv_xlen == 32
    bexti a0, s1, 31
    CHECK_REG 221, a0, 0x1
#endif
    binvi a0, s1, 0
    CHECK_REG 222, a0, XV(0x80000000f00f0122, 0xf00f0122)
    binvi a0, s1, 13
    CHECK_REG 223, a0, XV(0x80000000f00f2123, 0xf00f2123)
#if __riscv_xlen == 32
    binvi a0, s1, 31
    CHECK_REG 225, a0, 0x700f0123
#endif
    bseti a0, s1, 0
    CHECK_REG 226, a0, XV(0x80000000f00f0123, 0xf00f0123)
    bseti a0, s1, 13
    CHECK_REG 227, a0, XV(0x80000000f00f2123, 0xf00f2123)
#if __riscv_xlen == 32
    bseti a0, s1, 31
    CHECK_REG 229, a0, 0xf00f0123
#endif
#if __riscv_xlen == 64
    add.uw a0, s1, s2
    CHECK_REG 157, a0, 0xf00f0148
    add.uw a0, s1, s3
    CHECK_REG 158, a0, 0xf00f011e
    add.uw a0, s3, s1
    CHECK_REG 159, a0, 0x80000001f00f011e
    sh1add.uw a0, s1, s2
    CHECK_REG 160, a0, 0x1e01e026b
    sh1add.uw a0, s1, s3
    CHECK_REG 161, a0, 0x1e01e0241
    sh1add.uw a0, s3, s1
    CHECK_REG 162, a0, 0x80000002f00f0119
    sh2add.uw a0, s1, s2
    CHECK_REG 163, a0, 0x3c03c04b1
    sh2add.uw a0, s1, s3
    CHECK_REG 164, a0, 0x3c03c0487
    sh2add.uw a0, s3, s1
    CHECK_REG 165, a0, 0x80000004f00f010f
    sh3add.uw a0, s1, s2
    CHECK_REG 166, a0, 0x78078093d
    sh3add.uw a0, s1, s3
    CHECK_REG 167, a0, 0x780780913
    sh3add.uw a0, s3, s1
    CHECK_REG 168, a0, 0x80000008f00f00fb
    rolw a0, s1, s2
    CHECK_REG 169, a0, 0x1e0247e
    rolw a0, s1, s3
    CHECK_REG 170, a0, 0x1f807809
    rolw a0, s3, s1
    CHECK_REG 171, a0, 0xffffffffffffffdf
    rorw a0, s1, s2
    CHECK_REG 172, a0, 0x1f807809
    rorw a0, s1, s3
    CHECK_REG 173, a0, 0x1e0247e
    rorw a0, s3, s1
    CHECK_REG 174, a0, 0x7fffffff
    clzw a0, s1
    CHECK_REG 200, a0, 0x0
    clzw a0, zero
    CHECK_REG 201, a0, 0x20
    clzw a0, s3
    CHECK_REG 202, a0, 0x0
    ctzw a0, s1
    CHECK_REG 203, a0, 0x0
    ctzw a0, zero
    CHECK_REG 204, a0, 0x20
    ctzw a0, s3
    CHECK_REG 205, a0, 0x0
    cpopw a0, s1
    CHECK_REG 206, a0, 0xc
    cpopw a0, zero
    CHECK_REG 207, a0, 0x0
    cpopw a0, s4
    CHECK_REG 208, a0, 0x20
    cpopw a0, s3
    CHECK_REG 209, a0, 0x1f
    rori a0, s1, 63
    CHECK_REG 212, a0, 0x1e01e0247
    bclri a0, s1, 63
    CHECK_REG 216, a0, 0xf00f0123
    bexti a0, s1, 63
    CHECK_REG 220, a0, 0x1
    binvi a0, s1, 63
    CHECK_REG 224, a0, 0xf00f0123
    bseti a0, s1, 63
    CHECK_REG 228, a0, 0x80000000f00f0123
    slli.uw a0, s1, 0
    CHECK_REG 230, a0, 0xf00f0123
    slli.uw a0, s1, 13
    CHECK_REG 231, a0, 0x1e01e0246000
    slli.uw a0, s1, 31
    CHECK_REG 232, a0, 0x7807809180000000
    roriw a0, s1, 0
    CHECK_REG 233, a0, 0xfffffffff00f0123
    roriw a0, s1, 13
    CHECK_REG 234, a0, 0x91f8078
    roriw a0, s1, 31
    CHECK_REG 235, a0, 0xffffffffe01e0247
#endif
    clz zero, s1
    CHECK_REG 99, zero, 0
    EXPECT_FAULT 1, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x08c5c533, .word 0x08c5c533
    EXPECT_FAULT 2, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x08c5f533, .word 0x08c5f533
    EXPECT_FAULT 3, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x6875d513, .word 0x6875d513
    EXPECT_FAULT 4, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x28c5c533, .word 0x28c5c533
    EXPECT_FAULT 5, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x28c5a533, .word 0x28c5a533
    EXPECT_FAULT 6, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x60359513, .word 0x60359513
#if __riscv_xlen == 64
    EXPECT_FAULT 7, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x08c5c53b, .word 0x08c5c53b
    EXPECT_FAULT 8, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x6205d51b, .word 0x6205d51b
    EXPECT_FAULT 9, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x6a05d513, .word 0x6a05d513
#else
    EXPECT_FAULT 10, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x08f59513, .word 0x08f59513
    EXPECT_FAULT 11, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x08f5d513, .word 0x08f5d513
    EXPECT_FAULT 12, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x6205d513, .word 0x6205d513
    EXPECT_FAULT 13, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x2a059513, .word 0x2a059513
    EXPECT_FAULT 14, PRV_M, PRV_M, CAUSE_ILLEGAL_INSTRUCTION, 0x08c5853b, .word 0x08c5853b
#endif
    MRET_TO PRV_U, in_u
in_u:
    sh3add a0, s3, s1
    CHECK_REG 245, a0, XV(0x80000000f00f00fb, 0xf00f00fb)
    cpop a0, s1
    CHECK_REG 246, a0, XV(13, 12)
    ECALL_TO_M 15, PRV_U
    TEST_PASS
