/*
 * interrupt.c: the virtual mip and the decision to take an interrupt.
 *
 * Unicorn has no devices, so its own mip never changes; if it did, QEMU would deliver
 * S-level interrupts natively, behind the core's back
 * (docs/unicorn.md#interrupts-in-unicorns-mip-bypass-the-hooks). So
 * Unicorn's mip stays 0 and the real one lives here: MTIP from the CLINT comparator
 * against deterministic time, MSIP from the CLINT, SSIP/STIP/SEIP as software wrote
 * them, MEIP/SEIP from interrupt lines.
 *
 * The core asks "is an interrupt pending and enabled?" right after every xRET and every
 * write to mstatus/sstatus/mie/sie/mip/sip/mideleg (spec 3.1.9), at block boundaries
 * when the timer deadline passes, and when the host changes a device line.
 */
#include "hart.h"

/* Guest time in nanoseconds: 2^icount_shift per instruction retired (QEMU's -icount
 * shift=N; 1 ns at the default 0), plus the time skipped while waiting in wfi. */
uint64_t guest_ns(const hart *h)
{
    return (h->s.instret << h->s.icount_shift) + h->s.idle_ns;
}

/* mtime counts at the timebase frequency. */
uint64_t mtime(const hart *h)
{
    return guest_ns(h) / h->s.ns_per_tick;
}

/* Sstc (as QEMU 7.2 on virt): menvcfg.STCE hands STIP to the stimecmp comparator. */
bool sstc_on(const hart *h)
{
    return (h->menvcfg & MENVCFG_STCE) != 0;
}

uint64_t mip_value(hart *h)
{
    uint64_t mip = h->s.mip_sw | h->s.mip_ext;
    if (h->s.msip & 1)
        mip |= MIP_MSIP;
    uint64_t now = mtime(h);
    if (now >= h->s.mtimecmp)
        mip |= MIP_MTIP;
    if (sstc_on(h))
        mip = (mip & ~MIP_STIP) | (now >= h->stimecmp ? MIP_STIP : 0);
    return mip;
}

/* The first instret at which mtime reaches `cmp` (ticks), or UNLIMITED. */
static uint64_t instret_at(const hart *h, uint64_t cmp)
{
    uint64_t npt = h->s.ns_per_tick;
    if (cmp > UNLIMITED / npt)
        return UNLIMITED;
    uint64_t ns = cmp * npt;
    uint64_t busy = ns > h->s.idle_ns ? ns - h->s.idle_ns : 0;
    unsigned shift = h->s.icount_shift;
    return (busy >> shift) + ((busy & ((1ull << shift) - 1)) != 0);   /* rounded up */
}

/* Lowest set bit. QEMU 7.2 without the AIA extension picks the lowest-numbered pending
 * interrupt within the M-level set, then within the S-level set
 * (riscv_cpu_pending_to_irq); the spec's fixed order (MEI, MSI, MTI, SEI, SSI, STI)
 * differs only when an external interrupt is pending together with another. privlab
 * follows QEMU so the two give the same trap sequence. */
static int lowest(uint64_t bits)
{
    return bits ? __builtin_ctzll(bits) : -1;
}

/* The interrupt the hart takes now, or -1. */
int pending_interrupt(hart *h)
{
    uint64_t pending = mip_value(h) & h->mie;
    if (!pending)
        return -1;
    unsigned priv = cur_priv(h);
    uint64_t mstatus = csr_raw(h, UC_RISCV_REG_MSTATUS);
    bool m_enabled = priv < PRV_M || (mstatus & MSTATUS_MIE);
    bool s_enabled = priv < PRV_S || (priv == PRV_S && (mstatus & MSTATUS_SIE));

    uint64_t to_m = pending & ~h->mideleg;
    if (m_enabled && to_m)
        return lowest(to_m);
    uint64_t to_s = pending & h->mideleg;
    if (s_enabled && to_s)
        return lowest(to_s);
    return -1;
}

/* Take a pending, enabled interrupt with xepc = pc (the next instruction to run). */
bool check_interrupts(hart *h, uint64_t pc)
{
    int irq = pending_interrupt(h);
    if (irq < 0)
        return false;
    take_trap(h, true, (unsigned)irq, pc, 0);
    return true;
}

/* The instret at which the block hook must next look: the budget, the next look at
 * live console input, the moment the timer comparator fires if it has not already, or
 * the end of a block an interrupt was held back in. */
void update_deadline(hart *h)
{
    uint64_t deadline = h->s.budget < h->s.poll_at ? h->s.budget : h->s.poll_at;
    uint64_t mip = mip_value(h);
    if (!(mip & MIP_MTIP) && instret_at(h, h->s.mtimecmp) < deadline)
        deadline = instret_at(h, h->s.mtimecmp);
    if (sstc_on(h) && !(mip & MIP_STIP) && instret_at(h, h->stimecmp) < deadline)
        deadline = instret_at(h, h->stimecmp);
    /* An interrupt held back inside a block a run stopped in (hooks.c) is looked at
     * again where that block ends. */
    if (h->irq_from > h->s.instret && h->irq_from < deadline)
        deadline = h->irq_from;
    h->deadline = h->resume_wanted ? 0 : deadline;
}
