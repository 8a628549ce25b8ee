/*
 * tbcache.c: translated blocks Unicorn's jump cache keeps losing, found without its
 * hash table.
 *
 * Unicorn finds the block to run next (after an indirect jump, a CSR instruction, a
 * return to its main loop) in the CPU's jump cache: 4096 slots indexed by a hash of
 * the virtual pc in which every page of code has only 64 slots (QEMU 5.0's
 * tb_jmp_cache_hash_func). Two blocks of one page that are entered often and fall in
 * the same slot evict each other each time, and each miss goes to tb_htable_lookup:
 * the pc translated, a hash of five fields, a walk of the global hash table. In xv6's
 * usertests that happened 30 million times in 3 G instructions, nearly all at four
 * pcs of push_off and pop_off (0x80000c36 and 0x80000cb4 share a slot), about a tenth
 * of the host's time.
 *
 * So libunicorn's calls to tb_htable_lookup (through its PLT, plt.c) come here first
 * for a core's RV64 hart. A second, per-hart cache keyed by virtual pc holds the block
 * Unicorn found last for it, with the physical address it was found at. A hit is a
 * block that would pass the checks tb_htable_lookup makes: its pc, cs_base, flags and
 * compile flags are the ones asked for, it is not invalidated (CF_INVALID, which
 * Unicorn sets on a block whose code was written or removed), it lies in one page and
 * the pc translates to the same physical address now (Unicorn's own
 * get_page_addr_code, as tb_htable_lookup itself starts). Blocks are freed only all at
 * once by tb_flush, counted here through libunicorn's PLT: a flush empties this cache.
 *
 * The first blocks Unicorn returns are checked against what was asked for; if the
 * fields below are not where this file expects them, the cache stays off.
 */
#include <stdlib.h>
#include <string.h>

#include "hart.h"
#include "portable.h"

/* The start of QEMU 5.0's TranslationBlock (include/exec/exec-all.h), RV64 guest. */
struct tb_head {
    uint64_t pc, cs_base;
    uint32_t flags;
    uint16_t size, icount;
    uint32_t cflags;
};

#define CF_INVALID 0x00040000u
#define CF_HASH_MASK 0xff0b7fffu   /* COUNT | LAST_IO | USE_ICOUNT | PARALLEL | CLUSTER */
#define TBC_SLOTS 1024             /* power of two */
#define TBC_CHECKS 64              /* blocks checked against the request before use */

void *tb_htable_lookup_riscv64(void *cpu, uint64_t pc, uint64_t cs_base, uint32_t flags,
                               uint32_t cf_mask);
uint64_t get_page_addr_code_riscv64(void *env, uint64_t addr);
void tb_flush_riscv64(void *cpu);

struct tbc_entry {
    uint64_t pc, phys;
    const struct tb_head *tb;
};

struct tbcache {
    uint64_t gen;                  /* tb_flushes when filled */
    struct tbc_entry e[TBC_SLOTS];
    /* dispatch.c's slots for this hart's translated blocks (dispatch_ring_bytes), here
     * so that they go with the hart (hart_free frees this). */
    _Alignas(64) uint8_t ring[];
};

/* The hart's cache, made on first use with room for dispatch.c's ring. */
static struct tbcache *tbcache_of(hart *h)
{
    if (!h->tbcache && (h->tbcache = calloc(1, sizeof *h->tbcache + dispatch_ring_bytes())))
        h->tbcache->gen = UINT64_MAX;   /* not filled yet */
    return h->tbcache;
}

void *tbcache_ring(hart *h)
{
    struct tbcache *c = tbcache_of(h);
    return c && dispatch_ring_bytes() ? c->ring : NULL;
}

static uint64_t flushes;
static bool flushes_counted;       /* tb_flush is counted (libunicorn's PLT slot patched) */
static int state;                  /* 0 not installed, 1 on, -1 off */
static unsigned checked;
static uint64_t counts[2];         /* misses, hits */

static void tb_flush_counted(void *cpu)
{
    flushes++;
    tb_flush_riscv64(cpu);
}

uint64_t tb_flushes(void)
{
    return flushes;
}

bool tb_flushes_counted(void)
{
    return flushes_counted;
}

static size_t tbc_slot(uint64_t pc)
{
    return (size_t)((pc >> 1) ^ (pc >> 11)) & (TBC_SLOTS - 1);
}

static bool matches(const struct tb_head *tb, uint64_t pc, uint64_t cs_base, uint32_t flags,
                    uint32_t cf_mask)
{
    return tb->pc == pc && tb->cs_base == cs_base && tb->flags == flags &&
           (tb->cflags & (CF_HASH_MASK | CF_INVALID)) == cf_mask;
}

static void *lookup(void *cpu, uint64_t pc, uint64_t cs_base, uint32_t flags, uint32_t cf_mask)
{
    hart *h = hart_of_cpu(cpu);
    if (!h || !h->env || state <= 0)
        return tb_htable_lookup_riscv64(cpu, pc, cs_base, flags, cf_mask);
    struct tbcache *c = h->tbcache;
    if (!c || c->gen != flushes) {
        if (!c && !(c = tbcache_of(h)))
            return tb_htable_lookup_riscv64(cpu, pc, cs_base, flags, cf_mask);
        memset(c->e, 0, sizeof c->e);
        c->gen = flushes;
    }
    struct tbc_entry *e = &c->e[tbc_slot(pc)];
    uint64_t phys = get_page_addr_code_riscv64(h->env, pc);
    if (e->tb && e->pc == pc && e->phys == phys && phys != UINT64_MAX &&
        matches(e->tb, pc, cs_base, flags, cf_mask)) {
        counts[1]++;
        return (void *)e->tb;
    }
    counts[0]++;
    const struct tb_head *tb = tb_htable_lookup_riscv64(cpu, pc, cs_base, flags, cf_mask);
    if (!tb)
        return NULL;
    if (checked < TBC_CHECKS) {
        if (!matches(tb, pc, cs_base, flags, cf_mask)) {
            state = -1;   /* not the layout above: Unicorn's lookup only, from now on */
            return (void *)tb;
        }
        checked++;
    }
    if ((pc & (PAGE_SIZE - 1)) + tb->size <= PAGE_SIZE)   /* one page: page_addr[1] is -1 */
        *e = (struct tbc_entry){pc, phys, tb};
    return (void *)tb;
}

/* Once per process, before any core translates. */
void tbcache_install(void)
{
    if (state)
        return;
    state = -1;
    if (portable_mode())
        return;   /* portable.h: Unicorn's hash table alone */
    flushes_counted = plt_patch("tb_flush_riscv64", (void *)tb_flush_counted);
    if (flushes_counted && plt_patch("tb_htable_lookup_riscv64", (void *)lookup))
        state = 1;
}

uint64_t tbcache_count(bool hits)
{
    return counts[hits];
}
