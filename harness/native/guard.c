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
 *
 * A guard is needed only while its page holds a translated block. Unicorn says when a
 * page gets its first block and loses its last one (QEMU 5.0's tlb_protect_code and
 * tlb_unprotect_code, called through libunicorn's PLT from tb_link_page and from the
 * invalidation a store to code makes). Pages of code that is gone keep being written:
 * a kernel that frees an exited program's pages fills them (xv6's kfree and kalloc
 * memset every byte), and under a guard each of those stores took the slow path, in
 * xv6's usertests a sixth of the host's time. So a guarded page that loses its last
 * block loses its guard at the next block entry (guard_release; not during the store,
 * inside Unicorn's invalidation), unless a block was translated on it again before
 * then; its later stores are fast again once Unicorn has marked their TLB entries
 * dirty. Code that runs there again is guarded again first: the decoded-block cache
 * (icount.c) checks the guard on every lookup, and the L0 in front of it starts again,
 * so every block goes through that lookup. Machines of several harts keep their guards:
 * the other harts' stores are seen through them (codesync.c).
 *
 * Unicorn gives a page up only when its last block is gone, and a store invalidates
 * just the blocks whose bytes it overwrites: a page filled byte by byte loses its last
 * block near its end, so most of its stores are slow all the same (xv6's kfree of a
 * page a child process ran code from: 18 million slow stores in the first 20 G
 * instructions of usertests). A store hook cannot count them (any UC_HOOK_MEM_WRITE
 * makes Unicorn emit every load and store without its TLB fast path), but the slow
 * path calls tb_invalidate_phys_page_fast through libunicorn's PLT, and the core
 * counts there: after a sweep of STORE_RUN stores over one guarded page (each right
 * after or right before the last, as a fill or a copy makes them), the page's blocks
 * are invalidated at once (tb_invalidate_phys_range, as Unicorn's own invalidation
 * would, block by block, a little later), Unicorn gives the page up, and its guard
 * goes. That is never wrong, only early: a block invalidated is translated again if
 * it runs again, from the bytes then in memory. Not while the block running now lies
 * on the page, whose own rewriting Unicorn must see exactly (its precise
 * self-modifying-code check, which needs the block still in place). And if code runs
 * again on a page soon after it was given up (a buffer filled on a page that also
 * holds code), sweeps must be 8 times longer for a while, up to STORE_RUN_MAX, so that
 * code is not translated again after every fill.
 */
#include "hart.h"
#include "portable.h"

/* libunicorn's own (through this library's linkage, not the patched PLT slots). */
void tlb_protect_code_riscv32(void *uc, uint64_t ram_addr);
void tlb_protect_code_riscv64(void *uc, uint64_t ram_addr);
void tlb_unprotect_code_riscv32(void *uc, uint64_t ram_addr);
void tlb_unprotect_code_riscv64(void *uc, uint64_t ram_addr);
uint64_t qemu_ram_addr_from_host_riscv32(void *uc, void *ptr);
uint64_t qemu_ram_addr_from_host_riscv64(void *uc, void *ptr);
void tb_invalidate_phys_range_riscv32(void *uc, uint64_t start, uint64_t end);
void tb_invalidate_phys_range_riscv64(void *uc, uint64_t start, uint64_t end);
void tb_invalidate_phys_page_fast_riscv32(void *uc, void *pages, uint64_t start, int len,
                                          uintptr_t retaddr);
void tb_invalidate_phys_page_fast_riscv64(void *uc, void *pages, uint64_t start, int len,
                                          uintptr_t retaddr);

#define GUARD_RESTART 256   /* deleted hooks that make the run loop restart Unicorn */
#define STORE_RUN 64        /* stores sweeping a guarded page before it is given up */
#define STORE_RUN_MAX 65536 /* the longest run asked for, after pages came back quickly */
#define GIVEUP_RECENT (1ull << 22)   /* code back on a page given up this recently... */
#define BACKOFF_INSNS (1ull << 28)   /* ...asks for longer runs for this long */

static uint64_t released, queued, given_up;
static void back_off(hart *h, uint64_t page);

static bool never_handled(uc_engine *uc, uc_mem_type type, uint64_t addr, int size,
                          int64_t value, void *user)
{
    (void)uc; (void)type; (void)addr; (void)size; (void)value; (void)user;
    return false;
}

/* The guard range `page` lies in (ranges are whole pages), or -1. */
static int covering(const hart *h, uint64_t page)
{
    for (unsigned i = 0; i < h->nguards; i++)
        if (h->guards[i].lo <= page && page <= h->guards[i].hi)
            return (int)i;
    return -1;
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
    if (covering(h, page) >= 0)
        return;
    back_off(h, page);
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

static bool know_ram_addr(hart *h);
static bool uncover(hart *h, uint64_t page);

/* Between turns of a machine of several harts: the other harts (or the host) wrote
 * the RAM pages `idx` (indices from ram_base), n of them, or some unknown set if n < 0.
 * Unicorn noticed none of it in this engine. The blocks this hart translated on those
 * of them it has run code on (its guarded pages) go, as Unicorn's own invalidation
 * drops the blocks of a page a store rewrote (tb_invalidate_phys_range: each block is
 * marked invalid, taken out of the lookups, and translated again from the new bytes if
 * it runs again), and their guards with them; its other blocks and guards stay, so
 * every translation is still on a guarded page. Dropping them all instead made xv6's
 * usertests on three harts translate the kernel again ~90 times a second, a quarter
 * of the host's time. An unknown set, or all of RAM guarded, still drops them all.
 * Returns CODE_DROPPED_ALL, CODE_DROPPED_PAGES, or 0 if none of its code was written. */
int hart_code_written(hart *h, const uint32_t *idx, int64_t n)
{
    if (!h->nguards && !h->guard_all_on)
        return 0;
    if (n < 0 || h->guard_all_on || !know_ram_addr(h)) {
        reset_all(h);
        return CODE_DROPPED_ALL;
    }
    bool hit = false;
    for (int64_t i = 0; i < n; i++) {
        uint64_t off = (uint64_t)idx[i] * PAGE_SIZE;
        if (covering(h, h->ram_base + off) < 0)
            continue;
        uint64_t start = h->ram_addr + off;
        if (h->s.xlen == 64)
            tb_invalidate_phys_range_riscv64(h->uc, start, start + PAGE_SIZE);
        else
            tb_invalidate_phys_range_riscv32(h->uc, start, start + PAGE_SIZE);
        uncover(h, h->ram_base + off);
        hit = true;
    }
    if (!hit)
        return 0;
    icount_flush(h);      /* the blocks decoded from the old bytes */
    update_deadline(h);
    return CODE_DROPPED_PAGES;
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

/* ---- guards of pages that no longer hold code ---- */

/* Where guest RAM starts among Unicorn's RAM addresses (ram_addr_t), learned once. */
static bool know_ram_addr(hart *h)
{
    if (!h->ram_addr_known && h->ram) {
        uint64_t a = h->s.xlen == 64 ? qemu_ram_addr_from_host_riscv64(h->uc, h->ram)
                                     : qemu_ram_addr_from_host_riscv32(h->uc, h->ram);
        h->ram_addr = a;
        h->ram_addr_known = a != UINT64_MAX;
    }
    return h->ram_addr_known;
}

/* The guest physical page of Unicorn's RAM address `ram_addr`, if it is in guest RAM. */
static bool ram_page(hart *h, uint64_t ram_addr, uint64_t *page)
{
    if (!know_ram_addr(h))
        return false;
    uint64_t off = ram_addr - h->ram_addr;
    if (off >= h->ram_size)
        return false;
    *page = h->ram_base + (off & ~(uint64_t)(PAGE_SIZE - 1));
    return true;
}

/* Whether the block running now has bytes on `page`. */
static bool running_on(hart *h, uint64_t page)
{
    uint64_t pa;
    if (!h->blk_size)
        return false;
    if (!fetch_paddr(h, h->blk_start, &pa) || (pa & ~(uint64_t)(PAGE_SIZE - 1)) == page)
        return true;   /* unknown counts as on it */
    uint64_t last = h->blk_start + h->blk_size - 1;
    if ((last >> PAGE_SHIFT) == (h->blk_start >> PAGE_SHIFT))
        return false;
    return !fetch_paddr(h, last, &pa) || (pa & ~(uint64_t)(PAGE_SIZE - 1)) == page;
}

/* A store took Unicorn's slow path through a page of RAM (its notdirty_write has just
 * checked it against the page's blocks; `ram_addr` is Unicorn's RAM address). A run is
 * a sweep: each store of it right after or right before the previous one, as a fill or
 * a copy makes them, not stores to a variable that shares a page with code. */
static void slow_store(void *uc, uint64_t ram_addr, unsigned size, bool rv64)
{
    hart *h = hart_of_engine(uc);
    uint64_t page, start;
    if (!h || h->s.shared_code || h->guard_all_on || !ram_page(h, ram_addr, &page))
        return;
    bool sweep = ram_addr == h->store_at + h->store_size || ram_addr + size == h->store_at;
    h->store_run = sweep && (h->store_at & ~(uint64_t)(PAGE_SIZE - 1)) ==
                            (ram_addr & ~(uint64_t)(PAGE_SIZE - 1)) ? h->store_run + 1 : 0;
    h->store_at = ram_addr;
    h->store_size = size;
    if (h->store_limit > STORE_RUN && h->s.instret >= h->store_limit_until)
        h->store_limit = STORE_RUN;
    if (h->store_run < (h->store_limit ? h->store_limit : STORE_RUN))
        return;
    h->store_run = 0;
    if (covering(h, page) < 0 || running_on(h, page))
        return;
    given_up++;
    h->giveup_page = page;
    h->giveup_instret = h->s.instret;
    start = ram_addr & ~(uint64_t)(PAGE_SIZE - 1);
    if (rv64)   /* Unicorn then calls tlb_unprotect_code: code_gone below */
        tb_invalidate_phys_range_riscv64(uc, start, start + PAGE_SIZE);
    else
        tb_invalidate_phys_range_riscv32(uc, start, start + PAGE_SIZE);
}

/* Code runs again on a page given up a moment ago: the sweep that gave it up was data
 * on a page that is still code. Longer runs are asked for a while, so such a page is
 * not given up and translated again over and over. */
static void back_off(hart *h, uint64_t page)
{
    if (page != h->giveup_page || h->s.instret - h->giveup_instret >= GIVEUP_RECENT)
        return;
    unsigned limit = h->store_limit ? h->store_limit : STORE_RUN;
    h->store_limit = limit * 8 < STORE_RUN_MAX ? limit * 8 : STORE_RUN_MAX;
    h->store_limit_until = h->s.instret + BACKOFF_INSNS;
    h->giveup_page = UNLIMITED;
}

static void slow_store32(void *uc, void *pages, uint64_t start, int len, uintptr_t retaddr)
{
    tb_invalidate_phys_page_fast_riscv32(uc, pages, start, len, retaddr);
    slow_store(uc, start, (unsigned)len, false);
}

static void slow_store64(void *uc, void *pages, uint64_t start, int len, uintptr_t retaddr)
{
    tb_invalidate_phys_page_fast_riscv64(uc, pages, start, len, retaddr);
    slow_store(uc, start, (unsigned)len, true);
}

/* A block was translated on the page: its guard, if any, stays. */
static void code_arrived(void *uc, uint64_t ram_addr)
{
    hart *h = hart_of_engine(uc);
    uint64_t page;
    if (!h || !h->nunguard || !ram_page(h, ram_addr, &page))
        return;
    for (unsigned i = 0; i < h->nunguard; i++)
        if (h->unguard[i] == page)
            h->unguard[i] = h->unguard[--h->nunguard];
}

/* The page lost its last translated block: its guard goes at the next block entry. */
static void code_gone(void *uc, uint64_t ram_addr)
{
    hart *h = hart_of_engine(uc);
    uint64_t page;
    if (!h || h->s.shared_code || h->guard_all_on || h->nunguard == GUARD_PENDING ||
        !ram_page(h, ram_addr, &page) || covering(h, page) < 0)
        return;
    for (unsigned i = 0; i < h->nunguard; i++)
        if (h->unguard[i] == page)
            return;
    h->unguard[h->nunguard++] = page;
    h->deadline = 0;   /* hooks.c: guard_release at the next block entry */
    queued++;
}

static void arrived32(void *uc, uint64_t ram_addr)
{
    tlb_protect_code_riscv32(uc, ram_addr);
    code_arrived(uc, ram_addr);
}

static void arrived64(void *uc, uint64_t ram_addr)
{
    tlb_protect_code_riscv64(uc, ram_addr);
    code_arrived(uc, ram_addr);
}

static void gone32(void *uc, uint64_t ram_addr)
{
    tlb_unprotect_code_riscv32(uc, ram_addr);
    code_gone(uc, ram_addr);
}

static void gone64(void *uc, uint64_t ram_addr)
{
    tlb_unprotect_code_riscv64(uc, ram_addr);
    code_gone(uc, ram_addr);
}

/* Take `page` out of the guard ranges: the range it is in goes, and what is left of it
 * on either side comes back as one or two ranges (already without dirty TLB entries,
 * so no flush). A split with no free range left keeps the page guarded. */
static bool uncover(hart *h, uint64_t page)
{
    int i = covering(h, page);
    if (i < 0)
        return false;
    struct guard g = h->guards[i];
    bool below = g.lo < page, above = page + PAGE_SIZE - 1 < g.hi;
    if (below && above && h->nguards == GUARD_MAX)
        return false;
    drop(h, (unsigned)i);
    if (below && !add(h, &h->guards[h->nguards++], g.lo, page - 1)) {
        h->nguards--;
        guard_all(h);
        return true;
    }
    if (above && !add(h, &h->guards[h->nguards++], page + PAGE_SIZE, g.hi)) {
        h->nguards--;
        guard_all(h);
        return true;
    }
    if (h->guards_deleted >= GUARD_RESTART)
        want_resume(h);
    return true;
}

/* At a block entry (hooks.c): the guards of the pages queued by `code_gone` go. */
void guard_release(hart *h)
{
    bool any = false;
    for (unsigned i = 0; i < h->nunguard && !h->guard_all_on; i++)
        if (uncover(h, h->unguard[i]))
            any = true, released++;
    h->nunguard = 0;
    if (any)
        h->xlat_epoch++;   /* every block is looked up again, and re-guarded if needed */
}

/* Once per process, from the first hart_new, before any core translates. */
void guard_install(void)
{
    if (portable_mode())
        return;   /* portable.h: a code page keeps its guard until the guards reset */
    /* A guard may go only if its page's new blocks are seen too: the second slot is
     * patched only once the first is. */
    if (plt_patch("tlb_protect_code_riscv32", (void *)arrived32) &&
        plt_patch("tlb_unprotect_code_riscv32", (void *)gone32))
        plt_patch("tb_invalidate_phys_page_fast_riscv32", (void *)slow_store32);
    if (plt_patch("tlb_protect_code_riscv64", (void *)arrived64) &&
        plt_patch("tlb_unprotect_code_riscv64", (void *)gone64))
        plt_patch("tb_invalidate_phys_page_fast_riscv64", (void *)slow_store64);
}

/* Since the process started: guards released (GUARD_RELEASED), pages queued for it
 * (GUARD_QUEUED), pages whose blocks were given up after a run of stores (GUARD_GIVEN_UP). */
uint64_t guard_count(unsigned what)
{
    return what == GUARD_RELEASED ? released : what == GUARD_QUEUED ? queued
         : what == GUARD_GIVEN_UP ? given_up : 0;
}
