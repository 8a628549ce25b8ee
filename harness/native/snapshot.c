/*
 * snapshot.c: the core's part of a machine snapshot (harness/machine/snapshot.py), and
 * the page hashes that let a snapshot keep only the RAM pages that changed (dirty.c
 * says which pages may have).
 *
 * A snapshot is taken between runs, never inside one. What it keeps is everything in
 * `struct hart` that decides the guest's future: the shared block, the virtual CSRs,
 * the deadline bookkeeping (irq_from: a run that stopped inside a block), trap-storm
 * history and the breakpoint skip. The caches (decoded blocks, fetch TLB, l0, hooked
 * words, guards) are not state: restoring invalidates them, as hart_sync does, and
 * Python flushes Unicorn's translations too, since RAM may now hold other code.
 */
#include <string.h>

#include "hart.h"

struct hart_snap {
    struct hart_shared s;
    uint64_t deadline, irq_from, blk_start, blk_instret;
    uint32_t blk_size, blk_count;
    unsigned priv;
    uint64_t mie, mideleg;
    uint64_t mcounteren, scounteren, menvcfg, senvcfg, mcountinhibit, stimecmp;
    uint64_t mstatus_extra, cycle_offset, instret_offset, cycle_frozen, instret_frozen;
    uint64_t mhpmcounter[HPM_COUNTERS], mhpmevent[HPM_NAMED];
    uint8_t pmpcfg[PMP_ENTRIES];
    uint64_t pmpaddr[PMP_ENTRIES];
    unsigned tselect;
    uint64_t tdata1[TRIGGERS], tdata2[TRIGGERS];
    uint64_t ret_pc, ret_instret;
    uint64_t last_cause, last_epc, last_tval, last_trap_instret;
    uint32_t storm_count;
    bool accounted;
    uint64_t bp_skip;
};

#define COPY(dst, src) do {                                            \
    (dst)->s = (src)->s;                                               \
    (dst)->deadline = (src)->deadline;                                 \
    (dst)->irq_from = (src)->irq_from;                                 \
    (dst)->blk_start = (src)->blk_start;                               \
    (dst)->blk_instret = (src)->blk_instret;                           \
    (dst)->blk_size = (src)->blk_size;                                 \
    (dst)->blk_count = (src)->blk_count;                               \
    (dst)->priv = (src)->priv;                                         \
    (dst)->mie = (src)->mie;                                           \
    (dst)->mideleg = (src)->mideleg;                                   \
    (dst)->mcounteren = (src)->mcounteren;                             \
    (dst)->scounteren = (src)->scounteren;                             \
    (dst)->menvcfg = (src)->menvcfg;                                   \
    (dst)->senvcfg = (src)->senvcfg;                                   \
    (dst)->mcountinhibit = (src)->mcountinhibit;                       \
    (dst)->stimecmp = (src)->stimecmp;                                 \
    (dst)->mstatus_extra = (src)->mstatus_extra;                       \
    (dst)->cycle_offset = (src)->cycle_offset;                         \
    (dst)->instret_offset = (src)->instret_offset;                     \
    (dst)->cycle_frozen = (src)->cycle_frozen;                         \
    (dst)->instret_frozen = (src)->instret_frozen;                     \
    memcpy((dst)->mhpmcounter, (src)->mhpmcounter, sizeof (dst)->mhpmcounter); \
    memcpy((dst)->mhpmevent, (src)->mhpmevent, sizeof (dst)->mhpmevent); \
    memcpy((dst)->pmpcfg, (src)->pmpcfg, sizeof (dst)->pmpcfg);        \
    memcpy((dst)->pmpaddr, (src)->pmpaddr, sizeof (dst)->pmpaddr);     \
    (dst)->tselect = (src)->tselect;                                   \
    memcpy((dst)->tdata1, (src)->tdata1, sizeof (dst)->tdata1);        \
    memcpy((dst)->tdata2, (src)->tdata2, sizeof (dst)->tdata2);        \
    (dst)->ret_pc = (src)->ret_pc;                                     \
    (dst)->ret_instret = (src)->ret_instret;                           \
    (dst)->last_cause = (src)->last_cause;                             \
    (dst)->last_epc = (src)->last_epc;                                 \
    (dst)->last_tval = (src)->last_tval;                               \
    (dst)->last_trap_instret = (src)->last_trap_instret;               \
    (dst)->storm_count = (src)->storm_count;                           \
    (dst)->accounted = (src)->accounted;                               \
    (dst)->bp_skip = (src)->bp_skip;                                   \
} while (0)

size_t hart_snap_size(void)
{
    return sizeof(struct hart_snap);
}

void hart_snap_save(hart *h, void *buf)
{
    struct hart_snap *sn = buf;
    memset(sn, 0, sizeof *sn);
    COPY(sn, h);
}

void hart_snap_restore(hart *h, const void *buf)
{
    const struct hart_snap *sn = buf;
    uint32_t ev_cap = h->s.ev_cap;
    COPY(h, sn);
    h->s.ev_cap = ev_cap;
    h->s.ev_len = 0;
    h->s.stop_reason = STOP_NONE;
    h->s.step = 0;
    h->blk = NULL;
    h->satp_stale = true;
    h->resume_wanted = false;
    h->code_epoch++;          /* hooked words may no longer be what RAM holds */
    stlb_flush(h);
    icount_flush(h);
    uc_ctl_flush_tb(h->uc);
    uc_ctl_flush_tlb(h->uc);
    trigger_rearm(h);         /* the execute hook and the data-trigger flags follow tdata */
}

/* One 64-bit hash per 4 KiB page of RAM, four lanes at a time so the multiplies
 * overlap. Not cryptographic: pages are keyed by it within one session. */
static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint64_t page_hash(const uint8_t *page)
{
    const uint64_t *w = (const uint64_t *)page;
    uint64_t a = 0x9e3779b97f4a7c15ull, b = 0xbf58476d1ce4e5b9ull;
    uint64_t c = 0x94d049bb133111ebull, d = 0x2545f4914f6cdd1dull;
    for (unsigned i = 0; i < 512; i += 4) {
        a = (a ^ w[i]) * 0x100000001b3ull;
        b = (b ^ w[i + 1]) * 0x100000001b3ull;
        c = (c ^ w[i + 2]) * 0x100000001b3ull;
        d = (d ^ w[i + 3]) * 0x100000001b3ull;
        a = (a << 29) | (a >> 35);
        b = (b << 31) | (b >> 33);
        c = (c << 27) | (c >> 37);
        d = (d << 23) | (d >> 41);
    }
    return mix(a ^ mix(b ^ mix(c ^ mix(d))));
}

void ram_page_hashes(const uint8_t *ram, uint64_t npages, uint64_t *out)
{
    for (uint64_t p = 0; p < npages; p++)
        out[p] = page_hash(ram + p * 4096);
}

void ram_hash_list(const uint8_t *ram, const uint32_t *idx, uint64_t n, uint64_t *out)
{
    for (uint64_t i = 0; i < n; i++)
        out[idx[i]] = page_hash(ram + (uint64_t)idx[i] * 4096);
}

/* The indices where two hash arrays differ, into idx; returns how many. */
uint64_t ram_hash_diff(const uint64_t *a, const uint64_t *b, uint64_t n, uint32_t *idx)
{
    uint64_t k = 0;
    for (uint64_t i = 0; i < n; i++)
        if (a[i] != b[i])
            idx[k++] = (uint32_t)i;
    return k;
}

/* Restoring RAM: page idx[i] of RAM gets the 4 KiB at src[i]. */
void ram_copy_pages(uint8_t *ram, const uint32_t *idx, const uint64_t *src, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        memcpy(ram + (uint64_t)idx[i] * 4096, (const void *)(uintptr_t)src[i], 4096);
}
