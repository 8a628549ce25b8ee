/*
 * icount.c: instructions per translated block, for deterministic time.
 *
 * Counting every instruction through Unicorn's `count` argument costs ~6x; a native
 * hook on each block entry costs ~15%. The block hook adds the block's instruction
 * count to instret, so this file decodes each new (start, size) block once, caches the
 * count and the positions of its instructions, and, while it has the bytes in hand,
 * asks hooks.c to hook the instructions the core must intercept.
 *
 * The cache is keyed by virtual address, so it is flushed whenever the mapping of
 * code may have changed: a write to satp, sfence.vma, fence.i (csrops.c, hooks.c).
 */
#include <string.h>

#include "hart.h"

#define MAX_BLOCK_BYTES 4100   /* a TB never spans more than a page plus a parcel */
#define MAP_PARCELS 256

static size_t slot_of(uint64_t start)
{
    return (size_t)((start >> 1) ^ (start >> 13)) & (ICOUNT_SLOTS - 1);
}

void icount_flush(hart *h)
{
    for (size_t i = 0; i < ICOUNT_SLOTS; i++)
        h->icache[i].size = 0;
}

static uint32_t parcel(const uint8_t *bytes, uint32_t off)
{
    return (uint32_t)bytes[off] | ((uint32_t)bytes[off + 1] << 8);
}

/* Decode a block: count its instructions, map where they start, hook what needs it. */
static void decode_block(hart *h, struct block_info *b, const uint8_t *bytes, bool *added)
{
    memset(b->starts, 0, sizeof b->starts);
    b->count = 0;
    uint32_t off = 0;
    while (off + 2 <= b->size) {
        uint32_t insn = parcel(bytes, off);
        unsigned len = insn_len(insn);
        if (len == 4 && off + 4 <= b->size)
            insn |= parcel(bytes, off + 2) << 16;
        if (off / 2 < MAP_PARCELS)
            b->starts[off / 128] |= 1ull << ((off / 2) % 64);
        b->count++;
        enum insn_kind kind = classify(insn, h->s.xlen);
        if (kind != INSN_NONE)
            hook_insn_at(h, b->start + off, insn, kind, added);
        off += len;
    }
}

/* The cached info for a block, decoding it on first sight. `*retranslate` is set when
 * new code hooks were installed: Unicorn only plants a hook call when it translates,
 * so the block must be translated again before it runs. */
const struct block_info *block_lookup(hart *h, uint64_t start, uint32_t size, bool *retranslate)
{
    static uint8_t bytes[MAX_BLOCK_BYTES];
    struct block_info *b = &h->icache[slot_of(start)];

    *retranslate = false;
    if (b->start == start && b->size == size)
        return b;
    b->start = start;
    b->size = size;
    if (size > MAX_BLOCK_BYTES || uc_vmem_read(h->uc, start, UC_PROT_EXEC, bytes, size) != UC_ERR_OK) {
        b->count = (size + 3) / 4;   /* unreadable: never expected; keep counting */
        memset(b->starts, 0, sizeof b->starts);
        b->size = 0;                 /* do not cache */
        return b;
    }
    decode_block(h, b, bytes, retranslate);
    return b;
}

/* Instructions of the current block that start before `addr` (all of them if `addr`
 * lies outside it, e.g. a fetch fault while translating the next block). */
uint32_t insns_before(hart *h, uint64_t addr)
{
    if (addr < h->blk_start || addr >= h->blk_start + h->blk_size)
        return h->blk_count;
    uint32_t k = (uint32_t)(addr - h->blk_start) / 2;
    if (k < MAP_PARCELS && h->blk && h->blk->start == h->blk_start) {
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
