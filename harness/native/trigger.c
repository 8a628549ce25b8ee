/*
 * trigger.c: the debug trigger module (Sdtrig) as QEMU 7.2 has it on virt.
 *
 * Two triggers. tselect picks one (values past the last are ignored); tdata1 is an
 * address match trigger, mcontrol (type 2) or mcontrol6 (type 6): a write of another
 * type is ignored, and of the written bits only LOAD/STORE/EXECUTE, the U/S/M enables
 * (and VU/VS for type 6) and a supported size are kept (match = equal, action =
 * breakpoint exception, timing = before, no chain, dmode = 0). tdata2 is the address;
 * tdata3 reads 0 and ignores writes; tinfo shows types 2 and 6. Unicorn (QEMU 5.0) has
 * none of these CSRs (docs/unicorn.md#csrs-newer-than-priv-1-10).
 *
 * A trigger fires when its enable bit for the current privilege is set:
 *   execute   before the instruction at tdata2 runs, through an exact-address code hook
 *             (hooks.c on_code): a breakpoint exception, epc = tdata2;
 *   load/store  before an access overlapping [tdata2, tdata2 + size) (size: the trigger's,
 *             or XLEN/8 bytes for "any"), through pmp.c's check, which refuses the access
 *             and marks the hit: Unicorn raises the access fault, which hooks.c on_intr
 *             turns into a breakpoint exception, epc = the instruction, tval = the
 *             access's address. The access does not happen. pmp.c refills the trigger's
 *             page on every data access so each one is checked.
 * Matching is on the virtual address, as QEMU 7.2's: for execute the pc; for loads and
 * stores the page check finds the physical page tdata2 translates to as the access is
 * translated (satp, and for M with mstatus.MPRV the privilege in MPP), then
 * trigger_confirm compares tdata2 with the instruction's own virtual address. The
 * privilege a trigger is enabled for is the hart's (M for an MPRV access), as QEMU's.
 *
 * The debugger's watchpoints (gdb's Z2-Z4, harness/gdb/watch.py) ride on the same
 * check: physical ranges the guest cannot see or change, matched in every privilege
 * before the guest's triggers. A hit refuses the access like a trigger's, and on_intr
 * stops the run with the hart at the accessing instruction, which has not run
 * (STOP_WATCH, shared.watch_addr/watch_write): gdb's RISC-V target expects exactly
 * that (a watchpoint that fires before the access), then steps over it itself.
 */
#include "hart.h"

#define TRIGGER_TYPE_MCONTROL 2
#define TRIGGER_TYPE_MCONTROL6 6
#define MCONTROL6_SIZE (0xfull << 16)        /* mcontrol6's size field, bits 19:16 */
#define MCONTROL6_VU (1ull << 23)
#define MCONTROL6_VS (1ull << 24)
#define MCONTROL_KEPT (MCONTROL_LOAD | MCONTROL_STORE | MCONTROL_EXECUTE | \
                       MCONTROL_U | MCONTROL_S | MCONTROL_M)

static unsigned type_shift(const hart *h)
{
    return h->s.xlen - MCONTROL_TYPE_FROM_TOP;
}

static unsigned trigger_type(const hart *h, uint64_t tdata1)
{
    return (unsigned)(tdata1 >> type_shift(h)) & ((1u << MCONTROL_TYPE_WIDTH) - 1);
}

/* The encoded access size (mcontrol: sizehi:sizelo; mcontrol6: size) in bytes; 0 for
 * "any", -1 for sizes QEMU 7.2 does not support. */
static int size_bytes(unsigned code)
{
    static const int bytes[16] = {0, 1, 2, 4, -1, 8, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    return bytes[code & 15];
}

static unsigned size_code(const hart *h, uint64_t tdata1)
{
    if (trigger_type(h, tdata1) == TRIGGER_TYPE_MCONTROL6)
        return (unsigned)((tdata1 & MCONTROL6_SIZE) >> 16);
    unsigned lo = (unsigned)((tdata1 & MCONTROL_SIZELO) >> MCONTROL_SIZELO_SHIFT);
    unsigned hi = h->s.xlen == 64 ? (unsigned)((tdata1 & MCONTROL_SIZEHI) >> MCONTROL_SIZEHI_SHIFT) : 0;
    return hi << 2 | lo;
}

static uint64_t validate(const hart *h, uint64_t v, unsigned type)
{
    uint64_t out = ((uint64_t)type << type_shift(h)) | (v & MCONTROL_KEPT);
    if (type == TRIGGER_TYPE_MCONTROL6) {
        out |= v & (MCONTROL6_VU | MCONTROL6_VS);
        if (size_bytes((unsigned)((v & MCONTROL6_SIZE) >> 16)) >= 0)
            out |= v & MCONTROL6_SIZE;
    } else {
        uint64_t size = MCONTROL_SIZELO | (h->s.xlen == 64 ? MCONTROL_SIZEHI : 0);
        if (size_bytes(size_code(h, v)) >= 0)
            out |= v & size;
    }
    return out & h->xmask;
}

void trigger_reset(hart *h)
{
    for (unsigned i = 0; i < TRIGGERS; i++) {
        h->tdata1[i] = (uint64_t)TRIGGER_TYPE_MCONTROL << type_shift(h);
        h->tdata2[i] = 0;
    }
    h->tselect = 0;
}

bool trigger_is_csr(unsigned csr)
{
    return csr >= CSR_TSELECT && csr <= CSR_TINFO;
}

/* Recompute what the other parts of the core look at, after a change (and after a
 * snapshot is restored: snapshot.c). */
void trigger_rearm(hart *h)
{
    h->trig_exec = false;
    h->trig_data = false;
    for (unsigned i = 0; i < HOST_WATCHES; i++)
        if (h->watches[i].privs)
            h->trig_data = true;
    for (unsigned i = 0; i < TRIGGERS; i++) {
        uint64_t t = h->tdata1[i];
        if (t & MCONTROL_EXECUTE) {
            h->trig_exec = true;
            hart_set_trigger_hook(h, h->tdata2[i]);
        }
        if (t & (MCONTROL_LOAD | MCONTROL_STORE))
            h->trig_data = true;
    }
    /* Data triggers: every access to their pages must reach pmp.c's check again. */
    uc_ctl_flush_tlb(h->uc);
}

bool trigger_read_csr(hart *h, unsigned csr, uint64_t *value)
{
    switch (csr) {
    case CSR_TSELECT: *value = h->tselect; return true;
    case CSR_TDATA1: *value = h->tdata1[h->tselect]; return true;
    case CSR_TDATA2: *value = h->tdata2[h->tselect]; return true;
    case CSR_TDATA3: *value = 0; return true;
    case CSR_TINFO:
        *value = (1u << TRIGGER_TYPE_MCONTROL) | (1u << TRIGGER_TYPE_MCONTROL6);
        return true;
    default: return false;
    }
}

bool trigger_write_csr(hart *h, unsigned csr, uint64_t value)
{
    unsigned i = h->tselect;
    switch (csr) {
    case CSR_TSELECT:
        if (value < TRIGGERS)
            h->tselect = (unsigned)value;
        return true;
    case CSR_TDATA1: {
        unsigned type = trigger_type(h, value);
        if (type != TRIGGER_TYPE_MCONTROL && type != TRIGGER_TYPE_MCONTROL6)
            return true;   /* other types: not supported, the write is ignored */
        h->tdata1[i] = validate(h, value, type);
        trigger_rearm(h);
        return true;
    }
    case CSR_TDATA2:
        h->tdata2[i] = value & h->xmask;
        trigger_rearm(h);
        return true;
    case CSR_TDATA3:
        return true;
    case CSR_TINFO:
        return true;   /* read-only in effect: QEMU 7.2 ignores writes */
    default:
        return false;
    }
}

/* Bit of tdata1 that enables a trigger at `priv`: U 3, S 4, M 6. */
static bool enabled_at(uint64_t tdata1, unsigned priv)
{
    uint64_t bit = priv == PRV_M ? MCONTROL_M : priv == PRV_S ? MCONTROL_S : MCONTROL_U;
    return (tdata1 & bit) != 0;
}

bool trigger_exec_hit(hart *h, uint64_t pc)
{
    if (!h->trig_exec)
        return false;
    for (unsigned i = 0; i < TRIGGERS; i++)
        if ((h->tdata1[i] & MCONTROL_EXECUTE) && h->tdata2[i] == pc &&
            enabled_at(h->tdata1[i], cur_priv(h)))
            return true;
    return false;
}

/* The physical range a data trigger watches, under the translation loads and stores
 * use now (M's with MPRV too). */
static bool data_range(hart *h, unsigned i, uint64_t *lo, uint64_t *len)
{
    int size = size_bytes(size_code(h, h->tdata1[i]));
    *len = size > 0 ? (uint64_t)size : h->s.xlen / 8;
    return data_paddr(h, h->tdata2[i], lo);
}

static bool overlaps(uint64_t lo, uint64_t len, uint64_t addr, uint64_t size)
{
    return addr < lo + len && lo < addr + (size ? size : 1);
}

/* Called by pmp.c for each data access to the physical page of `addr` (privs: PMP_R
 * or PMP_W). Unicorn gives the exact address only without translation; through the
 * page tables it gives the page (docs/unicorn.md#pmp-is-qemu-5). So this says only
 * whether a trigger or watchpoint of the access's kind watches the page: the access is
 * then refused, and on_intr (hooks.c) decides exactly, from the instruction's own
 * address (trigger_confirm). */
bool trigger_data_hit(hart *h, uint64_t addr, unsigned privs)
{
    if (!h->trig_data || privs == PMP_X)
        return false;
    uint64_t page = addr & ~(uint64_t)(PAGE_SIZE - 1);
    bool watched = false;
    for (unsigned i = 0; i < HOST_WATCHES && !watched; i++) {
        const struct host_watch *w = &h->watches[i];
        watched = (w->privs & privs) && w->lo < page + PAGE_SIZE && page < w->lo + w->len;
    }
    uint64_t want = privs & PMP_W ? MCONTROL_STORE : MCONTROL_LOAD;
    for (unsigned i = 0; i < TRIGGERS && !watched; i++) {
        uint64_t lo, len;
        watched = (h->tdata1[i] & want) && enabled_at(h->tdata1[i], cur_priv(h)) &&
            data_range(h, i, &lo, &len) && lo < page + PAGE_SIZE && page < lo + len;
    }
    if (!watched)
        return false;
    h->trig_hit = true;
    h->trig_page = page;
    h->trig_privs = privs;
    return true;
}

/* pmp.c refused the access by the instruction at `epc` because its page is watched:
 * does a watchpoint or trigger match the access itself (virtual `ea`, `size` bytes,
 * physically trig_page + the page offset)? */
enum trigger_match trigger_confirm(hart *h, uint64_t ea, unsigned size)
{
    uint64_t pa = h->trig_page | (ea & (PAGE_SIZE - 1));
    unsigned privs = h->trig_privs;
    for (unsigned i = 0; i < HOST_WATCHES; i++) {
        const struct host_watch *w = &h->watches[i];
        if ((w->privs & privs) && overlaps(w->lo, w->len, pa, size)) {
            h->s.watch_addr = pa > w->lo ? pa : w->lo;   /* the first watched byte */
            h->s.watch_write = (privs & w->privs & PMP_W) != 0;   /* an AMO: as watched */
            return TRIGGER_WATCHPOINT;
        }
    }
    /* A trigger matches the virtual address, as QEMU 7.2's do. */
    uint64_t want = (privs & PMP_W ? MCONTROL_STORE : 0) | (privs & PMP_R ? MCONTROL_LOAD : 0);
    for (unsigned i = 0; i < TRIGGERS; i++) {
        int bytes = size_bytes(size_code(h, h->tdata1[i]));
        uint64_t len = bytes > 0 ? (uint64_t)bytes : h->s.xlen / 8;
        if ((h->tdata1[i] & want) && enabled_at(h->tdata1[i], cur_priv(h)) &&
            overlaps(h->tdata2[i], len, ea & h->xmask, size))
            return TRIGGER_BREAKPOINT;
    }
    return TRIGGER_NONE;
}

/* Whether data accesses to the physical page at `page` must each be checked. */
bool trigger_watches_page(hart *h, uint64_t page)
{
    if (!h->trig_data)
        return false;
    for (unsigned i = 0; i < HOST_WATCHES; i++) {
        const struct host_watch *w = &h->watches[i];
        if (w->privs && w->lo < page + PAGE_SIZE && page < w->lo + w->len)
            return true;
    }
    for (unsigned i = 0; i < TRIGGERS; i++) {
        uint64_t lo, len;
        if ((h->tdata1[i] & (MCONTROL_LOAD | MCONTROL_STORE)) && data_range(h, i, &lo, &len) &&
            lo < page + PAGE_SIZE && page < lo + len)
            return true;
    }
    return false;
}

/* The debugger sets (privs PMP_R and/or PMP_W) or clears (0) watch slot `i`. */
int hart_set_watch(hart *h, unsigned i, uint64_t lo, uint64_t len, unsigned privs)
{
    if (i >= HOST_WATCHES || (privs & ~(unsigned)(PMP_R | PMP_W)) || (privs && !len))
        return 0;
    h->watches[i] = (struct host_watch){lo, privs ? len : 0, privs};
    trigger_rearm(h);
    return 1;
}

/* Resuming from a watchpoint stop at `pc`: its access goes through once, as QEMU's
 * gdbstub lets a stop-before-access watchpoint's access happen on resume. */
void hart_skip_watch_once(hart *h, uint64_t pc)
{
    h->trig_skip = rmw_access_at(h, pc) ? PMP_R | PMP_W : h->trig_privs;
    h->trig_skip_pc = pc;
    h->inline_epoch++;   /* dispatch.c: blocks call on_block until it ends the pass */
}
