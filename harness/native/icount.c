/*
 * icount.c: instructions per translated block, for deterministic time.
 *
 * Counting every instruction through Unicorn's `count` argument costs ~6x; a native
 * hook on each block entry costs ~15% (and on RV64 the block's code adds the count
 * itself while nothing is due, dispatch.c). The block hook adds the block's instruction
 * count to instret, so this file decodes each new block once, caches its count and
 * where its instructions start, and, while it has the bytes in hand, asks hooks.c to
 * hook the instructions the core must intercept (at every virtual address the block
 * is seen at).
 *
 * The cache is keyed by physical address and size (fetch.c), like QEMU's translated
 * blocks, so it survives address-space switches. Code rewritten in place is seen after
 * fence.i, which software must execute before running new code on real hardware too;
 * Unicorn itself notices rewritten code without it, so a missing fence.i can only make
 * instret inexact, never execution wrong.
 */
#include <string.h>

#include "hart.h"

#define MAP_PARCELS 256

static size_t slot_of(uint64_t paddr, uint32_t size)
{
    return (size_t)((paddr >> 1) ^ (paddr >> 13) ^ ((uint64_t)size << 7)) & (ICOUNT_SLOTS - 1);
}

void icount_flush(hart *h)
{
    h->xlat_epoch++;
    h->inline_epoch++;   /* dispatch.c: no block counts from its slot before a lookup */
    if (++h->icache_gen == 0) {   /* wrapped: really clear, once every 2^32 flushes */
        memset(h->icache, 0, sizeof h->icache);
        h->icache_gen = 1;
    }
}

static uint32_t parcel(const uint8_t *bytes, uint32_t off)
{
    return (uint32_t)bytes[off] | ((uint32_t)bytes[off + 1] << 8);
}

/* The block's bytes: straight from host RAM when it lies in one physical page,
 * otherwise through Unicorn (a block ending with an instruction that straddles a page). */
static const uint8_t *block_bytes(hart *h, uint64_t vaddr, uint64_t paddr, uint32_t size,
                                  uint8_t *buf)
{
    if ((vaddr & (PAGE_SIZE - 1)) + size <= PAGE_SIZE) {
        const uint8_t *p = ram_ptr(h, paddr, size);
        if (p)
            return p;
    }
    if (size > MAX_BLOCK_BYTES || !vmem_read(h, vaddr, UC_PROT_EXEC, buf, size))
        return NULL;
    return buf;
}

/* Walk a block's instructions: count them, map where they start, and (scan) hook those
 * that need it at `vaddr`. */
static void decode_block(hart *h, struct block_info *b, uint64_t vaddr, const uint8_t *bytes,
                         bool *added)
{
    memset(b->starts, 0, sizeof b->starts);
    b->count = 0;
    b->hookable = 0;
    for (uint32_t off = 0; off + 2 <= b->size;) {
        uint32_t insn = parcel(bytes, off);
        unsigned len = insn_len(insn);
        if (len == 4 && off + 4 <= b->size)
            insn |= parcel(bytes, off + 2) << 16;
        if (off / 2 < MAP_PARCELS)
            b->starts[off / 128] |= 1ull << ((off / 2) % 64);
        b->count++;
        enum insn_kind kind = classify(insn, h->s.xlen);
        if (kind != INSN_NONE) {
            b->hookable++;
            hook_insn_at(h, vaddr + off, insn, kind, added);
        }
        off += len;
    }
    b->vaddr = vaddr;
}

/* A block_info L0 entries may point at is about to describe something else (another
 * block, or its code seen at another address). L0 hits do not look at the block_info
 * itself, so the entries made for it go: just those when it recorded them all, every
 * L0 entry (a new epoch) when it was seen at more slots than it keeps. Clearing only
 * its own entries matters for kernels that fork and exec a lot (xv6's usertests):
 * new code replaces cached blocks some 70,000 times per billion instructions, and a
 * new epoch each time made most block entries miss L0. */
static void retire_l0(hart *h, struct block_info *b)
{
    if (b->gen != h->icache_gen)
        return;
    if (b->inlined) {
        /* Translated code counts it through a slot that names it (dispatch.c): every
         * slot must be checked again by a call to the block hook. */
        h->inline_epoch++;
        b->inlined = false;
    }
    if (b->nl0 > L0_REFS) {
        h->xlat_epoch++;
    } else {
        for (unsigned i = 0; i < b->nl0; i++)
            if (h->l0[b->l0[i]].b == b)
                h->l0[b->l0[i]].b = NULL, h->l0[b->l0[i]].size = 0;
        if (h->blk == b)
            h->blk_epoch = h->xlat_epoch - 1;   /* no fast re-entry into it either */
    }
    b->nl0 = 0;
}

/* Make the L0 entry at `slot` point at `b`, and remember the slot in it. */
static void set_l0(hart *h, size_t slot, uint64_t vaddr, uint32_t size, struct block_info *b)
{
    h->l0[slot] = (struct l0_entry){vaddr, h->satp, b, h->xlat_epoch, (uint16_t)size, (uint16_t)b->count};
    for (unsigned i = 0; i < b->nl0 && i < L0_REFS; i++)
        if (b->l0[i] == slot)
            return;
    if (b->nl0 < L0_REFS)
        b->l0[b->nl0] = (uint16_t)slot;
    if (b->nl0 <= L0_REFS)
        b->nl0++;
}

/* The cached info for the block at `vaddr`, decoding it on first sight, and its
 * instruction count. `*retranslate` is set when new code hooks were installed: Unicorn
 * only plants a hook call when it translates, so the block must be translated again
 * before it runs. */
const struct block_info *block_lookup(hart *h, uint64_t vaddr, uint32_t size, bool *retranslate,
                                      uint32_t *count)
{
    uint8_t *buf = h->block_buf;
    uint64_t paddr;

    *retranslate = false;
    if (h->satp_stale)
        fetch_paddr(h, vaddr, &paddr);   /* settle satp (and the epoch) first */
    size_t slot = l0_slot(vaddr);
    const struct l0_entry *l0 = l0_hit(h, vaddr, size);
    if (l0) {
        *count = l0->count;
        return l0->b;
    }
    if (!fetch_paddr(h, vaddr, &paddr))
        paddr = vaddr;   /* cannot happen for a block Unicorn just fetched */
    struct block_info *b = &h->icache[slot_of(paddr, size)];
    if (b->gen == h->icache_gen && b->paddr == paddr && b->size == size) {
        /* Its page may have lost its guard since (guard.c guard_release): Unicorn has
         * just translated the block again, and the page is guarded again before it runs. */
        guard_code(h, vaddr, paddr, size);
        if (b->vaddr != vaddr && b->hookable) {   /* the same code at another address */
            const uint8_t *bytes = block_bytes(h, vaddr, paddr, size, buf);
            if (bytes) {
                retire_l0(h, b);
                decode_block(h, b, vaddr, bytes, retranslate);
            }
        }
        set_l0(h, slot, vaddr, size, b);
        *count = b->count;
        return b;
    }
    guard_code(h, vaddr, paddr, size);
    const uint8_t *bytes = block_bytes(h, vaddr, paddr, size, buf);
    if (!bytes) {   /* unreadable: never expected; count conservatively, cache nothing */
        memset(&h->unreadable, 0, sizeof h->unreadable);
        h->unreadable.count = (size + 3) / 4;
        *count = h->unreadable.count;
        return &h->unreadable;
    }
    retire_l0(h, b);
    b->paddr = paddr;
    b->size = size;
    b->gen = h->icache_gen;
    b->nl0 = 0;
    b->inlined = false;
    decode_block(h, b, vaddr, bytes, retranslate);
    set_l0(h, slot, vaddr, size, b);
    *count = b->count;
    return b;
}

/* Instructions of the current block that start before `addr` (all of them if `addr`
 * lies outside it, e.g. a fetch fault while translating the next block). */
uint32_t insns_before(hart *h, uint64_t addr)
{
    if (addr < h->blk_start || addr >= h->blk_start + h->blk_size)
        return h->blk_count;
    uint32_t k = (uint32_t)(addr - h->blk_start) / 2;
    if (k < MAP_PARCELS && h->blk && h->blk->size == h->blk_size && h->blk->count) {
        uint32_t n = 0;
        for (uint32_t w = 0; w < k / 64; w++)
            n += (uint32_t)__builtin_popcountll(h->blk->starts[w]);
        if (k % 64)
            n += (uint32_t)__builtin_popcountll(h->blk->starts[k / 64] & ((1ull << (k % 64)) - 1));
        return n;
    }
    /* Long block: walk it again from the start. */
    uint32_t n = 0, insn;
    for (uint64_t pc = h->blk_start; pc < addr; pc += insn_len(insn), n++)
        if (!read_insn(h, pc, &insn))
            break;
    return n;
}

/* Execution leaves the current block at `addr` without running it (an exception):
 * only the instructions before it retired. */
void retire_before(hart *h, uint64_t addr)
{
    h->accounted = true;
    h->s.instret = h->blk_instret + insns_before(h, addr);
}

/* The core completed the instruction at `addr` itself and redirects execution. */
void retire_through(hart *h, uint64_t addr)
{
    h->accounted = true;
    h->s.instret = h->blk_instret + insns_before(h, addr) + 1;
}
