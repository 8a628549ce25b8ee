/*
 * idlewatch.c: what one hart's engine touches while the scheduler tries to prove that
 * the hart spins in a loop that changes nothing (harness/machine/idle.py).
 *
 * A watch is a block hook on that hart's engine alone, and then (watch_memory) a
 * memory hook (loads and stores, every address), recording the virtual pages the hart loads from or stores to
 * and the translated blocks it enters (start, size). The callbacks only record: they
 * never stop the engine or change its state, so a watched turn runs exactly as any
 * other (slower: a memory hook sends every load and store through Unicorn's slow
 * path, which is why a watch lives for a probe's turns only). Its own small library,
 * apart from the core (libprivlab_hart.so): it knows nothing of the core's state.
 *
 * Sets that grow past their bounds are marked overflowed: a loop that touches that
 * much is not one the scheduler parks.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <unicorn/unicorn.h>

#define WATCH_PAGES 64      /* distinct virtual pages, at most */
#define WATCH_BLOCKS 1024   /* hash slots for distinct blocks (at most half used) */
#define WATCH_ACCESSES 8192 /* hash slots for distinct accesses (at most half used) */
#define PAGE_SHIFT 12

struct block_key {
    uint64_t start;
    uint32_t size;
    bool used;
    uint64_t count;         /* times entered */
};

struct access_key {
    uint64_t addr;
    uint32_t size;
    bool used;
};

struct watch {
    uc_engine *uc;
    struct access_key accesses[WATCH_ACCESSES];
    unsigned naccesses;
    uc_hook mem, block;
    uint64_t pages[WATCH_PAGES];
    unsigned npages, last;
    struct block_key blocks[WATCH_BLOCKS];
    unsigned nblocks;
    bool overflow;
    bool stored;            /* a store since the last clear */
    bool has_mem;           /* the memory hook is on */
};

static void note_page(struct watch *w, uint64_t page)
{
    if (w->npages && w->pages[w->last] == page)
        return;
    for (unsigned i = 0; i < w->npages; i++) {
        if (w->pages[i] == page) {
            w->last = i;
            return;
        }
    }
    if (w->npages == WATCH_PAGES) {
        w->overflow = true;
        return;
    }
    w->last = w->npages;
    w->pages[w->npages++] = page;
}

/* Each distinct (address, size) loaded or stored: what the loop depends on, to the byte. */
static void note_access(struct watch *w, uint64_t addr, uint32_t size)
{
    unsigned i = (unsigned)((addr * 0x9E3779B97F4A7C15ull) >> 51) % WATCH_ACCESSES;
    for (unsigned n = 0; n < WATCH_ACCESSES; n++, i = (i + 1) % WATCH_ACCESSES) {
        struct access_key *k = &w->accesses[i];
        if (!k->used) {
            if (2 * w->naccesses >= WATCH_ACCESSES) {
                w->overflow = true;
                return;
            }
            *k = (struct access_key){addr, size, true};
            w->naccesses++;
            return;
        }
        if (k->addr == addr && k->size == size)
            return;
    }
}

static void on_mem(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value,
                   void *user)
{
    struct watch *w = user;
    (void)uc; (void)value;
    if (type == UC_MEM_WRITE)
        w->stored = true;
    note_access(w, addr, (uint32_t)size);
    note_page(w, addr >> PAGE_SHIFT);
    if (size > 1)   /* a misaligned access may reach into the next page */
        note_page(w, (addr + (uint64_t)size - 1) >> PAGE_SHIFT);
}

static void on_block(uc_engine *uc, uint64_t addr, uint32_t size, void *user)
{
    struct watch *w = user;
    (void)uc;
    unsigned i = (unsigned)((addr >> 1) * 0x9E3779B1u) % WATCH_BLOCKS;
    for (unsigned n = 0; n < WATCH_BLOCKS; n++, i = (i + 1) % WATCH_BLOCKS) {
        struct block_key *k = &w->blocks[i];
        if (!k->used) {
            if (2 * w->nblocks >= WATCH_BLOCKS) {
                w->overflow = true;
                return;
            }
            *k = (struct block_key){addr, size, true, 1};
            w->nblocks++;
            return;
        }
        if (k->start == addr && k->size == size) {
            k->count++;
            return;
        }
    }
}

/* A watch of the blocks `uc` enters (those translated from now on: the caller drops
 * the engine's translations); NULL if Unicorn refuses the hook. */
void *watch_new(uc_engine *uc)
{
    struct watch *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->uc = uc;
    if (uc_hook_add(uc, &w->block, UC_HOOK_BLOCK, (void *)on_block, w, 1, 0) != UC_ERR_OK) {
        free(w);
        return NULL;
    }
    return w;
}

/* Watch loads and stores too (only blocks translated from now on call the hook: the
 * caller drops the engine's translations). Returns 0 if Unicorn refuses the hook. */
int watch_memory(struct watch *w)
{
    if (w->has_mem)
        return 1;
    if (uc_hook_add(w->uc, &w->mem, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, (void *)on_mem, w,
                    1, 0) != UC_ERR_OK)
        return 0;
    w->has_mem = true;
    return 1;
}

/* The hooks go (Unicorn frees them when the engine next returns from a run). */
void watch_free(struct watch *w)
{
    if (!w)
        return;
    if (w->has_mem)
        uc_hook_del(w->uc, w->mem);
    uc_hook_del(w->uc, w->block);
    free(w);
}

/* Forget what was recorded: record again from here. */
void watch_clear(struct watch *w)
{
    w->npages = w->last = w->nblocks = 0;
    w->overflow = false;
    w->stored = false;
    for (unsigned i = 0; i < WATCH_BLOCKS; i++)
        w->blocks[i].used = false;
    for (unsigned i = 0; i < WATCH_ACCESSES; i++)
        w->accesses[i].used = false;
    w->naccesses = 0;
}

/* The virtual page numbers recorded, into out (cap of them): how many, or -1 when a
 * set overflowed. */
int64_t watch_pages(const struct watch *w, uint64_t *out, uint64_t cap)
{
    if (w->overflow || w->npages > cap)
        return -1;
    for (unsigned i = 0; i < w->npages; i++)
        out[i] = w->pages[i];
    return w->npages;
}

/* The blocks recorded, as (start, size) pairs into out (cap pairs): how many, or -1. */
int64_t watch_blocks(const struct watch *w, uint64_t *out, uint64_t cap)
{
    if (w->overflow || w->nblocks > cap)
        return -1;
    uint64_t n = 0;
    for (unsigned i = 0; i < WATCH_BLOCKS; i++) {
        if (w->blocks[i].used) {
            out[2 * n] = w->blocks[i].start;
            out[2 * n + 1] = w->blocks[i].size;
            n++;
        }
    }
    return (int64_t)n;
}

/* A restored snapshot's watch: what the watch it replaces had recorded. */
void watch_note(struct watch *w, uint64_t page)
{
    note_page(w, page);
}

void watch_note_block(struct watch *w, uint64_t start, uint32_t size)
{
    on_block(w->uc, start, size, w);
}

void watch_set_overflow(struct watch *w)
{
    w->overflow = true;
}

/* Did the hart store anything since the last clear? */
int watch_stored(const struct watch *w)
{
    return w->stored;
}

void watch_set_stored(struct watch *w)
{
    w->stored = true;
}

/* The accesses recorded, as (address, size) pairs into out (cap pairs): how many, or -1. */
int64_t watch_accesses(const struct watch *w, uint64_t *out, uint64_t cap)
{
    if (w->overflow || w->naccesses > cap)
        return -1;
    uint64_t n = 0;
    for (unsigned i = 0; i < WATCH_ACCESSES; i++) {
        if (w->accesses[i].used) {
            out[2 * n] = w->accesses[i].addr;
            out[2 * n + 1] = w->accesses[i].size;
            n++;
        }
    }
    return (int64_t)n;
}

void watch_note_access(struct watch *w, uint64_t addr, uint32_t size)
{
    note_access(w, addr, size);
}

/* The blocks recorded with how often each was entered, as (start, size, count)
 * triples into out (cap triples): how many, or -1. */
int64_t watch_block_counts(const struct watch *w, uint64_t *out, uint64_t cap)
{
    if (w->overflow || w->nblocks > cap)
        return -1;
    uint64_t n = 0;
    for (unsigned i = 0; i < WATCH_BLOCKS; i++) {
        if (w->blocks[i].used) {
            out[3 * n] = w->blocks[i].start;
            out[3 * n + 1] = w->blocks[i].size;
            out[3 * n + 2] = w->blocks[i].count;
            n++;
        }
    }
    return (int64_t)n;
}
