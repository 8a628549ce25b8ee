/*
 * regs.c: register and CSR access through Unicorn.
 *
 * Unicorn's register calls take a pointer whose width is the target's XLEN (it reads
 * or writes 4 bytes on RV32, 8 on RV64). A zeroed uint64_t works for both on a
 * little-endian host, which is the only kind Unicorn's RISC-V build supports.
 *
 * CSR reads and writes through uc_reg_* run QEMU's CSR predicates against the current
 * privilege and silently return garbage when it is too low
 * (docs/unicorn.md#csr-access-needs-m), so csr_raw/set_csr_raw raise the hart to M
 * around the access. Writing PRIV drops an LR reservation
 * (docs/unicorn.md#writing-priv-drops-the-reservation); the spec allows that on any
 * trap, and the core only does it while handling one or while emulating an instruction.
 */
#include "hart.h"

uint64_t reg(hart *h, int ucid)
{
    uint64_t v = 0;
    uc_reg_read(h->uc, ucid, &v);
    return v & h->xmask;
}

void set_reg(hart *h, int ucid, uint64_t v)
{
    v &= h->xmask;
    uc_reg_write(h->uc, ucid, &v);
}

uint64_t gpr(hart *h, unsigned n)
{
    return n == 0 ? 0 : reg(h, UC_RISCV_REG_X0 + (int)n);
}

void set_gpr(hart *h, unsigned n, uint64_t v)
{
    if (n != 0)
        set_reg(h, UC_RISCV_REG_X0 + (int)n, v);
}

/* The core changes privilege only through set_priv, so it keeps the current level
 * without asking Unicorn (hart_sync refreshes it after the host changes state). */
unsigned cur_priv(hart *h)
{
    return h->priv;
}

void set_priv(hart *h, unsigned priv)
{
    if ((priv == PRV_M) != (h->priv == PRV_M))
        h->xlat_epoch++;   /* M fetches untranslated, S and U through satp */
    h->priv = priv;
    set_reg(h, UC_RISCV_REG_PRIV, priv);
}

/* Unicorn's register id for a CSR it implements, or -1. */
int csr_ucid(unsigned csr)
{
    switch (csr) {
    /* No FFLAGS, FRM, FCSR: Unicorn 2.1.4's uc_reg_read of them returns host stack
     * bytes, so the API reports them unavailable rather than show garbage. */
    case CSR_SSTATUS: return UC_RISCV_REG_SSTATUS;
    case CSR_SIE: return UC_RISCV_REG_SIE;
    case CSR_STVEC: return UC_RISCV_REG_STVEC;
    case CSR_SSCRATCH: return UC_RISCV_REG_SSCRATCH;
    case CSR_SEPC: return UC_RISCV_REG_SEPC;
    case CSR_SCAUSE: return UC_RISCV_REG_SCAUSE;
    case CSR_STVAL: return UC_RISCV_REG_STVAL;
    case CSR_SIP: return UC_RISCV_REG_SIP;
    case CSR_SATP: return UC_RISCV_REG_SATP;
    case CSR_MVENDORID: return UC_RISCV_REG_MVENDORID;
    case CSR_MARCHID: return UC_RISCV_REG_MARCHID;
    case CSR_MIMPID: return UC_RISCV_REG_MIMPID;
    case CSR_MHARTID: return UC_RISCV_REG_MHARTID;
    case CSR_MSTATUS: return UC_RISCV_REG_MSTATUS;
    case CSR_MISA: return UC_RISCV_REG_MISA;
    case CSR_MEDELEG: return UC_RISCV_REG_MEDELEG;
    case CSR_MIDELEG: return UC_RISCV_REG_MIDELEG;
    case CSR_MIE: return UC_RISCV_REG_MIE;
    case CSR_MTVEC: return UC_RISCV_REG_MTVEC;
    case CSR_MSCRATCH: return UC_RISCV_REG_MSCRATCH;
    case CSR_MEPC: return UC_RISCV_REG_MEPC;
    case CSR_MCAUSE: return UC_RISCV_REG_MCAUSE;
    case CSR_MTVAL: return UC_RISCV_REG_MTVAL;
    case CSR_MIP: return UC_RISCV_REG_MIP;
    default: return -1;
    }
}

/* csr_raw and set_csr_raw lend Unicorn level M for one access and give the level
 * back: the hart's level (h->priv) and what its fetches translate through do not
 * change, so the fetch-translation epoch must not move either (bumping it made every
 * CSR access from S or U throw away the block cache). */
uint64_t csr_raw(hart *h, int ucid)
{
    unsigned priv = cur_priv(h);
    if (priv == PRV_M)
        return reg(h, ucid);
    set_reg(h, UC_RISCV_REG_PRIV, PRV_M);
    uint64_t v = reg(h, ucid);
    set_reg(h, UC_RISCV_REG_PRIV, priv);
    return v;
}

void set_csr_raw(hart *h, int ucid, uint64_t v)
{
    unsigned priv = cur_priv(h);
    if (priv != PRV_M)
        set_reg(h, UC_RISCV_REG_PRIV, PRV_M);
    set_reg(h, ucid, v);
    if (priv != PRV_M)
        set_reg(h, UC_RISCV_REG_PRIV, priv);
}

/* uc_vmem_read, also on a page whose TLB entry Unicorn refills on every access (PMP
 * divides it: pmp.c): there uc_vmem_read finds no host pointer, so translate (which
 * refills the entry) and read physical memory. */
bool vmem_read(hart *h, uint64_t addr, uc_prot prot, void *buf, size_t len)
{
    uint8_t *out = buf;
    while (len) {
        size_t n = 4096 - (addr & 4095);
        if (n > len)
            n = len;
        uint64_t pa;
        if (uc_vmem_read(h->uc, addr, prot, out, n) != UC_ERR_OK &&
            (uc_vmem_translate(h->uc, addr, prot, &pa) != UC_ERR_OK ||
             uc_mem_read(h->uc, pa, out, n) != UC_ERR_OK))
            return false;
        out += n;
        addr = (addr + n) & h->xmask;
        len -= n;
    }
    return true;
}

/* The instruction at a virtual address, fetched as the current privilege would.
 * Reads 2 bytes first so a compressed instruction at the end of a page does not need
 * the next page. */
bool read_insn(hart *h, uint64_t addr, uint32_t *insn)
{
    uint16_t lo = 0, hi = 0;
    if (!vmem_read(h, addr, UC_PROT_EXEC, &lo, 2))
        return false;
    if ((lo & 3) != 3) {
        *insn = lo;
        return true;
    }
    if (!vmem_read(h, addr + 2, UC_PROT_EXEC, &hi, 2))
        return false;
    *insn = (uint32_t)lo | ((uint32_t)hi << 16);
    return true;
}
