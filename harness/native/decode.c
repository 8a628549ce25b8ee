/*
 * decode.c: instruction fields the core needs, and tval.
 *
 * Unicorn keeps the faulting address of a memory exception inside QEMU and never
 * exposes it (UNICORN-RISCV.md fact 3), so the core recomputes xtval the way QEMU 7.2
 * reports it (target/riscv/cpu_helper.c, riscv_cpu_do_interrupt):
 *   - load/store/AMO page faults, access faults and misaligned: the effective address,
 *     rs1 + offset, decoded from the instruction (rs1 still holds its old value: the
 *     faulting instruction never wrote back);
 *   - instruction page/access faults: the address whose fetch failed, which is epc,
 *     or epc + 2 when a 4-byte instruction starts in the last parcel of a page;
 *   - illegal instruction: the instruction bits (16 for a compressed one);
 *   - everything else (ecall, ebreak): 0.
 */
#include "hart.h"

#define OP_LOAD 0x03
#define OP_LOAD_FP 0x07
#define OP_STORE 0x23
#define OP_STORE_FP 0x27
#define OP_AMO 0x2f
#define OP_MISC_MEM 0x0f
#define OP_SYSTEM 0x73

#define INSN_MRET 0x30200073u
#define INSN_SRET 0x10200073u
#define INSN_WFI 0x10500073u
#define FUNCT3_FENCE_I 1
#define FUNCT7_SFENCE_VMA 0x09

#define REG_SP 2
#define PAGE_SIZE 4096u

unsigned insn_len(uint32_t insn)
{
    return (insn & 3) == 3 ? 4 : 2;
}

static int64_t sext(uint64_t v, unsigned bits)
{
    uint64_t m = 1ull << (bits - 1);
    v &= (1ull << bits) - 1;
    return (int64_t)((v ^ m) - m);
}

static unsigned bits(uint32_t insn, unsigned hi, unsigned lo)
{
    return (insn >> lo) & ((1u << (hi - lo + 1)) - 1);
}

/* Compressed offsets: the scaled immediates of C.LW/C.SW (word) and C.LD/C.SD (double),
 * and their stack-pointer forms, as laid out in the RVC chapter of the ISA manual. */
static uint64_t c_word_off(uint32_t i)  { return (bits(i, 12, 10) << 3) | (bits(i, 6, 6) << 2) | (bits(i, 5, 5) << 6); }
static uint64_t c_dword_off(uint32_t i) { return (bits(i, 12, 10) << 3) | (bits(i, 6, 5) << 6); }
static uint64_t c_lwsp_off(uint32_t i)  { return (bits(i, 12, 12) << 5) | (bits(i, 6, 4) << 2) | (bits(i, 3, 2) << 6); }
static uint64_t c_ldsp_off(uint32_t i)  { return (bits(i, 12, 12) << 5) | (bits(i, 6, 5) << 3) | (bits(i, 4, 2) << 6); }
static uint64_t c_swsp_off(uint32_t i)  { return (bits(i, 12, 9) << 2) | (bits(i, 8, 7) << 6); }
static uint64_t c_sdsp_off(uint32_t i)  { return (bits(i, 12, 10) << 3) | (bits(i, 9, 7) << 6); }

/* Effective address of a compressed load/store; false if `insn` is not one. */
static bool c_mem_address(hart *h, uint32_t insn, uint64_t *ea)
{
    unsigned op = insn & 3, funct3 = bits(insn, 15, 13);
    unsigned rs1p = 8 + bits(insn, 9, 7);
    bool rv64 = h->s.xlen == 64;
    uint64_t off;

    if (op == 0) {  /* quadrant 0: register-based, rs1' in bits 9:7 */
        switch (funct3) {
        case 1: case 5: off = c_dword_off(insn); break;            /* c.fld, c.fsd */
        case 2: case 6: off = c_word_off(insn); break;             /* c.lw, c.sw */
        case 3: case 7: off = rv64 ? c_dword_off(insn)             /* c.ld, c.sd */
                                   : c_word_off(insn); break;      /* c.flw, c.fsw */
        default: return false;
        }
        *ea = gpr(h, rs1p) + off;
        return true;
    }
    if (op == 2) {  /* quadrant 2: stack-pointer based */
        switch (funct3) {
        case 1: off = c_ldsp_off(insn); break;                     /* c.fldsp */
        case 2: off = c_lwsp_off(insn); break;                     /* c.lwsp */
        case 3: off = rv64 ? c_ldsp_off(insn) : c_lwsp_off(insn); break;
        case 5: off = c_sdsp_off(insn); break;                     /* c.fsdsp */
        case 6: off = c_swsp_off(insn); break;                     /* c.swsp */
        case 7: off = rv64 ? c_sdsp_off(insn) : c_swsp_off(insn); break;
        default: return false;
        }
        *ea = gpr(h, REG_SP) + off;
        return true;
    }
    return false;
}

/* Effective address of a load, store or AMO; false if `insn` is not one. */
static bool mem_address(hart *h, uint32_t insn, uint64_t *ea)
{
    if (insn_len(insn) == 2)
        return c_mem_address(h, insn, ea);
    uint64_t base = gpr(h, bits(insn, 19, 15));
    switch (insn & 0x7f) {
    case OP_LOAD:
    case OP_LOAD_FP:
        *ea = base + (uint64_t)sext(insn >> 20, 12);
        return true;
    case OP_STORE:
    case OP_STORE_FP:
        *ea = base + (uint64_t)sext((bits(insn, 31, 25) << 5) | bits(insn, 11, 7), 12);
        return true;
    case OP_AMO:
        *ea = base;
        return true;
    default:
        return false;
    }
}

/* The address whose fetch failed: a 4-byte instruction whose first parcel is the last
 * of a readable page faults on the next page. */
static uint64_t fetch_fault_address(hart *h, uint64_t epc)
{
    uint16_t lo;
    uint64_t next = epc + 2;
    if ((next & (PAGE_SIZE - 1)) == 0 &&
        uc_vmem_read(h->uc, epc, UC_PROT_EXEC, &lo, 2) == UC_ERR_OK && (lo & 3) == 3)
        return next & h->xmask;
    return epc;
}

uint64_t exception_tval(hart *h, unsigned code, uint64_t epc)
{
    uint32_t insn = 0;
    uint64_t ea;

    switch (code) {
    case EXC_INSN_MISALIGNED:
    case EXC_INSN_ACCESS_FAULT:
    case EXC_INSN_PAGE_FAULT:
        return fetch_fault_address(h, epc);
    case EXC_ILLEGAL_INSN:
        return read_insn(h, epc, &insn) ? insn : 0;
    case EXC_LOAD_MISALIGNED:
    case EXC_LOAD_ACCESS_FAULT:
    case EXC_LOAD_PAGE_FAULT:
    case EXC_STORE_MISALIGNED:
    case EXC_STORE_ACCESS_FAULT:
    case EXC_STORE_PAGE_FAULT:
        if (read_insn(h, epc, &insn) && mem_address(h, insn, &ea))
            return ea & h->xmask;
        return 0;
    default:
        return 0;
    }
}

/* CSRs whose accesses the core must see. See csrops.c for why each is here. */
static bool watched_csr(unsigned csr, unsigned xlen)
{
    if (is_virtualised_csr(csr, xlen))
        return true;
    if (csr >= CSR_PMPCFG0 && csr < CSR_PMPCFG0 + 16)
        return true;           /* shadowed for QEMU 7.2's mret-without-PMP rule */
    return csr == CSR_SATP;    /* a new address space: cached block counts are stale */
}

enum insn_kind classify(uint32_t insn, unsigned xlen)
{
    if (insn_len(insn) != 4)
        return INSN_NONE;
    switch (insn) {
    case INSN_MRET: return INSN_MRET;
    case INSN_SRET: return INSN_SRET;
    case INSN_WFI: return INSN_WFI;
    default: break;
    }
    unsigned opcode = insn & 0x7f, funct3 = bits(insn, 14, 12);
    if (opcode == OP_MISC_MEM && funct3 == FUNCT3_FENCE_I)
        return INSN_FENCE;
    if (opcode != OP_SYSTEM)
        return INSN_NONE;
    if (funct3 == 0 && bits(insn, 31, 25) == FUNCT7_SFENCE_VMA && bits(insn, 11, 7) == 0)
        return INSN_FENCE;
    if (funct3 != 0 && funct3 != 4 && watched_csr(insn >> 20, xlen))
        return INSN_CSR;
    return INSN_NONE;
}
