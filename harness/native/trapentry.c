/*
 * trapentry.c: entering a trap, as the privileged spec v1.12 section 3.1.6-3.1.21 and QEMU
 * 7.2's riscv_cpu_do_interrupt do it.
 *
 * A trap from privilege p with code c goes to S if p <= S and bit c of medeleg
 * (exceptions) or mideleg (interrupts) is set, otherwise to M. At the target x:
 * xepc := epc, xcause := c with the interrupt flag in the top bit, xtval := tval,
 * xPIE := xIE, xIE := 0, xPP := p, and pc := xtvec.BASE, plus 4*c for an interrupt when
 * xtvec.MODE is vectored.
 */
#include "hart.h"

#define TVEC_MODE_VECTORED 1

/* Trap storm: the same trap `storm_limit` times in a row, each time with no progress:
 * it fires again at the place its handler just returned to, not one instruction having
 * retired there; or no instruction retired at all since the last one (a trap vector
 * that itself faults); or its handler never returned with an xRET (a vector on a plain
 * `ret`, as in an unfinished lab, jumps back into the code that faults). An xRET sets
 * ret_instret after it retires, so it came after the last trap exactly when
 * ret_instret is past that trap's instret. */
static void watch_for_storm(hart *h, uint64_t cause, uint64_t epc, uint64_t tval)
{
    bool same = cause == h->last_cause && epc == h->last_epc && tval == h->last_tval;
    bool returned = h->last_trap_instret != UNLIMITED && h->ret_instret > h->last_trap_instret;
    bool no_progress = (epc == h->ret_pc && h->s.instret == h->ret_instret) ||
                       h->s.instret == h->last_trap_instret || !returned;
    h->last_trap_instret = h->s.instret;
    h->storm_count = (same && no_progress) ? h->storm_count + 1 : 0;
    h->last_cause = cause;
    h->last_epc = epc;
    h->last_tval = tval;
    if (h->s.storm_limit && h->storm_count >= h->s.storm_limit) {
        h->s.storm_cause = cause;
        h->s.storm_epc = epc;
        h->s.storm_tval = tval;
        request_stop(h, STOP_STORM, epc);
    }
}

static uint64_t set_field(uint64_t reg, uint64_t mask, uint64_t value)
{
    return (reg & ~mask) | ((value * (mask & -mask)) & mask);
}

void take_trap(hart *h, bool interrupt, unsigned code, uint64_t epc, uint64_t tval)
{
    unsigned from = cur_priv(h);
    if (from != PRV_M)   /* lent M, to reach the M-level CSRs (regs.c csr_raw) */
        set_reg(h, UC_RISCV_REG_PRIV, PRV_M);

    uint64_t deleg = interrupt ? h->mideleg : reg(h, UC_RISCV_REG_MEDELEG);
    bool to_s = from <= PRV_S && code < h->s.xlen && ((deleg >> code) & 1);
    uint64_t cause = (uint64_t)code | ((uint64_t)interrupt << (h->s.xlen - 1));
    uint64_t mstatus = reg(h, UC_RISCV_REG_MSTATUS);
    uint64_t status_before = guest_mstatus_of(h, mstatus);
    uint64_t tvec;

    if (to_s) {
        mstatus = set_field(mstatus, MSTATUS_SPIE, !!(mstatus & MSTATUS_SIE));
        mstatus = set_field(mstatus, MSTATUS_SPP, from);
        mstatus = set_field(mstatus, MSTATUS_SIE, 0);
        set_reg(h, UC_RISCV_REG_SEPC, epc);
        set_reg(h, UC_RISCV_REG_SCAUSE, cause);
        set_reg(h, UC_RISCV_REG_STVAL, tval);
        tvec = reg(h, UC_RISCV_REG_STVEC);
    } else {
        mstatus = set_field(mstatus, MSTATUS_MPIE, !!(mstatus & MSTATUS_MIE));
        mstatus = set_field(mstatus, MSTATUS_MPP, from);
        mstatus = set_field(mstatus, MSTATUS_MIE, 0);
        set_reg(h, UC_RISCV_REG_MEPC, epc);
        set_reg(h, UC_RISCV_REG_MCAUSE, cause);
        set_reg(h, UC_RISCV_REG_MTVAL, tval);
        tvec = reg(h, UC_RISCV_REG_MTVEC);
    }
    set_reg(h, UC_RISCV_REG_MSTATUS, mstatus);

    uint64_t vector = (tvec & ~3ull) +
        ((interrupt && (tvec & 3) == TVEC_MODE_VECTORED) ? 4ull * code : 0);
    vector &= h->xmask;
    unsigned to = to_s ? PRV_S : PRV_M;

    struct hart_event *e = event_begin(h, EV_TRAP);
    if (e) {
        e->interrupt = interrupt;
        e->code = code;
        e->cause = cause;
        e->epc = epc;
        e->tval = tval;
        e->pc = vector;
        e->priv_from = (uint8_t)from;
        e->priv_to = (uint8_t)to;
        e->status_before = status_before;
        e->status_after = guest_mstatus_of(h, mstatus);
        event_commit(h);
    }
    set_priv(h, to);   /* the fetch epoch moves only if M is entered or left */
    watch_for_storm(h, cause, epc, tval);
    redirect(h, vector);
}

/* A synchronous exception raised by the instruction at epc, which does not retire. */
void take_exception(hart *h, unsigned code, uint64_t epc)
{
    retire_before(h, epc);
    take_trap(h, false, code, epc, exception_tval(h, code, epc));
}
