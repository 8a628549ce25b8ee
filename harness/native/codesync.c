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
        uint64_t lo = spans[i][0], hi = spans[i][1];   /* inclusive */
        for (i++; i < count && spans[i][0] <= hi + 1; i++)
            hi = spans[i][1] > hi ? spans[i][1] : hi;
        int64_t got = ram_tracker_scan_range(t, lo - ram_base, hi + 1 - ram_base,
                                             idx + found, cap - (uint64_t)found);
        if (got < 0)
            return -1;
        found += got;
    }
    return found;
}
