/*
 * codesync.c: which pages with other harts' code a hart's turn wrote (several harts).
 *
 * Each hart's engine notices only its own stores to code (guard.c), so after a turn of
 * hart k the pages written meanwhile that another hart has run code on must be found
 * (harness/machine/codesync.py then has those harts drop their translations before
 * their next turn). Asking the host kernel about all of RAM costs ~90 us a turn (the
 * page-table walk of PAGEMAP_SCAN over 128 MiB); asking only about the other harts'
 * guarded ranges (a few pages, usually) costs a couple of microseconds. A hart's
 * translations all lie on its guarded pages, so nothing else can hold stale code; a
 * page written while no hart had code there keeps its written mark until a scan covers
 * it, which can only cause a flush that was not needed.
 */
#include <stdlib.h>

#include "hart.h"

struct ram_tracker;
int64_t ram_tracker_scan_range(struct ram_tracker *t, uint64_t lo, uint64_t hi, uint32_t *idx,
                               uint64_t cap);
int64_t hart_guard_ranges(hart *h, uint64_t *out, uint64_t cap);

#define SPANS (GUARD_MAX * 8)
/* Spans this close (bytes) are scanned in one call: walking the pages between costs
 * the kernel less than another call's entry and address-space lookup. */
#define BRIDGE (256 * PAGE_SIZE)

static int by_start(const void *a, const void *b)
{
    uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
    return x < y ? -1 : x > y;
}

/* After hart k's turn (harts[0..n) all of the machine's, over RAM at ram_base of
 * ram_size bytes): the pages written on the other harts' code pages, as indices into
 * idx (cap of them); how many, or -1 if the kernel failed (assume every page). */
int64_t codesync_scan(struct ram_tracker *t, hart **harts, uint32_t n, uint32_t k,
                      uint64_t ram_base, uint64_t ram_size, uint32_t *idx, uint64_t cap)
{
    static uint64_t spans[SPANS][2];
    uint64_t count = 0;
    bool all = false;
    for (uint32_t j = 0; j < n && !all; j++) {
        if (j == k)
            continue;
        int64_t got = hart_guard_ranges(harts[j], &spans[count][0], SPANS - count);
        if (got < 0)
            all = true;
        else
            count += (uint64_t)got;
    }
    if (all)
        return ram_tracker_scan_range(t, 0, ram_size, idx, cap);
    qsort(spans, count, sizeof spans[0], by_start);
    int64_t found = 0;
    for (uint64_t i = 0; i < count;) {
        uint64_t first = i, lo = spans[i][0], hi = spans[i][1];   /* inclusive */
        for (i++; i < count && spans[i][0] <= hi + 1 + BRIDGE; i++)
            hi = spans[i][1] > hi ? spans[i][1] : hi;
        int64_t got = ram_tracker_scan_range(t, lo - ram_base, hi + 1 - ram_base,
                                             idx + found, cap - (uint64_t)found);
        if (got < 0)
            return -1;
        /* Keep the pages of the spans; those of the gaps bridged hold no other hart's
         * code, so their marks were not wanted. */
        int64_t kept = 0;
        for (int64_t g = 0; g < got; g++) {
            uint64_t pa = ram_base + (uint64_t)idx[found + g] * PAGE_SIZE;
            for (uint64_t s = first; s < i; s++) {
                if (pa >= spans[s][0] && pa <= spans[s][1]) {
                    idx[found + kept++] = idx[found + g];
                    break;
                }
            }
        }
        found += kept;
    }
    return found;
}

/*
 * The pages each hart must hear about before its next turn, kept here so that turns
 * run back to back (turns.c) and turns run from Python (harness/machine/codesync.py)
 * share one record. A hart's list that overflows, or a scan the kernel failed, counts
 * as "every page": a flush of all its translations, exact but slower.
 */
int64_t ram_tracker_scan(struct ram_tracker *t, uint32_t *idx, uint64_t cap);
int hart_code_written(hart *h, const uint32_t *idx, int64_t n);

#define PENDING_MAX 1024

struct pending {
    bool all;
    uint32_t n;
    uint32_t page[PENDING_MAX];
};

struct codesync {
    struct ram_tracker *t;          /* NULL: the kernel cannot tell */
    hart *harts[MAX_HARTS];
    uint32_t n;
    uint64_t ram_base, npages;
    uint32_t *idx;                  /* scan results, one slot per page of RAM */
    struct pending pending[MAX_HARTS];
    uint64_t flushes[MAX_HARTS];    /* turns that began by dropping every translation */
    uint64_t drops[MAX_HARTS];      /* turns that began by dropping some pages' blocks */
};

struct codesync *codesync_new(struct ram_tracker *t, hart **harts, uint32_t n,
                              uint64_t ram_base, uint64_t ram_size)
{
    if (n > MAX_HARTS)
        return NULL;
    struct codesync *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->npages = ram_size / PAGE_SIZE;
    c->idx = calloc(c->npages ? c->npages : 1, sizeof *c->idx);
    if (!c->idx) {
        free(c);
        return NULL;
    }
    c->t = t;
    c->n = n;
    c->ram_base = ram_base;
    for (uint32_t j = 0; j < n; j++)
        c->harts[j] = harts[j];
    return c;
}

void codesync_free(struct codesync *c)
{
    if (c) {
        free(c->idx);
        free(c);
    }
}

static void note(struct pending *p, const uint32_t *pages, int64_t n)
{
    if (n < 0) {
        p->all = true;
        return;
    }
    for (int64_t i = 0; i < n && !p->all; i++) {
        uint32_t k = 0;
        while (k < p->n && p->page[k] != pages[i])
            k++;
        if (k < p->n)
            continue;
        if (p->n == PENDING_MAX)
            p->all = true;
        else
            p->page[p->n++] = pages[i];
    }
}

/* Before a run: what the host wrote since the last (a program loaded, a debugger's
 * store) is news to every hart. Looking at all of RAM also clears the marks of pages
 * written while no hart had code on them. */
void codesync_run_begins(struct codesync *c)
{
    int64_t n = c->t ? ram_tracker_scan(c->t, c->idx, c->npages) : -1;
    if (n == 0)
        return;
    for (uint32_t j = 0; j < c->n; j++)
        note(&c->pending[j], c->idx, n);
}

/* Hart k's turn is over: what it (or the host meanwhile) wrote on pages the others
 * have code on is news to them. */
void codesync_turn_ended(struct codesync *c, uint32_t k)
{
    int64_t n = -1;
    if (c->t) {
        n = codesync_scan(c->t, c->harts, c->n, k, c->ram_base, c->npages * PAGE_SIZE,
                          c->idx, c->npages);
        if (n == 0)
            return;
    }
    for (uint32_t j = 0; j < c->n; j++)
        if (j != k)
            note(&c->pending[j], c->idx, n);
}

/* Before hart k runs: drop its translations of code rewritten since its last turn.
 * Returns 1 if it dropped any. */
int codesync_turn_begins(struct codesync *c, uint32_t k)
{
    struct pending *p = &c->pending[k];
    if (!p->all && !p->n)
        return 0;
    int dropped = hart_code_written(c->harts[k], p->page, p->all ? -1 : (int64_t)p->n);
    if (dropped == CODE_DROPPED_ALL)
        c->flushes[k]++;
    else if (dropped == CODE_DROPPED_PAGES)
        c->drops[k]++;
    p->all = false;
    p->n = 0;
    return dropped != 0;
}

/* For snapshots (harness/machine/snapshot.py): hart k's pending pages into out (cap
 * of them); how many, or -1 for "every page". */
int64_t codesync_pending(struct codesync *c, uint32_t k, uint32_t *out, uint64_t cap)
{
    struct pending *p = &c->pending[k];
    if (p->all)
        return -1;
    for (uint32_t i = 0; i < p->n && i < cap; i++)
        out[i] = p->page[i];
    return p->n;
}

void codesync_set_pending(struct codesync *c, uint32_t k, const uint32_t *pages, int64_t n)
{
    struct pending *p = &c->pending[k];
    p->all = false;
    p->n = 0;
    note(p, pages, n);
}

uint64_t codesync_flushes(struct codesync *c, uint32_t k)
{
    return c->flushes[k];
}

uint64_t codesync_drops(struct codesync *c, uint32_t k)
{
    return c->drops[k];
}
