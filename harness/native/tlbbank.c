/*
 * tlbbank.c: one TLB per address space, kept while its page tables stay as they were.
 *
 * A kernel that gives each process its own page table (xv6, rCore, the bundled
 * kernel) writes satp twice per system call and runs sfence.vma around each write.
 * QEMU 7.2 empties its TLB at every one of those (write_satp and helper_tlb_flush call
 * tlb_flush), and every page the kernel and the process touch is walked again; in
 * privlab that refill was a third of a getpid round trip's host time.
 *
 * An empty TLB refilled by walks of unchanged page tables ends up holding what it held
 * before. So for each address space (a satp value) this file keeps the TLB Unicorn
 * filled under it, a "bank", with every page-table entry its walks read: the host
 * address of the word and its value once the walk had set A and D. Then:
 *
 *   satp written     the outgoing space's TLB is put aside; the incoming one's is put
 *                    back if every word it was walked through still holds its value,
 *                    otherwise the incoming space starts empty, as after QEMU's flush;
 *   sfence.vma       a full flush only if a word of the current space changed (or the
 *                    space is not the one its bank was filled under): otherwise the
 *                    flush would remove entries a walk would at once rebuild as they were;
 *   any other flush  (mstatus SUM/MXR/MPRV/MPP, PMP, triggers, code guards, the host)
 *                    Unicorn's own, and every bank put aside is dropped.
 *
 * The one difference from QEMU: an entry kept is the walk's result at the moment the
 * check ran (the satp write or the sfence), where QEMU walks at the first access after
 * it. They differ only if the page tables change between the two without another
 * sfence.vma, which the spec leaves undefined (4.2.1: without the fence the hart may use
 * either translation).
 *
 * Translated blocks are found through Unicorn's jump cache by virtual pc, with no TLB
 * check: putting a bank aside clears the jump-cache slots of every page it holds an
 * executable entry for (tb_flush_jmp_cache, as a page flush does), so no block of one
 * address space is entered from another.
 *
 * Layout: the bank swaps Unicorn's per-mode TLB descriptors (QEMU 5.0
 * include/exec/cpu-defs.h CPUTLBDesc and CPUTLBDescFast, in CPUNegativeOffsetState just
 * before the CPU's env). The structures below restate that layout for an x86-64 host
 * and an RV64 guest; tlbbank_flushed checks it against the state Unicorn's full flush
 * leaves (every mode empty, every large-page range -1, every victim slot -1) before any
 * bank is made, and a hart whose TLB does not look like that keeps Unicorn's flushes
 * (RV32 harts too: their entries are laid out differently).
 */
#include <stdlib.h>
#include <string.h>

#include "hart.h"

/* ---- Unicorn 2.1.4's softmmu TLB, RV64 guest on a 64-bit host ---- */
#define UC_MMU_MODES 4
#define UC_VTLB 8
#define UC_ENTRY_BITS 6
#define UC_MIN_BITS 6
#define UC_MAX_BITS 22
#define UC_DEFAULT_ENTRIES 256
#define UC_PAGE_EXEC 4      /* QEMU's PAGE_EXEC */

struct qemu_tlb_entry {
    uint64_t addr_read, addr_write, addr_code, paddr;
    uintptr_t addend;
    uint8_t pad[(1 << UC_ENTRY_BITS) - 40];
};

struct qemu_iotlb_entry {
    uint64_t addr;
    uint32_t attrs;
};

struct qemu_tlb_desc {
    uint64_t large_page_addr, large_page_mask;
    int64_t window_begin_ns;
    size_t window_max_entries, n_used_entries, vindex;
    struct qemu_tlb_entry vtable[UC_VTLB];
    struct qemu_iotlb_entry viotlb[UC_VTLB];
    struct qemu_iotlb_entry *iotlb;
};

struct qemu_tlb_fast {
    uintptr_t mask;
    struct qemu_tlb_entry *table;
} __attribute__((aligned(16)));

struct qemu_tlb {
    struct {
        uint16_t dirty;
        size_t full_flush_count, part_flush_count, elide_flush_count;
    } c;
    struct qemu_tlb_desc d[UC_MMU_MODES];
    struct qemu_tlb_fast f[UC_MMU_MODES];
};

struct qemu_negative_offset {   /* CPUNegativeOffsetState: the TLB, then icount_decr */
    struct qemu_tlb tlb;
    uint32_t icount_decr;
};

_Static_assert(sizeof(struct qemu_tlb_entry) == 64, "CPUTLBEntry is 64 bytes");
_Static_assert(sizeof(struct qemu_tlb_desc) == 696, "CPUTLBDesc");
_Static_assert(sizeof(struct qemu_negative_offset) == 2896, "CPUNegativeOffsetState");

/* QEMU 5.0's CPUState ends (before Unicorn's own fields) with `void *env_ptr;
 * IcountDecr *icount_decr_ptr; TranslationBlock *tb_jmp_cache[4096]`: the cache is
 * found as the words after the pair pointing at this CPU's env and at its
 * icount_decr (the word after the TLB, above). A virtual page's blocks are all in one
 * group of 64 slots (tb-hash.h tb_jmp_cache_hash_page). */
#define JMP_CACHE_SIZE 4096
#define JMP_GROUP 64

static unsigned jmp_group(uint64_t page)
{
    return (unsigned)(((page ^ (page >> 6)) >> 6) & (JMP_CACHE_SIZE - JMP_GROUP)) / JMP_GROUP;
}

/* libunicorn's own, called through this library's linkage (not the patched PLT). */
void tlb_flush_riscv64(void *cpu);
void tb_flush_jmp_cache_riscv64(void *cpu, uint64_t addr);

/* Translated blocks are never freed one by one (an invalidated one stays in memory,
 * marked CF_INVALID, which the jump-cache lookup checks), only all at once by
 * tb_flush, which tbcache.c counts. Jump-cache slots saved with a bank are put back
 * only if no tb_flush came between. */

/* ---- banks ---- */
#define BANKS 8            /* address spaces kept per hart */
#define BANK_WORDS 192     /* page-table words one bank depends on */
#define BANK_CODE 48       /* virtual pages it has executable entries for */

struct pte_word {
    const uint64_t *at;    /* in host RAM */
    uint64_t value;
};

struct bank {
    bool used;
    bool broken;           /* the record is incomplete: the bank cannot be checked */
    uint64_t satp;
    uint64_t stamp;        /* last activation, for replacement */
    unsigned nwords, ncode;
    struct pte_word words[BANK_WORDS];
    uint64_t code[BANK_CODE];
    uint64_t jmp_groups;   /* the jump-cache groups of those pages, one bit each */
    /* Those groups' slots as they were when the bank was put aside (valid while no
     * translated block was freed since: tb_flushes). */
    void *(*jmp_saved)[JMP_GROUP];
    uint64_t jmp_saved_groups, jmp_saved_gen;
    /* Unicorn's state while put aside (the arrays are then owned here). */
    uint16_t dirty;
    struct qemu_tlb_desc d[UC_MMU_MODES];
    struct qemu_tlb_fast f[UC_MMU_MODES];
    bool has_arrays;
};

struct tlbbanks {
    struct qemu_tlb *tlb;
    void **jmp_cache;      /* NULL: not found, cleared page by page through Unicorn */
    struct bank *active;
    uint64_t clock;
    struct bank b[BANKS];
};

static uint64_t counts[TLBBANK_COUNTS];
static _Thread_local hart *satp_writer;   /* inside a satp write (tlbbank_satp_begin) */

uint64_t tlbbank_count(unsigned what)
{
    return what < TLBBANK_COUNTS ? counts[what] : 0;
}

static bool on(const hart *h)
{
    return h->banks && h->banks->tlb && h->banks->active;
}

/* Whether the hart's TLB is kept per address space now (hooks.c: then an sfence.vma
 * empties fetch.c's and icount.c's caches only if it flushes). */
bool tlbbank_active(const hart *h)
{
    return on(h);
}

/* Whether it is decided if the hart's TLB is kept per address space: it is, or it
 * never will be (RV32, or Unicorn's layout not recognised, which tlbbank_flushed does
 * not check again). Until then tlbflush.c gives the hart Unicorn's full flush, after
 * which tlbbank_flushed can check. */
bool tlbbank_settled(const hart *h)
{
    return on(h) || h->s.xlen != 64 || h->bank_refused;
}

static void reset_record(struct bank *b, uint64_t satp)
{
    b->used = true;
    b->broken = false;
    b->satp = satp;
    b->nwords = 0;
    b->ncode = 0;
    b->jmp_groups = 0;
    b->jmp_saved_groups = 0;
}

static void free_arrays(struct bank *b)
{
    if (!b->has_arrays)
        return;
    for (unsigned i = 0; i < UC_MMU_MODES; i++) {
        free(b->f[i].table);
        free(b->d[i].iotlb);
    }
    b->has_arrays = false;
}

/* Drop every bank put aside (a flush other than sfence.vma: the state they were filled
 * in may be gone) and restart the active one's record. */
static void drop_all(hart *h, uint64_t satp)
{
    struct tlbbanks *k = h->banks;
    for (unsigned i = 0; i < BANKS; i++)
        if (&k->b[i] != k->active) {
            free_arrays(&k->b[i]);
            k->b[i].used = false;
        }
    reset_record(k->active, satp);
    stlb_flush(h);   /* the caches fetch.c and icount.c keep per satp start again too */
}

/* The state Unicorn's full flush leaves, mode by mode (tlb_mmu_flush_locked). */
static bool looks_flushed(const struct qemu_tlb *t)
{
    if (t->c.dirty != 0)
        return false;
    for (unsigned i = 0; i < UC_MMU_MODES; i++) {
        const struct qemu_tlb_desc *d = &t->d[i];
        const struct qemu_tlb_fast *f = &t->f[i];
        size_t n = (f->mask >> UC_ENTRY_BITS) + 1;
        if (d->large_page_addr != UINT64_MAX || d->large_page_mask != UINT64_MAX ||
            d->n_used_entries != 0 || d->vindex != 0 || !d->iotlb || !f->table ||
            (n & (n - 1)) || n < (1u << UC_MIN_BITS) || n > (1u << UC_MAX_BITS) ||
            f->mask != ((n - 1) << UC_ENTRY_BITS))
            return false;
        if (f->table[0].addr_read != UINT64_MAX || f->table[n - 1].addr_code != UINT64_MAX ||
            d->vtable[0].addr_write != UINT64_MAX || d->vtable[UC_VTLB - 1].addr_read != UINT64_MAX)
            return false;
    }
    return true;
}

/* The CPU's jump cache, which the full flush has just emptied, or NULL. */
static void **find_jmp_cache(hart *h)
{
    void **w = h->cpu;
    void *icount = (char *)h->env - sizeof(struct qemu_negative_offset) +
        offsetof(struct qemu_negative_offset, icount_decr);
    size_t words = (size_t)((char *)h->env - (char *)h->cpu) / sizeof *w;
    for (size_t k = 0; k + 2 + JMP_CACHE_SIZE <= words; k++) {
        if (w[k] != h->env || w[k + 1] != icount)
            continue;
        for (size_t i = 0; i < JMP_CACHE_SIZE; i++)
            if (w[k + 2 + i])
                return NULL;
        return &w[k + 2];
    }
    return NULL;
}

/* Unicorn's full flush has just emptied this hart's TLB. The first time, it shows
 * whether the layout above is Unicorn's: only then are banks made, starting with the
 * space in use. */
void tlbbank_flushed(hart *h)
{
    if (h->banks || h->s.xlen != 64 || !h->cpu || !h->env)
        return;
    struct qemu_tlb *t = (struct qemu_tlb *)((char *)h->env - sizeof(struct qemu_negative_offset));
    if (!looks_flushed(t)) {
        h->bank_refused = true;
        return;
    }
    h->banks = calloc(1, sizeof *h->banks);
    if (!h->banks)
        return;
    h->banks->tlb = t;
    h->banks->jmp_cache = find_jmp_cache(h);
    h->banks->active = &h->banks->b[0];
    reset_record(h->banks->active, current_satp(h));
    stlb_flush(h);
    counts[TLBBANK_ENABLED]++;
}

void tlbbank_free(hart *h)
{
    if (!h->banks)
        return;
    for (unsigned i = 0; i < BANKS; i++) {
        if (&h->banks->b[i] != h->banks->active)
            free_arrays(&h->banks->b[i]);   /* the active arrays are Unicorn's */
        free(h->banks->b[i].jmp_saved);
    }
    free(h->banks);
    h->banks = NULL;
}

/* ---- the record: what a bank's entries were made from ---- */

static void note_word(struct bank *b, const uint64_t *at, uint64_t value)
{
    for (unsigned i = b->nwords; i-- > 0;) {
        struct pte_word *w = &b->words[i];
        if (w->at != at)
            continue;
        /* The walk setting A or D is the one change that leaves the entries made from
         * the old value right (a store's fill replaces the load's entry); anything else
         * means the table changed under the bank without a fence. */
        if (value != w->value && (((value ^ w->value) & ~(uint64_t)(PTE_A | PTE_D)) ||
                                  (w->value & ~value)))
            b->broken = true;
        w->value = value;
        return;
    }
    if (b->nwords == BANK_WORDS) {
        b->broken = true;
        return;
    }
    b->words[b->nwords++] = (struct pte_word){at, value};
}

static void seen_word(void *arg, const uint8_t *at, uint64_t pte)
{
    note_word(arg, (const uint64_t *)(const void *)at, pte);
}

/* Walk `vaddr` as the fill just did (fetch.c's walker, over host RAM), noting every
 * word read. A walk that does not end at a leaf in RAM (a table outside RAM, a mode
 * the walker does not know) leaves the bank uncheckable. */
static void note_walk(hart *h, struct bank *b, uint64_t vaddr)
{
    if (!walk_rv64(h, vaddr, b->satp, seen_word, b))
        b->broken = true;
}

/* pmp.c's fill is about to install an entry for `vaddr` in MMU mode `mmu_idx`. */
void tlbbank_note_fill(hart *h, uint64_t vaddr, int prot, int mmu_idx)
{
    if (!on(h))
        return;
    struct bank *b = h->banks->active;
    if (b->broken)
        return;
    if (b->satp != current_satp(h)) {
        /* satp changed behind Unicorn's CSR helper (the host wrote it): this entry is
         * not of the bank's space. The next fence or satp write flushes. */
        b->broken = true;
        return;
    }
    if (prot & UC_PAGE_EXEC) {
        uint64_t page = vaddr & ~(uint64_t)(PAGE_SIZE - 1);
        unsigned i = 0;
        while (i < b->ncode && b->code[i] != page)
            i++;
        if (i == b->ncode) {
            if (b->ncode == BANK_CODE) {
                b->broken = true;
                return;
            }
            b->code[b->ncode++] = page;
            b->jmp_groups |= 1ull << jmp_group(page);
        }
    }
    bool translated = (b->satp >> SATP64_MODE_SHIFT) != 0;
    if (mmu_idx == PRV_M && translated) {
        /* M's loads and stores are translated under MPRV (its fetches never are): the
         * entry may come from either, so such a bank is not kept. */
        if (csr_raw(h, UC_RISCV_REG_MSTATUS) & MSTATUS_MPRV)
            b->broken = true;
        return;
    }
    if (translated)
        note_walk(h, b, vaddr);
}

/* Every word the bank was walked through holds its value. */
static bool still_valid(const struct bank *b)
{
    if (b->broken)
        return false;
    for (unsigned i = 0; i < b->nwords; i++)
        if (*b->words[i].at != b->words[i].value)
            return false;
    return true;
}

/* ---- putting banks aside and back ---- */

static void save_live(struct tlbbanks *k, struct bank *b)
{
    memcpy(b->d, k->tlb->d, sizeof b->d);
    memcpy(b->f, k->tlb->f, sizeof b->f);
    b->dirty = k->tlb->c.dirty;
    b->has_arrays = true;
}

static void load_live(struct tlbbanks *k, struct bank *b)
{
    memcpy(k->tlb->d, b->d, sizeof b->d);
    memcpy(k->tlb->f, b->f, sizeof b->f);
    k->tlb->c.dirty = b->dirty;
    b->has_arrays = false;   /* Unicorn's now */
}

/* Empty the bank's arrays as Unicorn's flush would (only the modes used). */
static void empty_arrays(struct bank *b)
{
    for (unsigned i = 0; i < UC_MMU_MODES; i++) {
        if (!(b->dirty & (1u << i)))
            continue;
        size_t n = (b->f[i].mask >> UC_ENTRY_BITS) + 1;
        memset(b->f[i].table, -1, n * sizeof *b->f[i].table);
        memset(b->d[i].vtable, -1, sizeof b->d[i].vtable);
        b->d[i].n_used_entries = 0;
        b->d[i].vindex = 0;
        b->d[i].large_page_addr = UINT64_MAX;
        b->d[i].large_page_mask = UINT64_MAX;
    }
    b->dirty = 0;
}

static bool new_arrays(struct bank *b, const struct qemu_tlb *like)
{
    for (unsigned i = 0; i < UC_MMU_MODES; i++) {
        struct qemu_tlb_entry *table = malloc(UC_DEFAULT_ENTRIES * sizeof *table);
        struct qemu_iotlb_entry *iotlb = calloc(UC_DEFAULT_ENTRIES, sizeof *iotlb);
        if (!table || !iotlb) {
            free(table);
            free(iotlb);
            for (unsigned j = 0; j < i; j++) {
                free(b->f[j].table);
                free(b->d[j].iotlb);
            }
            return false;
        }
        memset(table, -1, UC_DEFAULT_ENTRIES * sizeof *table);
        b->d[i] = like->d[i];   /* its resize window */
        memset(b->d[i].vtable, -1, sizeof b->d[i].vtable);
        memset(b->d[i].viotlb, 0, sizeof b->d[i].viotlb);
        b->d[i].n_used_entries = 0;
        b->d[i].window_max_entries = 0;
        b->d[i].vindex = 0;
        b->d[i].large_page_addr = UINT64_MAX;
        b->d[i].large_page_mask = UINT64_MAX;
        b->d[i].iotlb = iotlb;
        b->f[i].mask = (UC_DEFAULT_ENTRIES - 1) << UC_ENTRY_BITS;
        b->f[i].table = table;
    }
    b->dirty = 0;
    b->has_arrays = true;
    return true;
}

static struct bank *find(struct tlbbanks *k, uint64_t satp)
{
    for (unsigned i = 0; i < BANKS; i++)
        if (k->b[i].used && k->b[i].satp == satp && &k->b[i] != k->active)
            return &k->b[i];
    return NULL;
}

/* A slot for a new bank: a free one, else the one activated longest ago. */
static struct bank *slot(struct tlbbanks *k)
{
    struct bank *pick = NULL;
    for (unsigned i = 0; i < BANKS; i++) {
        struct bank *b = &k->b[i];
        if (b == k->active)
            continue;
        if (!b->used)
            return b;
        if (!pick || b->stamp < pick->stamp)
            pick = b;
    }
    return pick;
}

/* Unicorn's full flush of the live TLB, which the next bank starts from. */
static void flush_live(hart *h)
{
    tlb_flush_riscv64(h->cpu);
    tlbflush_restart(h->cpu);
    counts[TLBBANK_FLUSHED]++;
}

/* satp changed from the active bank's to `satp`: put the live TLB aside, bring the
 * incoming space's back (or an empty one). */
static void switch_to(hart *h, uint64_t satp)
{
    struct tlbbanks *k = h->banks;
    struct bank *out = k->active;
    struct bank *in = find(k, satp);
    if (out->broken) {
        /* Not kept: emptied for the next space, as QEMU's flush would. */
        flush_live(h);
        if (in && !(in->has_arrays && still_valid(in))) {
            free_arrays(in);
            in->used = false;
            in = NULL;
        }
        stlb_flush(h);
        if (!in) {
            reset_record(out, satp);
            out->stamp = ++k->clock;
            return;
        }
        /* Swap the emptied live arrays into `out`'s slot, then drop it. */
        save_live(k, out);
        load_live(k, in);
        free_arrays(out);
        out->used = false;
        k->active = in;
        in->stamp = ++k->clock;
        tlbflush_forget(h->cpu);
        counts[TLBBANK_RESTORED]++;
        return;
    }
    save_live(k, out);
    if (k->jmp_cache) {
        if (!out->jmp_saved && tb_flushes_counted())
            out->jmp_saved = malloc(JMP_CACHE_SIZE * sizeof(void *));
        for (uint64_t g = out->jmp_groups; g; g &= g - 1) {
            void **slots = &k->jmp_cache[__builtin_ctzll(g) * JMP_GROUP];
            if (out->jmp_saved)
                memcpy(out->jmp_saved[__builtin_ctzll(g)], slots, JMP_GROUP * sizeof(void *));
            memset(slots, 0, JMP_GROUP * sizeof(void *));
        }
        out->jmp_saved_groups = out->jmp_saved ? out->jmp_groups : 0;
        out->jmp_saved_gen = tb_flushes();
    } else {
        for (unsigned i = 0; i < out->ncode; i++)
            tb_flush_jmp_cache_riscv64(h->cpu, out->code[i]);
    }
    if (in && still_valid(in)) {
        counts[TLBBANK_RESTORED]++;
        h->blk_epoch = h->xlat_epoch - 1;   /* no fast re-entry across the switch */
        /* The jump cache now holds no slot of any space (every slot ever filled is in
         * the groups of the active space's code pages): put the incoming space's back. */
        if (k->jmp_cache && in->jmp_saved_gen == tb_flushes())
            for (uint64_t g = in->jmp_saved_groups; g; g &= g - 1)
                memcpy(&k->jmp_cache[__builtin_ctzll(g) * JMP_GROUP], in->jmp_saved[__builtin_ctzll(g)],
                       JMP_GROUP * sizeof(void *));
    } else {
        stlb_flush(h);   /* this space's fetch translations are unknown again */
        if (!in)
            in = slot(k);
        if (in->used && in->has_arrays)
            empty_arrays(in);
        else if (!new_arrays(in, k->tlb)) {
            /* No memory: fall back to one TLB, emptied. */
            load_live(k, out);
            flush_live(h);
            drop_all(h, satp);
            stlb_flush(h);
            return;
        }
        reset_record(in, satp);
        counts[TLBBANK_STARTED]++;
    }
    load_live(k, in);
    k->active = in;
    in->stamp = ++k->clock;
    tlbflush_forget(h->cpu);
}

/* ---- the three events ---- */

/* csrfast.c is about to have Unicorn write satp, and calls tlbbank_satp_end after, with
 * the value satp holds now if it knows it. */
void tlbbank_satp_begin(hart *h)
{
    satp_writer = h;
}

void tlbbank_satp_end(hart *h, bool known, uint64_t satp)
{
    satp_writer = NULL;
    if (!known)
        satp = csr_raw(h, UC_RISCV_REG_SATP);
    bool changed = satp != h->satp || h->satp_stale;
    h->satp = satp;
    h->satp_stale = false;
    if (!on(h)) {
        if (changed)
            h->xlat_epoch++;   /* fetch.c's and icount.c's caches follow satp */
        return;
    }
    if (satp != h->banks->active->satp)
        switch_to(h, satp);   /* which keeps those caches or empties them */
    else if (!still_valid(h->banks->active)) {
        flush_live(h);   /* QEMU 7.2 flushes at every satp write */
        reset_record(h->banks->active, satp);
        stlb_flush(h);
    } else if (changed)
        h->blk_epoch = h->xlat_epoch - 1;
}

/* A full flush asked of Unicorn for the hart: sfence.vma's (helper_tlb_flush) when
 * on_code has just seen one (in_sfence). True when it is done here (nothing to flush, or a satp write's, which
 * tlbbank_satp_end does); false when Unicorn's flush must run, and then the banks put
 * aside are dropped unless it is an sfence.vma. */
bool tlbbank_flush(hart *h)
{
    bool sfence = h->in_sfence;
    h->in_sfence = false;
    if (!on(h))
        return false;
    if (satp_writer == h)
        return true;   /* write_satp's own flush (an ASID change): tlbbank_satp_end */
    struct bank *b = h->banks->active;
    uint64_t satp = current_satp(h);
    if (sfence) {
        if (b->satp == satp && still_valid(b)) {
            counts[TLBBANK_ELIDED]++;
            return true;
        }
        reset_record(b, satp);
        stlb_flush(h);
        return false;
    }
    drop_all(h, satp);
    return false;
}
