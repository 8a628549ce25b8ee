/*
 * csrfast.c: sstatus and mstatus accesses without leaving translated code.
 *
 * The core shows the guest QEMU 7.2's mstatus and sstatus, not Unicorn's (csrops.c:
 * UXL/SXL, VS, TW/TSR, SD), and a write may enable a pending interrupt. The general
 * way to do that is a code hook on the instruction that emulates it and resumes at
 * the next one, which costs Unicorn an exit from its execution loop: about 250 ns per
 * read and 450 ns per write, against 40 ns for a CSR Unicorn handles itself
 * (benchmarks/csr_access.py). Kernels touch sstatus all the time: xv6 turns interrupts
 * off and on around every spinlock (push_off, pop_off), and a fifth of its run went
 * there.
 *
 * So for these two CSRs the core takes the place of Unicorn's own CSR access, which
 * its csrrw/csrrs/csrrc helpers call through libunicorn's PLT (plt.c): the helper
 * gets the guest's value from csrops.c and the instruction completes in translated
 * code. A CSR instruction ends its translated block in Unicorn (QEMU 5.0's
 * RISCV_OP_CSR_POST), so the block's instruction count is already exact, and a write
 * that may enable an interrupt has the next block's start (the next instruction)
 * check for one, where the code-hook path checked right after the instruction: the
 * same point, the same instret. Calls from anywhere else (uc_reg_read and
 * uc_reg_write, which csrops.c itself uses to reach Unicorn's raw mstatus) and
 * accesses the current privilege may not make go on to Unicorn's own function, as
 * before.
 */
#include "hart.h"
#include "portable.h"

/* QEMU 5.0's riscv_csrrw and the helpers that call it, in both builds. */
extern int riscv_csrrw_riscv64(void *env, int csrno, uint64_t *ret, uint64_t new_value,
                               uint64_t write_mask);
extern int riscv_csrrw_riscv32(void *env, int csrno, uint32_t *ret, uint32_t new_value,
                               uint32_t write_mask);
extern uint64_t helper_csrrw_riscv64(void *, uint64_t, uint64_t);
extern uint64_t helper_csrrs_riscv64(void *, uint64_t, uint64_t, uint64_t);
extern uint64_t helper_csrrc_riscv64(void *, uint64_t, uint64_t, uint64_t);
extern uint32_t helper_csrrw_riscv32(void *, uint32_t, uint32_t);
extern uint32_t helper_csrrs_riscv32(void *, uint32_t, uint32_t, uint32_t);
extern uint32_t helper_csrrc_riscv32(void *, uint32_t, uint32_t, uint32_t);

#define HELPERS 3
struct code_range {
    uintptr_t lo, hi;
};
static struct code_range helpers[2][HELPERS];   /* [RV64?][csrrw, csrrs, csrrc] */
static uint64_t fast_count;                      /* accesses completed here */

/* The CSRs done here. */
static bool fast_csr(unsigned csr)
{
    return csr == CSR_SSTATUS || csr == CSR_MSTATUS;
}

bool csrfast_handles(unsigned csr)
{
    static int on = -1;
    if (on < 0)
        on = csrfast_install();
    return on && (fast_csr(csr) || csr == CSR_SATP);
}

/* Was riscv_csrrw called by one of the CSR instruction helpers (returning to `ra`)? */
static bool from_helper(uintptr_t ra, bool rv64)
{
    for (unsigned i = 0; i < HELPERS; i++)
        if (ra >= helpers[rv64][i].lo && ra < helpers[rv64][i].hi)
            return true;
    return false;
}

/* Where Unicorn's mstatus lies in an RV64 CPU state (`env`), found once: the one word
 * that follows two writes through Unicorn's register API (interrupt-enable and SPP
 * bits flipped, which have no side effects there, then the value put back). Two
 * values, since one alone can match an unrelated word (mstatus is often 0x20 or 0);
 * none found unambiguously: NULL, and status_access goes through the API. RV32 keeps
 * the API. */
#define ENV_WORDS 1024
#define PROBE_1 (MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_MPIE | MSTATUS_SPP)
#define PROBE_2 (MSTATUS_SPIE | MSTATUS_SPP)
static size_t mstatus_at = SIZE_MAX;   /* word index; 0: not found */

static size_t find_mstatus(hart *h, const uint64_t *w)
{
    static bool candidate[ENV_WORDS];
    uint64_t v = reg(h, UC_RISCV_REG_MSTATUS);
    set_reg(h, UC_RISCV_REG_MSTATUS, v ^ PROBE_1);
    uint64_t p1 = reg(h, UC_RISCV_REG_MSTATUS);
    for (size_t k = 0; k < ENV_WORDS; k++)
        candidate[k] = w[k] == p1;
    set_reg(h, UC_RISCV_REG_MSTATUS, v ^ PROBE_2);
    uint64_t p2 = reg(h, UC_RISCV_REG_MSTATUS);
    for (size_t k = 0; k < ENV_WORDS; k++)
        candidate[k] = candidate[k] && w[k] == p2;
    set_reg(h, UC_RISCV_REG_MSTATUS, v);
    size_t found = 0, hits = 0;
    for (size_t k = 1; k < ENV_WORDS; k++)
        if (candidate[k] && w[k] == v)
            found = k, hits++;
    bool distinct = p1 != v && p2 != v && p1 != p2;   /* the writes took effect */
    return distinct && hits == 1 ? found : 0;
}

static uint64_t *mstatus_word(void *env, hart *h, unsigned xlen)
{
    uint64_t *w = env;
    if (xlen != 64)
        return NULL;
    if (mstatus_at == SIZE_MAX) {
        unsigned priv = cur_priv(h);
        if (priv != PRV_M)
            set_reg(h, UC_RISCV_REG_PRIV, PRV_M);
        mstatus_at = find_mstatus(h, w);
        if (priv != PRV_M)
            set_reg(h, UC_RISCV_REG_PRIV, priv);
    }
    return mstatus_at ? &w[mstatus_at] : NULL;
}

/* The access done here, or false to hand it on: not from an instruction, another
 * CSR, or a privilege the CSR's level forbids (Unicorn's check raises the
 * illegal-instruction exception then, as the code-hook path let it). */
static bool fast_access(void *env, unsigned xlen, int csrno, uint64_t *ret, uint64_t new_value,
                   uint64_t write_mask, uintptr_t ra)
{
    if (!from_helper(ra, xlen == 64) || !fast_csr((unsigned)csrno))
        return false;
    hart *h = hart_of_env(env, xlen);
    if (!h || cur_priv(h) < (((unsigned)csrno >> 8) & 3))
        return false;
    uint64_t old = status_access(h, (unsigned)csrno, new_value, write_mask,
                                 mstatus_word(env, h, xlen));
    *ret = old;
    if ((((old & ~write_mask) | (new_value & write_mask)) & ~old) &
        (MSTATUS_SIE | MSTATUS_MIE)) {
        /* SIE or MIE set (the one way a status write enables an interrupt): look for
         * one before the next block, which starts at the next instruction
         * (interrupt.c). A run counted
         * this block as it entered it; a step counts its one instruction when it
         * ends, and Unicorn may enter the next block's hook before that (it is run
         * again by the next step): only from there on. */
        h->irq_from = h->s.instret + (h->s.step ? 1 : 0);
        h->deadline = 0;
    }
    fast_count++;
    return true;
}

/* A satp write from an instruction: Unicorn's, with tlbbank.c around it (which also
 * keeps fetch.c's copy of satp). */
static bool satp_write(void *env, unsigned xlen, int csrno, uint64_t write_mask, uintptr_t ra,
                       hart **h)
{
    if (csrno != CSR_SATP || !write_mask || !from_helper(ra, xlen == 64))
        return false;
    *h = hart_of_env(env, xlen);
    if (*h)
        tlbbank_satp_begin(*h);
    return *h != NULL;
}

/* What satp holds after Unicorn's write_satp (QEMU 5.0 csr.c) was given `value` over
 * `old`: the value if the write went through (`status` 0) and its mode is one the RV64
 * build accepts (valid_vm_1_10: bare, Sv39, Sv48, Sv57), else the old one. */
static uint64_t satp_after(int status, uint64_t old, uint64_t value)
{
    uint64_t mode = value >> SATP64_MODE_SHIFT;
    bool taken = status == 0 &&
        (mode == 0 || mode == SV39_MODE || mode == SV48_MODE || mode == SV57_MODE);
    return taken ? value : old;
}

static int csrrw64(void *env, int csrno, uint64_t *ret, uint64_t new_value, uint64_t write_mask)
{
    uintptr_t ra = (uintptr_t)__builtin_return_address(0);
    hart *h;
    if (fast_access(env, 64, csrno, ret, new_value, write_mask, ra))
        return 0;
    if (!satp_write(env, 64, csrno, write_mask, ra, &h))
        return riscv_csrrw_riscv64(env, csrno, ret, new_value, write_mask);
    uint64_t old = 0;
    int status = riscv_csrrw_riscv64(env, csrno, &old, new_value, write_mask);
    if (ret)
        *ret = old;
    tlbbank_satp_end(h, true, satp_after(status, old, (old & ~write_mask) | (new_value & write_mask)));
    return status;
}

static int csrrw32(void *env, int csrno, uint32_t *ret, uint32_t new_value, uint32_t write_mask)
{
    uintptr_t ra = (uintptr_t)__builtin_return_address(0);
    uint64_t v;
    hart *h;
    if (fast_access(env, 32, csrno, &v, new_value, write_mask, ra)) {
        *ret = (uint32_t)v;
        return 0;
    }
    if (!satp_write(env, 32, csrno, write_mask, ra, &h))
        return riscv_csrrw_riscv32(env, csrno, ret, new_value, write_mask);
    int status = riscv_csrrw_riscv32(env, csrno, ret, new_value, write_mask);
    tlbbank_satp_end(h, false, 0);
    return status;
}

/* Once per process; false leaves every CSR to the code-hook path. */
bool csrfast_install(void)
{
    if (portable_mode())
        return false;   /* portable.h: sstatus and mstatus through code hooks */
    void *const fns[2][HELPERS] = {
        {(void *)helper_csrrw_riscv32, (void *)helper_csrrs_riscv32,
         (void *)helper_csrrc_riscv32},
        {(void *)helper_csrrw_riscv64, (void *)helper_csrrs_riscv64,
         (void *)helper_csrrc_riscv64},
    };
    static const char *const names[2][HELPERS] = {
        {"helper_csrrw_riscv32", "helper_csrrs_riscv32", "helper_csrrc_riscv32"},
        {"helper_csrrw_riscv64", "helper_csrrs_riscv64", "helper_csrrc_riscv64"},
    };
    for (unsigned x = 0; x < 2; x++)
        for (unsigned i = 0; i < HELPERS; i++)
            if (!code_range_of(names[x][i], fns[x][i], &helpers[x][i].lo, &helpers[x][i].hi))
                return false;
    return plt_patch("riscv_csrrw_riscv64", (void *)csrrw64) &&
           plt_patch("riscv_csrrw_riscv32", (void *)csrrw32);
}

/* Accesses csrfast.c completed (tests: the fast path is the one taken); with
 * `direct`, those of them done on Unicorn's mstatus word without its register API. */
uint64_t csrfast_count(bool direct)
{
    return direct ? status_direct : fast_count;
}
