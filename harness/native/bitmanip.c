/*
 * bitmanip.c: the bit-manipulation extensions QEMU 7.2's default CPU has and Unicorn's
 * QEMU 5.0 decoder does not: Zba (address generation), Zbb (basic bit manipulation),
 * Zbc (carry-less multiply) and Zbs (single-bit instructions), RV32 and RV64, as the
 * RISC-V Bit-Manipulation ISA-extensions 1.0.0 define them.
 *
 * Unicorn translates each of them as an illegal instruction, so it raises cause 2 with
 * the instruction not run. hooks.c on_intr asks here first: an instruction of these
 * four extensions is done (rd written, retired, pc moved past it), as if Unicorn had
 * run it; anything else stays illegal. The scalar-crypto bit-manipulation subsets
 * (Zbkb's pack, packh, brev8, zip and unzip; Zbkc; Zbkx's xperm) share encodings with
 * Zbb and Zbc but are off in QEMU 7.2's default CPU, so they are left illegal, as there.
 * Each of these instructions costs an exit from translated code, like an emulated CSR
 * access: kernels built for rv64gc, as the courses' are, never meet one.
 */
#include "hart.h"

#define OP_IMM 0x13
#define OP_IMM_32 0x1b
#define OP 0x33
#define OP_32 0x3b

/* funct7 (bits 31:25) of the register-register forms. */
#define F7_ZBA_SHADD 0x10
#define F7_ZBB_NEG 0x20      /* andn orn xnor */
#define F7_MINMAX_CLMUL 0x05
#define F7_ROT 0x30
#define F7_BCLR_BEXT 0x24
#define F7_BINV 0x34
#define F7_BSET 0x14
#define F7_ZEXT_ADDUW 0x04   /* zext.h (rs2 = 0); add.uw on OP-32 */

/* funct6 (bits 31:26) of RV64's immediate shifts, whose shamt is 6 bits; on RV32 the
 * same forms have a 5-bit shamt and funct7 = funct6 << 1. */
#define F6_BCLRI_BEXTI 0x12
#define F6_BINVI 0x1a
#define F6_BSETI 0x0a
#define F6_RORI 0x18
#define F6_SLLI_UW 0x02

/* Whole 12-bit immediates of the unary forms (rs2 field and funct7 together). */
#define IMM_CLZ 0x600
#define IMM_CTZ 0x601
#define IMM_CPOP 0x602
#define IMM_SEXT_B 0x604
#define IMM_SEXT_H 0x605
#define IMM_ORC_B 0x287
#define IMM_REV8_RV32 0x698
#define IMM_REV8_RV64 0x6b8

static uint64_t ones(unsigned n)
{
    return n >= 64 ? ~0ull : (1ull << n) - 1;
}

static int64_t sext_from(uint64_t v, unsigned n)
{
    uint64_t m = 1ull << (n - 1);
    v &= ones(n);
    return (int64_t)((v ^ m) - m);
}

static uint64_t rotl(uint64_t v, unsigned sh, unsigned n)
{
    v &= ones(n);
    sh &= n - 1;
    return sh ? ((v << sh) | (v >> (n - sh))) & ones(n) : v;
}

static unsigned clz_n(uint64_t v, unsigned n)
{
    v &= ones(n);
    return v ? (unsigned)__builtin_clzll(v) - (64 - n) : n;
}

static unsigned ctz_n(uint64_t v, unsigned n)
{
    v &= ones(n);
    return v ? (unsigned)__builtin_ctzll(v) : n;
}

/* The three halves of a carry-less product (Zbc): the low XLEN bits (clmul), the high
 * XLEN bits (clmulh), and bits 2*XLEN-2 down to XLEN-1 (clmulr). */
static uint64_t clmul_part(uint64_t a, uint64_t b, unsigned n, unsigned funct3)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < n; i++) {
        if (!((b >> i) & 1))
            continue;
        if (funct3 == 1)
            x ^= a << i;
        else if (funct3 == 3)
            x ^= i ? a >> (n - i) : 0;
        else
            x ^= a >> (n - i - 1);
    }
    return x;
}

static uint64_t orc_b(uint64_t v, unsigned n)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < n; i += 8)
        if ((v >> i) & 0xff)
            x |= 0xffull << i;
    return x;
}

static uint64_t rev8(uint64_t v, unsigned n)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < n; i += 8)
        x |= ((v >> i) & 0xff) << (n - 8 - i);
    return x;
}

/* sh1add, sh2add, sh3add (funct3 2, 4, 6) of `a` and `b`: on OP, and on OP-32 with `a`
 * zero-extended from 32 bits (the .uw forms). */
static bool shadd(unsigned f3, uint64_t a, uint64_t b, uint64_t *rd)
{
    if (f3 != 2 && f3 != 4 && f3 != 6)
        return false;
    *rd = (a << (f3 / 2)) + b;
    return true;
}

/* rol (funct3 1) and ror (5) of the low `n` bits of `a` by `b` mod n. */
static bool rotate(unsigned f3, uint64_t a, uint64_t b, unsigned n, uint64_t *rd)
{
    if (f3 != 1 && f3 != 5)
        return false;
    unsigned sh = (unsigned)(b & (n - 1));
    *rd = rotl(a, f3 == 1 ? sh : n - sh, n);
    return true;
}

/* OP: the register-register forms of all four extensions. */
static bool op(uint32_t insn, uint64_t a, uint64_t b, unsigned n, uint64_t *rd)
{
    unsigned f7 = insn >> 25, f3 = (insn >> 12) & 7, rs2 = (insn >> 20) & 31;
    unsigned bit = (unsigned)(b & (n - 1));
    switch (f7) {
    case F7_ZBA_SHADD:
        return shadd(f3, a, b, rd);
    case F7_ZBB_NEG:
        if (f3 == 7)
            *rd = a & ~b;
        else if (f3 == 6)
            *rd = a | ~b;
        else if (f3 == 4)
            *rd = ~(a ^ b);
        else
            return false;
        return true;
    case F7_MINMAX_CLMUL:
        if (f3 >= 1 && f3 <= 3) {
            *rd = clmul_part(a, b, n, f3);
        } else if (f3 == 4 || f3 == 6) {
            bool less = sext_from(a, n) < sext_from(b, n);
            *rd = (f3 == 4) == less ? a : b;   /* min, max */
        } else if (f3 == 5 || f3 == 7) {
            bool less = a < b;
            *rd = (f3 == 5) == less ? a : b;   /* minu, maxu */
        } else {
            return false;
        }
        return true;
    case F7_ROT:
        return rotate(f3, a, b, n, rd);
    case F7_BCLR_BEXT:
        if (f3 == 1)
            *rd = a & ~(1ull << bit);
        else if (f3 == 5)
            *rd = (a >> bit) & 1;
        else
            return false;
        return true;
    case F7_BINV:
    case F7_BSET:
        if (f3 != 1)
            return false;
        *rd = f7 == F7_BINV ? a ^ (1ull << bit) : a | (1ull << bit);
        return true;
    case F7_ZEXT_ADDUW:   /* zext.h on RV32 (RV64's is on OP-32) */
        if (n != 32 || f3 != 4 || rs2 != 0)
            return false;
        *rd = a & 0xffff;
        return true;
    default:
        return false;
    }
}

/* OP-32 (RV64): the .uw address forms, rolw/rorw and RV64's zext.h. */
static bool op_32(uint32_t insn, uint64_t a, uint64_t b, uint64_t *rd)
{
    unsigned f7 = insn >> 25, f3 = (insn >> 12) & 7, rs2 = (insn >> 20) & 31;
    uint64_t w = a & ones(32);
    switch (f7) {
    case F7_ZEXT_ADDUW:
        if (f3 == 0)
            *rd = w + b;                            /* add.uw */
        else if (f3 == 4 && rs2 == 0)
            *rd = a & 0xffff;                       /* zext.h */
        else
            return false;
        return true;
    case F7_ZBA_SHADD:
        return shadd(f3, w, b, rd);                 /* sh1add.uw .. sh3add.uw */
    case F7_ROT:
        if (!rotate(f3, w, b, 32, rd))              /* rolw, rorw */
            return false;
        *rd = (uint64_t)sext_from(*rd, 32);
        return true;
    default:
        return false;
    }
}

/* OP-IMM: the unary forms, and the immediate rotate and single-bit forms. */
static bool op_imm(uint32_t insn, uint64_t a, unsigned n, uint64_t *rd)
{
    unsigned f3 = (insn >> 12) & 7, imm = insn >> 20;
    /* RV64: funct6 and a 6-bit shamt; RV32: funct7 (its low bit shamt[5], which must
     * be clear) and a 5-bit shamt. */
    unsigned f6 = n == 64 ? insn >> 26 : (insn >> 25) % 2 ? ~0u : insn >> 26;
    unsigned sh = n == 64 ? (insn >> 20) & 63 : (insn >> 20) & 31;
    if (f3 == 1) {
        switch (imm) {
        case IMM_CLZ:    *rd = clz_n(a, n); return true;
        case IMM_CTZ:    *rd = ctz_n(a, n); return true;
        case IMM_CPOP:   *rd = (uint64_t)__builtin_popcountll(a & ones(n)); return true;
        case IMM_SEXT_B: *rd = (uint64_t)(int64_t)(int8_t)a; return true;
        case IMM_SEXT_H: *rd = (uint64_t)(int64_t)(int16_t)a; return true;
        default: break;
        }
        if (f6 == F6_BCLRI_BEXTI)
            *rd = a & ~(1ull << sh);
        else if (f6 == F6_BINVI)
            *rd = a ^ (1ull << sh);
        else if (f6 == F6_BSETI)
            *rd = a | (1ull << sh);
        else
            return false;
        return true;
    }
    if (f3 != 5)
        return false;
    if (imm == IMM_ORC_B) {
        *rd = orc_b(a, n);
    } else if (imm == (n == 64 ? IMM_REV8_RV64 : IMM_REV8_RV32)) {
        *rd = rev8(a, n);
    } else if (f6 == F6_RORI) {
        *rd = rotl(a, n - sh, n);
    } else if (f6 == F6_BCLRI_BEXTI) {
        *rd = (a >> sh) & 1;   /* bexti */
    } else {
        return false;
    }
    return true;
}

/* OP-IMM-32 (RV64): slli.uw, clzw, ctzw, cpopw, roriw. */
static bool op_imm_32(uint32_t insn, uint64_t a, uint64_t *rd)
{
    unsigned f3 = (insn >> 12) & 7, imm = insn >> 20;
    if (f3 == 1) {
        switch (imm) {
        case IMM_CLZ:  *rd = clz_n(a, 32); return true;
        case IMM_CTZ:  *rd = ctz_n(a, 32); return true;
        case IMM_CPOP: *rd = (uint64_t)__builtin_popcountll(a & ones(32)); return true;
        default: break;
        }
        if (insn >> 26 != F6_SLLI_UW)
            return false;
        *rd = (a & ones(32)) << ((insn >> 20) & 63);
        return true;
    }
    if (f3 == 5 && insn >> 25 == F7_ROT) {
        *rd = (uint64_t)sext_from(rotl(a, 32 - ((insn >> 20) & 31), 32), 32);
        return true;
    }
    return false;
}

/* The result `insn` (a Zba/Zbb/Zbc/Zbs instruction) gives for rs1 = a, rs2 = b; false
 * when it is none of them. */
static bool bitmanip_result(uint32_t insn, unsigned xlen, uint64_t a, uint64_t b, uint64_t *rd)
{
    uint64_t mask = ones(xlen);
    a &= mask;
    b &= mask;
    bool ok;
    switch (insn & 0x7f) {
    case OP:        ok = op(insn, a, b, xlen, rd); break;
    case OP_IMM:    ok = op_imm(insn, a, xlen, rd); break;
    case OP_32:     ok = xlen == 64 && op_32(insn, a, b, rd); break;
    case OP_IMM_32: ok = xlen == 64 && op_imm_32(insn, a, rd); break;
    default:        ok = false; break;
    }
    if (ok)
        *rd &= mask;
    return ok;
}

/* hooks.c on_intr, for an illegal instruction at `pc`: true when it was one of these
 * and is now done. */
bool emulate_bitmanip(hart *h, uint32_t insn, uint64_t pc)
{
    if (insn_len(insn) != 4)
        return false;
    uint64_t rd;
    unsigned rs1 = (insn >> 15) & 31, rs2 = (insn >> 20) & 31;
    if (!bitmanip_result(insn, h->s.xlen, gpr(h, rs1), gpr(h, rs2), &rd))
        return false;
    retire_before(h, pc);
    set_gpr(h, (insn >> 7) & 31, rd);
    retire_through(h, pc);
    redirect(h, (pc + 4) & h->xmask);
    return true;
}
