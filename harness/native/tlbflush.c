/*
 * tlbflush.c: a full TLB flush that removes only what was filled since the last one.
 *
 * A kernel switching satp runs sfence.vma around every switch (xv6 and the bundled
 * kernel: four per system call), and each one is a full flush in Unicorn
 * (helper_tlb_flush -> tlb_flush): it clears the dirty TLB tables and the whole
 * translated-block jump cache (4096 pointers), the largest memset on the host's
 * profile of a system call. Most of those flushes follow another by a few
 * instructions, with one or two pages filled in between.
 *
 * Every entry in Unicorn's TLB comes from tlb_set_page, which pmp.c already replaces
 * (its fill), so this file records which pages each CPU filled since its last full
 * flush. A full flush asked for while that list is short flushes just those pages
 * (tlb_flush_page_by_mmuidx: the entry, its victim-TLB copies and the jump-cache
 * entries of the page), which leaves the TLB and the jump cache as empty as the full
 * flush would: anything else in them was removed by the last full flush, and a jump
 * cache entry is only made after its page's TLB entry was looked up, so filled. A
 * longer list, a CPU with no list, or a list that overflowed gets Unicorn's own full
 * flush. A flush that bypasses this file (Unicorn's own calls inside its TLB code)
 * only leaves pages on the list that are no longer in the TLB, which flushing again
 * does not harm.
 *
 * On RV64, tlbbank.c decides first: an sfence.vma that would change nothing is not
 * done at all, and a satp write swaps whole TLBs.
 *
 * tlb_flush_riscv{32,64} are replaced in libunicorn's PLT by pmp.c's patching, as its
 * PMP functions are.
 */
#include <string.h>

#include "hart.h"

/* libunicorn's own (QEMU 5.0 accel/tcg/cputlb.c), reached through this library's
 * linkage, so the patched PLT slots of libunicorn do not lead back here. */
void tlb_flush_riscv32(void *cpu);
void tlb_flush_riscv64(void *cpu);
void tlb_flush_page_by_mmuidx_riscv32(void *cpu, uint32_t addr, uint16_t idxmap);
void tlb_flush_page_by_mmuidx_riscv64(void *cpu, uint64_t addr, uint16_t idxmap);

#define RECORD_PAGES 8       /* longer lists cost about as much as the full flush */
#define RECORDS 64            /* CPUs (engines) tracked at once */
#define PAGE_MASK_4K (~0xfffull)

struct filled_page {
    uint64_t page;
    uint16_t idxmap;          /* the MMU indexes (privilege modes) it was filled for */
};

struct fill_record {
    void *cpu;                /* Unicorn's CPUState */
    unsigned n;
    bool overflow;
    struct filled_page pages[RECORD_PAGES];
};

static struct fill_record records[RECORDS];
static uint64_t flushes[2];    /* Unicorn's full flushes, page-by-page ones */
static unsigned next_record;   /* the slot a new CPU takes (round robin) */
static struct fill_record *last_record;

static struct fill_record *record_of(void *cpu)
{
    if (last_record && last_record->cpu == cpu)
        return last_record;
    for (unsigned i = 0; i < RECORDS; i++)
        if (records[i].cpu == cpu)
            return last_record = &records[i];
    return NULL;
}

void tlbflush_note_fill(void *cpu, uint64_t vaddr, int mmu_idx)
{
    struct fill_record *r = record_of(cpu);
    if (!r || r->overflow)
        return;   /* no list: the next flush is a full one anyway */
    uint64_t page = vaddr & PAGE_MASK_4K;
    uint16_t bit = (uint16_t)(1u << (mmu_idx & 15));
    for (unsigned i = 0; i < r->n; i++)
        if (r->pages[i].page == page) {
            r->pages[i].idxmap |= bit;
            return;
        }
    if (r->n == RECORD_PAGES) {
        r->overflow = true;
        return;
    }
    r->pages[r->n++] = (struct filled_page){page, bit};
}

/* After a full flush the CPU's TLB is empty: start its list (taking a slot if it had
 * none). */
static void start_record(void *cpu, struct fill_record *r)
{
    if (!r) {
        r = &records[next_record];
        next_record = (next_record + 1) % RECORDS;
        if (last_record == r)
            last_record = NULL;
    }
    r->cpu = cpu;
    r->n = 0;
    r->overflow = false;
}

static void flush(void *cpu, bool rv64)
{
    hart *h = rv64 ? hart_of_cpu(cpu) : NULL;
    if (h && tlbbank_flush(h))
        return;   /* tlbbank.c: the TLB holds what a refill would rebuild */
    struct fill_record *r = record_of(cpu);
    if (!r || r->overflow || (h && !tlbbank_settled(h))) {
        if (rv64)
            tlb_flush_riscv64(cpu);
        else
            tlb_flush_riscv32(cpu);
        start_record(cpu, r);
        flushes[0]++;
        if (h)
            tlbbank_flushed(h);
        return;
    }
    flushes[1]++;
    for (unsigned i = 0; i < r->n; i++) {
        if (rv64)
            tlb_flush_page_by_mmuidx_riscv64(cpu, r->pages[i].page, r->pages[i].idxmap);
        else
            tlb_flush_page_by_mmuidx_riscv32(cpu, (uint32_t)r->pages[i].page, r->pages[i].idxmap);
    }
    r->n = 0;
}

void tlbflush_full32(void *cpu)
{
    flush(cpu, false);
}

void tlbflush_full64(void *cpu)
{
    flush(cpu, true);
}

/* The live TLB was replaced by one this file has no list for (tlbbank.c): its next
 * full flush is Unicorn's own. */
void tlbflush_forget(void *cpu)
{
    struct fill_record *r = record_of(cpu);
    if (r)
        r->overflow = true;
}

/* The live TLB was emptied by Unicorn's full flush outside this file (tlbbank.c). */
void tlbflush_restart(void *cpu)
{
    start_record(cpu, record_of(cpu));
}

/* Full flushes asked for so far in this process: done by Unicorn (by_page false) or
 * page by page (true). For tests. */
uint64_t tlbflush_count(bool by_page)
{
    return flushes[by_page];
}
