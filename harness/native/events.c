/*
 * events.c: the trap and xRET record.
 *
 * Events go into a buffer Python owns (harness/machine/events.py). When it is nearly
 * full the core stops Unicorn at the next block boundary so Python can drain it; that
 * stop changes nothing the guest can observe, so a traced run and an untraced run
 * execute identically.
 */
#include <string.h>

#include "hart.h"

/* Room for the events one block can still produce after the stop request (an
 * emulated xRET followed by an interrupt, or a trap from an instruction after an MMIO
 * store that stopped the run). */
#define EVENT_SLACK 8

static const int arg_regs[8] = {
    UC_RISCV_REG_X10, UC_RISCV_REG_X11, UC_RISCV_REG_X12, UC_RISCV_REG_X13,
    UC_RISCV_REG_X14, UC_RISCV_REG_X15, UC_RISCV_REG_X16, UC_RISCV_REG_X17,
};

/* A zeroed record with the common fields filled, or NULL when not recording. */
struct hart_event *event_begin(hart *h, unsigned kind)
{
    if (!h->s.record_events || !h->events)
        return NULL;
    if (h->s.ev_len >= h->s.ev_cap) {
        h->s.events_dropped++;
        return NULL;
    }
    struct hart_event *e = &h->events[h->s.ev_len];
    memset(e, 0, sizeof *e);
    e->kind = (uint8_t)kind;
    e->hart = (uint8_t)h->s.hart_id;
    e->instret = h->s.instret;
    e->clock = h->s.instret + h->s.others_instret;
    e->satp = current_satp(h);
    uint64_t a[8] = {0};
    void *ptrs[8];
    for (int i = 0; i < 8; i++)
        ptrs[i] = &a[i];
    uc_reg_read_batch(h->uc, (int *)arg_regs, ptrs, 8);
    e->a0 = a[0] & h->xmask; e->a1 = a[1] & h->xmask;
    e->a2 = a[2] & h->xmask; e->a3 = a[3] & h->xmask;
    e->a4 = a[4] & h->xmask; e->a5 = a[5] & h->xmask;
    e->a6 = a[6] & h->xmask; e->a7 = a[7] & h->xmask;
    return e;
}

/* Does this event match what the host asked to stop at? */
static bool wanted(const hart *h, const struct hart_event *e)
{
    if (h->s.events_total >= h->s.stop_at_event)
        return true;
    if (h->s.stop_on_priv_change && e->priv_from != e->priv_to)
        return true;
    if (e->kind == EV_XRET)
        return h->s.stop_on_xret;
    uint64_t mask = e->interrupt ? h->s.stop_interrupts : h->s.stop_exceptions;
    return e->code < 64 && ((mask >> e->code) & 1);
}

void event_commit(hart *h)
{
    struct hart_event *e = &h->events[h->s.ev_len];
    h->s.ev_len++;
    h->s.events_total++;
    if (wanted(h, e))
        request_stop(h, STOP_EVENT, e->pc);
    else if (h->s.ev_len + EVENT_SLACK >= h->s.ev_cap)
        request_stop(h, STOP_EVENTS_FULL, 0);
}
