/*
 * decode.c: instruction fields the core needs, and tval.
 *
 * Unicorn keeps the faulting address of a memory exception inside QEMU and never
 * exposes it (docs/unicorn.md#no-tval), so the core recomputes xtval the way QEMU 7.2
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
#define FUNCT5_LR 0x02   /* the one A-extension instruction that only reads */
#define OP_MISC_MEM 0x0f
#define OP_SYSTEM 0x73

#define ENC_MRET 0x30200073u
#define ENC_SRET 0x10200073u
#define ENC_WFI 0x10500073u
#define FUNCT3_FENCE_I 1
#define FUNCT7_SFENCE_VMA 0x09

#define REG_SP 2

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

struct mem_access {
    uint64_t ea;       /* effective (virtual) address */
    unsigned size;     /* bytes */
    bool store;
};

/* Effective address and size of a compressed load/store; false if not one. */
static bool c_mem_access(hart *h, uint32_t insn, struct mem_access *m)
{
    unsigned op = insn & 3, funct3 = bits(insn, 15, 13);
    unsigned rs1p = 8 + bits(insn, 9, 7);
    bool rv64 = h->s.xlen == 64;
    uint64_t off;

    bool dword = funct3 == 1 || funct3 == 5 || (rv64 && (funct3 == 3 || funct3 == 7));
    if (funct3 == 0 || funct3 == 4 || (op != 0 && op != 2))
        return false;
    m->size = dword ? 8 : 4;
    m->store = funct3 >= 5;
    if (op == 0) {  /* quadrant 0: c.fld c.lw c.ld/c.flw c.fsd c.sw c.sd/c.fsw, rs1' in 9:7 */
        off = dword ? c_dword_off(insn) : c_word_off(insn);
        m->ea = gpr(h, rs1p) + off;
    } else {        /* quadrant 2: the same, stack-pointer based */
        if (m->store)
            off = dword ? c_sdsp_off(insn) : c_swsp_off(insn);
        else
            off = dword ? c_ldsp_off(insn) : c_lwsp_off(insn);
        m->ea = gpr(h, REG_SP) + off;
    }
    return true;
}

/* Effective address and size of a load, store or AMO; false if `insn` is not one.
 * funct3 bits 1:0 give the width (byte, half, word, double) for every form. */
static bool mem_access(hart *h, uint32_t insn, struct mem_access *m)
{
    if (insn_len(insn) == 2)
        return c_mem_access(h, insn, m);
    uint64_t base = gpr(h, bits(insn, 19, 15));
    m->size = 1u << (bits(insn, 14, 12) & 3);
    switch (insn & 0x7f) {
    case OP_LOAD:
    case OP_LOAD_FP:
        m->ea = base + (uint64_t)sext(insn >> 20, 12);
        m->store = false;
        return true;
    case OP_STORE:
    case OP_STORE_FP:
        m->ea = base + (uint64_t)sext((bits(insn, 31, 25) << 5) | bits(insn, 11, 7), 12);
        m->store = true;
        return true;
    case OP_AMO:
        m->ea = base;
        m->store = true;
        return true;
    default:
        return false;
    }
}

/* An access that crosses into the next page faults on whichever page is bad; QEMU
 * splits it and reports the start of the second page when the first one is fine. */
static uint64_t access_fault_address(hart *h, unsigned code, const struct mem_access *m)
{
    uint64_t ea = m->ea & h->xmask, next = ((ea | (PAGE_SIZE - 1)) + 1) & h->xmask;
    uint64_t pa;
    if (m->size <= 1 || next == 0 || ea + m->size <= next)
        return ea;
    if (uc_vmem_translate(h->uc, ea, m->store ? UC_PROT_WRITE : UC_PROT_READ, &pa) != UC_ERR_OK)
        return ea;   /* the first page itself does not translate */
    bool access_fault = code == CAUSE_FAULT_LOAD || code == CAUSE_FAULT_STORE;
    if (access_fault && (pa >> 12) == (h->s.unmapped_addr >> 12))
        return ea;   /* the first page is the one with no memory behind it */
    return next;
}

/* The address whose fetch failed: a 4-byte instruction whose first parcel is the last
 * of a readable page faults on the next page. */
static uint64_t fetch_fault_address(hart *h, uint64_t epc)
{
    uint16_t lo;
    uint64_t next = epc + 2;
    if ((next & (PAGE_SIZE - 1)) == 0 &&
        vmem_read(h, epc, UC_PROT_EXEC, &lo, 2) && (lo & 3) == 3)
        return next & h->xmask;
    return epc;
}

uint64_t exception_tval(hart *h, unsigned code, uint64_t epc)
{
    uint32_t insn = 0;
    struct mem_access m;

    switch (code) {
    case CAUSE_MISALIGNED_FETCH:
    case CAUSE_FAULT_FETCH:
    case CAUSE_EXEC_PAGE_FAULT:
        return fetch_fault_address(h, epc);
    case CAUSE_ILLEGAL_INSTRUCTION:
        return read_insn(h, epc, &insn) ? insn : 0;
    case CAUSE_MISALIGNED_LOAD:
    case CAUSE_FAULT_LOAD:
    case CAUSE_LOAD_PAGE_FAULT:
    case CAUSE_MISALIGNED_STORE:
    case CAUSE_FAULT_STORE:
    case CAUSE_STORE_PAGE_FAULT:
        if (read_insn(h, epc, &insn) && mem_access(h, insn, &m))
            return access_fault_address(h, code, &m);
        return 0;
    default:
        return 0;
    }
}

/* The virtual address and size of the load, store or AMO at `pc` (not yet executed:
 * its registers hold their old values). */
bool data_access_at(hart *h, uint64_t pc, uint64_t *ea, unsigned *size)
{
    uint32_t insn;
    struct mem_access m;
    if (!read_insn(h, pc, &insn) || !mem_access(h, insn, &m))
        return false;
    *ea = m.ea & h->xmask;
    *size = m.size;
    return true;
}

/* Whether the instruction at `pc` reads and writes memory in one access: an AMO or an
 * SC (a 32-bit A-extension instruction other than LR). */
bool rmw_access_at(hart *h, uint64_t pc)
{
    uint32_t insn;
    return read_insn(h, pc, &insn) && (insn & 0x7f) == OP_AMO && (insn >> 27) != FUNCT5_LR;
}

/* CSRs whose accesses the core must see. See csrops.c for why each is here. */
static bool watched_csr(unsigned csr, unsigned xlen)
{
    if (is_virtualised_csr(csr, xlen))
        return true;
    if (csr >= CSR_PMPCFG0 && csr < CSR_PMPCFG0 + 16)
        return true;           /* shadowed for QEMU 7.2's mret-without-PMP rule */
    return csr == CSR_SATP;    /* fetch.c keeps a copy of the current satp */
}

enum insn_kind classify(uint32_t insn, unsigned xlen)
{
    if (insn_len(insn) != 4)
        return INSN_NONE;
    switch (insn) {
    case ENC_MRET: return INSN_MRET;
    case ENC_SRET: return INSN_SRET;
    case ENC_WFI: return INSN_WFI;
    default: break;
    }
    unsigned opcode = insn & 0x7f, funct3 = bits(insn, 14, 12);
    if (opcode == OP_MISC_MEM && funct3 == FUNCT3_FENCE_I)
        return INSN_FENCE;
    if (fpu_classify(insn))
        return INSN_FP;   /* fpu.c */
    if (opcode != OP_SYSTEM)
        return INSN_NONE;
    if (funct3 == 0 && bits(insn, 31, 25) == FUNCT7_SFENCE_VMA && bits(insn, 11, 7) == 0)
        return INSN_FENCE;
    if (funct3 != 0 && funct3 != 4 && watched_csr(insn >> 20, xlen))
        return csrfast_handles(insn >> 20) ? INSN_NONE : INSN_CSR;   /* csrfast.c */
    return INSN_NONE;
}
