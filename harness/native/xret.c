/*
 * xret.c: mret, sret and wfi, emulated at their exact addresses (hooks.c).
 *
 * Unicorn runs xRET natively, but the core must record each one and evaluate
 * interrupts right after it (spec 3.1.9: an xRET can enable a pending interrupt), so
 * it performs them itself. When the instruction would be illegal, the core declines
 * and Unicorn executes it, raising the illegal-instruction exception through the
 * normal path.
 *
 * Semantics (spec 3.3.2; QEMU 7.2 helper_mret/helper_sret):
 *   mret: priv := MPP, MIE := MPIE, MPIE := 1, MPP := U, pc := mepc
 *   sret: priv := SPP, SIE := SPIE, SPIE := 1, SPP := U, pc := sepc
 * Spec 1.12 adds MPRV := 0 when the new privilege is below M; QEMU 7.2 does not, and
 * privlab follows QEMU 7.2 so both give the same results (tests/conformance/xret.S).
 * sret is illegal in U, and in S when mstatus.TSR is set; mret is illegal below M.
 * QEMU 7.2 also makes mret to S or U illegal while no PMP entry is active; QEMU before
 * 7.0 did not, and let S and U access everything then (`pmp_open_when_empty`, pmp.c).
 */
#include "hart.h"

static bool xret(hart *h, uint64_t pc, bool is_mret, uint64_t mstatus, uint64_t target)
{
    unsigned from = cur_priv(h);
    unsigned to;
    uint64_t before = guest_mstatus_of(h, mstatus);

    if (is_mret) {
        to = (unsigned)((mstatus & MSTATUS_MPP) >> __builtin_ctzll(MSTATUS_MPP));
        mstatus = (mstatus & ~MSTATUS_MIE) | ((mstatus & MSTATUS_MPIE) ? MSTATUS_MIE : 0);
        mstatus = (mstatus | MSTATUS_MPIE) & ~MSTATUS_MPP;
    } else {
        to = (mstatus & MSTATUS_SPP) ? PRV_S : PRV_U;
        mstatus = (mstatus & ~MSTATUS_SIE) | ((mstatus & MSTATUS_SPIE) ? MSTATUS_SIE : 0);
        mstatus = (mstatus | MSTATUS_SPIE) & ~MSTATUS_SPP;
    }
    if (to == 2)
        to = PRV_U;   /* MPP = 2 is reserved; treat it as the least privileged mode */
    target &= ~1ull & h->xmask;   /* xepc bit 0 is always zero */

    retire_before(h, pc);
    set_csr_raw(h, UC_RISCV_REG_MSTATUS, mstatus);
    struct hart_event *e = event_begin(h, EV_XRET);
    if (e) {
        e->code = is_mret ? 0 : 1;
        e->epc = pc;
        e->pc = target;
        e->priv_from = (uint8_t)from;
        e->priv_to = (uint8_t)to;
        e->status_before = before;
        e->status_after = guest_mstatus_of(h, mstatus);
        event_commit(h);
    }
    h->s.instret++;
    set_priv(h, to);
    h->ret_pc = target;
    h->ret_instret = h->s.instret;
    if (check_interrupts(h, target))
        return true;
    if (to != PRV_M && !pmp_has_active_rule(h) && !h->s.pmp_open_when_empty) {
        /* QEMU 7.2: with no PMP entry, S and U can access nothing, so the first fetch
         * at the target faults (cause 1, epc = tval = target). */
        take_trap(h, false, CAUSE_FAULT_FETCH, target, target);
        return true;
    }
    redirect(h, target);
    return true;
}

bool do_mret(hart *h, uint64_t pc)
{
    if (cur_priv(h) != PRV_M)
        return false;
    uint64_t mstatus = reg(h, UC_RISCV_REG_MSTATUS);
    uint64_t mpp = (mstatus & MSTATUS_MPP) >> __builtin_ctzll(MSTATUS_MPP);
    if (mpp != PRV_M && !pmp_has_active_rule(h) && !h->s.pmp_open_when_empty) {
        take_exception(h, CAUSE_ILLEGAL_INSTRUCTION, pc);
        return true;
    }
    return xret(h, pc, true, mstatus, reg(h, UC_RISCV_REG_MEPC));
}

bool do_sret(hart *h, uint64_t pc)
{
    unsigned priv = cur_priv(h);
    if (priv == PRV_U)
        return false;
    if (priv == PRV_S && (h->mstatus_extra & MSTATUS_TSR)) {
        take_exception(h, CAUSE_ILLEGAL_INSTRUCTION, pc);   /* Unicorn's own TSR bit is never set */
        return true;
    }
    uint64_t mstatus = csr_raw(h, UC_RISCV_REG_MSTATUS);
    return xret(h, pc, false, mstatus, reg(h, UC_RISCV_REG_SEPC));
}

/*
 * wfi: illegal in U, and in S when mstatus.TW is set (QEMU 7.2 helper_wfi). Otherwise
 * the hart waits until an interrupt is pending and enabled in mie, whatever the global
 * enables; if that interrupt is also globally enabled it is taken with xepc = the
 * instruction after the wfi. If nothing is pending, the core stops and the run loop
 * fast-forwards time to the next event (machine.py).
 */
bool do_wfi(hart *h, uint64_t pc)
{
    unsigned priv = cur_priv(h);
    if (priv == PRV_U)
        return false;
    if (priv == PRV_S && (h->mstatus_extra & MSTATUS_TW)) {
        take_exception(h, CAUSE_ILLEGAL_INSTRUCTION, pc);   /* Unicorn's own TW bit is never set */
        return true;
    }
    uint64_t next = (pc + 4) & h->xmask;
    retire_through(h, pc);
    if (mip_value(h) & h->mie) {
        if (!check_interrupts(h, next))
            redirect(h, next);
        return true;
    }
    redirect(h, next);
    request_stop(h, STOP_WFI, next);
    return true;
}
