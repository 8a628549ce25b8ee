/*
 * guard.c: code-page guards, which keep Unicorn's self-modifying-code detection exact
 * while stores to data pages run at full speed.
 *
 * Unicorn has no dirty-memory bitmap (docs/unicorn.md#a-memory-hook-over-ram-slows-every-store).
 * A TLB entry for a RAM page starts "not dirty": its first store takes the slow path,
 * which invalidates translated code on the page, and then marks that one entry dirty,
 * so later stores through it skip the check. When a block is translated on a page,
 * Unicorn makes only the translating virtual address's entry "not dirty" again. A store
 * through another, already dirty, entry for the same physical page (a kernel's direct
 * map of RAM, say, writing a new program's code where an old one ran) then leaves the
 * old translation in place, and the hart runs code that is no longer there
 * (docs/unicorn.md#a-dirty-alias-hides-rewritten-code).
 *
 * A memory hook whose range covers a page keeps every entry for it "not dirty". So the
 * core guards each physical page it has seen code on with such a hook (bounded to the
 * page's range, of the unmapped-fetch kind, whose callback never runs for RAM), and
 * flushes Unicorn's TLB when it adds one: no dirty entry for the page survives, and none
 * can appear. Pages that only hold data have no guard and keep the fast path.
 *
 * Adjacent pages share one hook. When GUARD_MAX ranges are in use (code scattered over
 * RAM by many programs), one more hook covers all of RAM (every store slow, as exact as
 * before) and the core asks the run loop for a restart (STOP_RESUME, at the next block
 * boundary). Between runs, hart_resume drops every guard and empties Unicorn's
 * translations and the decoded-block cache, so each page code runs on is guarded again
 * when it next runs. Unicorn frees deleted hooks only when uc_emu_start returns, which
 * the restart also brings about after many merges.
 */
#include "hart.h"

#define GUARD_RESTART 256   /* deleted hooks that make the run loop restart Unicorn */

static bool never_handled(uc_engine *uc, uc_mem_type type, uint64_t addr, int size,
                          int64_t value, void *user)
{
    (void)uc; (void)type; (void)addr; (void)size; (void)value; (void)user;
    return false;
}

static void drop(hart *h, unsigned i)
{
    uc_hook_del(h->uc, h->guards[i].handle);
    h->guards_deleted++;
    h->guards[i] = h->guards[--h->nguards];
}

static bool add(hart *h, struct guard *g, uint64_t lo, uint64_t hi)
{
    if (uc_hook_add(h->uc, &g->handle, UC_HOOK_MEM_FETCH_UNMAPPED, (void *)never_handled,
                    h, lo, hi) != UC_ERR_OK)
        return false;
    g->lo = lo;
    g->hi = hi;
    return true;
}

/* The run loop restarts Unicorn at the next block boundary (hooks.c, interrupt.c). */
static void want_resume(hart *h)
{
    h->resume_wanted = true;
    h->deadline = 0;
}

/* Every store to RAM takes the exact path until the run loop resets the guards. */
static void guard_all(hart *h)
{
    if (!h->guard_all_on && add(h, &h->guard_all, h->ram_base, h->ram_base + h->ram_size - 1))
        h->guard_all_on = true;
    uc_ctl_flush_tlb(h->uc);
    want_resume(h);
}

static void guard_page(hart *h, uint64_t page)
{
    uint64_t lo = page, hi = page + PAGE_SIZE - 1;
    if (h->guard_all_on || page < h->ram_base || page - h->ram_base >= h->ram_size)
        return;   /* all RAM is guarded, or outside RAM: the unmapped hooks cover it */
    for (unsigned i = 0; i < h->nguards; i++)
        if (h->guards[i].lo <= lo && hi <= h->guards[i].hi)
            return;
    /* Merge with the ranges this page touches. */
    for (unsigned i = 0; i < h->nguards;) {
        struct guard *g = &h->guards[i];
        if (g->hi + 1 == lo || hi + 1 == g->lo) {
            lo = g->lo < lo ? g->lo : lo;
            hi = g->hi > hi ? g->hi : hi;
            drop(h, i);
        } else {
            i++;
        }
    }
    if (h->nguards == GUARD_MAX || !add(h, &h->guards[h->nguards], lo, hi)) {
        guard_all(h);
        return;
    }
    h->nguards++;
    uc_ctl_flush_tlb(h->uc);   /* no dirty entry for the page survives */
    if (h->guards_deleted >= GUARD_RESTART)
        want_resume(h);
}

/* A block of `size` bytes at `vaddr` (physical `paddr`) is about to run for the first
 * time since the guards were last reset: guard its page, and the next one if it spills
 * over. */
void guard_code(hart *h, uint64_t vaddr, uint64_t paddr, uint32_t size)
{
    guard_page(h, paddr & ~(uint64_t)(PAGE_SIZE - 1));
    uint64_t last = vaddr + size - 1, last_pa;
    if (size && (last >> PAGE_SHIFT) != (vaddr >> PAGE_SHIFT) && fetch_paddr(h, last, &last_pa))
        guard_page(h, last_pa & ~(uint64_t)(PAGE_SIZE - 1));
}

/* Drop every guard and every translation: no code is left on an unguarded page. */
static void reset_all(hart *h)
{
    while (h->nguards)
        drop(h, h->nguards - 1);
    if (h->guard_all_on)
        uc_hook_del(h->uc, h->guard_all.handle);
    h->guard_all_on = false;
    h->guards_deleted = 0;
    uc_ctl_flush_tb(h->uc);
    uc_ctl_flush_tlb(h->uc);
    icount_flush(h);
    update_deadline(h);
}

/* Between turns of a machine of several harts: the other harts (or the host) wrote
 * the RAM pages `idx` (indices from ram_base), n of them, or some unknown set if n < 0.
 * Unicorn noticed none of it in this engine, so if any of them is a page this hart has
 * run code on (a guarded page), its translations go, and its guards with them: every
 * page is guarded again when code next runs from it. Returns whether it flushed. */
int hart_code_written(hart *h, const uint32_t *idx, int64_t n)
{
    if (!h->nguards && !h->guard_all_on)
        return 0;
    bool hit = n < 0 || h->guard_all_on;
    for (int64_t i = 0; !hit && i < n; i++) {
        uint64_t page = h->ram_base + (uint64_t)idx[i] * PAGE_SIZE;
        for (unsigned g = 0; g < h->nguards; g++)
            if (h->guards[g].lo <= page && page <= h->guards[g].hi) {
                hit = true;
                break;
            }
    }
    if (!hit)
        return 0;
    reset_all(h);
    return 1;
}

/* The physical ranges [lo, hi] this hart has code on, as pairs in out (at most cap
 * pairs): how many, or -1 when all of RAM is guarded. Its translations are all on
 * these pages (a page is guarded before code on it first runs, and guards go only
 * with every translation), so stores elsewhere cannot make any of them stale. */
int64_t hart_guard_ranges(hart *h, uint64_t *out, uint64_t cap)
{
    if (h->guard_all_on)
        return -1;
    uint64_t n = 0;
    for (unsigned g = 0; g < h->nguards && n < cap; g++, n++) {
        out[2 * n] = h->guards[g].lo;
        out[2 * n + 1] = h->guards[g].hi;
    }
    return (int64_t)n;
}

/* Between runs (STOP_RESUME): Unicorn has freed the deleted hooks. After the guards
 * overflowed, start again from none: no translation is left on an unguarded page. */
void hart_resume(hart *h)
{
    h->resume_wanted = false;
    if (h->flush_wanted) {            /* a fence.i on a hart that shares code (hooks.c) */
        h->flush_wanted = false;
        uc_ctl_flush_tb(h->uc);
    }
    h->guards_deleted = 0;
    if (h->guard_all_on)
        reset_all(h);
}
