/*
 * hart.h: the native core of privlab's hart.
 *
 * Unicorn executes RISC-V instructions but has no trap entry, no time source and no
 * interrupt controller (docs/unicorn.md lists what it lacks, and README.md in this
 * folder maps the core). This core supplies them, as the
 * privileged spec v1.12 and QEMU 7.2 define them, from hooks that run inside Unicorn's
 * translated code, so no Python runs on the hot path:
 *
 *   hooks.c      Unicorn callbacks: block entry, exceptions, ebreak, unmapped memory,
 *                and exact-address code hooks installed on the fly
 *   hartapi.c    the hart_* API Python calls: a hart's core, its callbacks, RAM, CSRs,
 *                breakpoints, steps
 *   icount.c     counts instructions per translated block (deterministic time) and finds
 *                the instructions that need a code hook
 *   fetch.c      where code lives physically: a page-table walker over host RAM behind
 *                a small TLB, so decoded blocks are keyed by physical address
 *   guard.c      memory hooks over the pages code runs on, so stores there always
 *                reach Unicorn's self-modifying-code check
 *   trapentry.c  trap entry for exceptions and interrupts, and trap-storm detection
 *   interrupt.c  the virtual mip and the pending-and-enabled decision
 *   csrops.c     CSR instructions the core must see or emulate
 *   csrfast.c    sstatus/mstatus done inside Unicorn's CSR helpers (no code hook)
 *   xret.c       mret, sret and wfi
 *   pmp.c        physical memory protection, in place of Unicorn's
 *   tlbflush.c   full TLB flushes done page by page when few pages were filled
 *   tlbbank.c    one TLB per address space, kept while its page tables are unchanged
 *   chain.c      a CSR instruction's block goes on to the next block in translated code
 *   tbcache.c    translated blocks the jump cache keeps losing, found without its table
 *   trigger.c    the debug trigger module (tselect, tdata1-3, tinfo)
 *   decode.c     instruction fields, tval derivation
 *   events.c     the trap/xRET event buffer Python drains
 *   regs.c       register and CSR access through Unicorn, and the CSR number map
 *   codesync.c   several harts: code another hart rewrote, dropped before a turn
 *   turns.c      several harts: turns run back to back without returning to Python
 *
 * Everything Python touches directly lives in `struct hart_shared`, generated with the
 * event record from privlab/abi/native_layout.py into privlab_gen.h.
 */
#ifndef HART_H
#define HART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unicorn/unicorn.h>

#include "privlab_gen.h"   /* PRV_*, CSR_*, CAUSE_*, MSTATUS_*, MIP_*, ...: harness/abi */

#define UNLIMITED UINT64_MAX
#define PMP_ENTRIES 16   /* as QEMU 7.2: pmpcfg0-3, pmpaddr0-15 */
#define TRIGGERS 2       /* debug triggers, as QEMU 7.2 */
#define HPM_FIRST 3      /* hpm counters 3..31 are named; QEMU 7.2 on virt has 16 */
#define HPM_COUNTERS 16
#define HPM_NAMED 29

/* Kinds of instruction that get an exact-address code hook. */
enum insn_kind {
    INSN_NONE = 0,
    INSN_CSR,      /* csrr* on a CSR the core virtualises or must observe */
    INSN_MRET,
    INSN_SRET,
    INSN_WFI,
    INSN_FENCE,    /* sfence.vma / fence.i: translations or code may have changed */
    INSN_FP,       /* fsgnj*.s, fmv.w.x: NaN-boxed by the core (fpu.c) */
};

/* dispatch.c: whether the hooks on one of Unicorn's hook lists were all the core's
 * when the list had these ends. */
struct dispatch_cache {
    const void *head, *tail;
    bool ours;
};

struct hooked_insn {
    struct hart *h;
    uint64_t addr;
    uint32_t insn;
    uint32_t epoch;   /* code epoch at which `insn` was last confirmed at `addr` */
    enum insn_kind kind;
    bool breakpoint;  /* a debugger breakpoint is set here */
    uc_hook handle;
};

#define L0_REFS 3   /* L0 slots a block_info records (icount.c retire_l0) */

/* One cached translated block: its instruction count and where each instruction
 * starts (bit i set: an instruction starts at parcel i, i.e. at start + 2*i). */
struct block_info {
    uint64_t paddr;       /* physical address of the first instruction: the key */
    uint64_t vaddr;       /* the virtual address it was last scanned for hooks at */
    uint32_t size;
    uint32_t count;
    uint32_t gen;         /* valid only while equal to hart.icache_gen */
    uint16_t hookable;    /* instructions in it that need a code hook */
    uint16_t nl0;         /* L0 entries made for it (icount.c), up to L0_REFS recorded */
    uint16_t l0[L0_REFS]; /* which L0 slots they are, so retiring it clears just those */
    bool inlined;         /* dispatch.c: translated code may count it without a call */
    uint64_t starts[4];   /* first 256 parcels; longer blocks are re-decoded */
};

#define ICOUNT_SLOTS 16384   /* power of two */
#define MAX_BLOCK_BYTES 4100 /* a TB never spans more than a page plus a parcel */
#define STLB_SLOTS 256       /* power of two */
#define HOOK_SLOTS 4096      /* the hook map's first size; it doubles at 3/4 full */
#define HOOK_LIVE_MAX 3072   /* code hooks kept before hooks_evict drops them (hooks.c) */
#define L0_SLOTS 4096        /* power of two */
#define GUARD_MAX 32         /* code-page guard ranges (guard.c) before they are reset */
#define CODE_DROPPED_PAGES 1 /* hart_code_written: the written pages' blocks went */
#define CODE_DROPPED_ALL 2   /* hart_code_written: every translation went */
#define GUARD_PENDING 32     /* pages whose guards go at the next block entry (guard.c) */

/* The last blocks seen at a virtual address under satp `ctx`, valid while no
 * translation changed (xlat_epoch): most time is spent re-entering the same few blocks
 * of a loop. With tlbbank.c on, switching between address spaces whose page tables did
 * not change keeps the epoch, so each space finds its blocks again. */
struct l0_entry {
    uint64_t vaddr, ctx;
    struct block_info *b;
    uint32_t epoch;
    uint16_t size;                /* a block is at most MAX_BLOCK_BYTES */
    uint16_t count;               /* b->count, so that a hit need not touch b */
};

/* Physical pages [lo, hi] that hold code, covered by one memory hook (guard.c). */
struct guard {
    uint64_t lo, hi;
    uc_hook handle;
};

/* A fetch translation: virtual page under a context (satp, or 0 for bare) to a
 * physical page. Valid only while `gen` equals hart.stlb_gen. */
struct stlb_entry {
    uint64_t vpage, ctx, ppage;
    uint32_t gen;
};

struct hart {
    struct hart_shared s;         /* must stay first: Python maps it in place */

    uc_engine *uc;
    uint64_t xmask;               /* XLEN-wide all-ones */
    struct hart_event *events;    /* owned by Python */

    /* Deterministic time: the block hook acts when instret reaches `deadline`. */
    uint64_t deadline;
    /* A run takes an interrupt whose time has come at the next block boundary. When a
     * run stops inside a block (a breakpoint, an exact instret) and goes on from there,
     * the block's real end is that boundary, not the artificial one where it resumed:
     * no interrupt is taken from the deadline before instret reaches irq_from. Any
     * redirect (trap, xRET, CSR write) is a real boundary and clears it. */
    uint64_t irq_from;

    /* The block being executed: Unicorn counted it whole at entry; exceptions and
     * redirects inside it correct instret from these. */
    uint64_t blk_start, blk_instret;
    uint32_t blk_size, blk_count;
    const struct block_info *blk;
    uint32_t blk_epoch;           /* xlat_epoch when blk was looked up */

    struct block_info icache[ICOUNT_SLOTS];
    struct block_info unreadable;          /* returned for a block that cannot be read */
    uint8_t block_buf[MAX_BLOCK_BYTES];    /* a block's bytes when not in host RAM */
    uint32_t icache_gen;          /* bumping it empties the cache in O(1) */
    uint32_t code_epoch;          /* bumped by fence.i: hooked words must be re-checked */

    struct hooked_insn **hooks;   /* one per hooked address, in order of creation */
    size_t nhooks, hooks_cap;
    struct hooked_insn **hook_map;   /* the same, by address (open addressing) */
    size_t hook_slots;               /* its size, a power of two (0: none yet) */
    struct dispatch_cache dispatch[2];   /* dispatch.c: code hooks, block hooks */

    /* Guest RAM as the host sees it (Python maps it with uc_mem_map_ptr), for reading
     * code and page tables without Unicorn's slower paths. */
    uint8_t *ram;
    uint64_t ram_base, ram_size;
    /* HTIF (hart_set_tohost): the host address of the riscv-tests `tohost` word, read
     * at every block entry (NULL: no HTIF), and its width in bytes (XLEN / 8). */
    const volatile uint8_t *tohost;
    unsigned tohost_width;
    unsigned priv;                /* current privilege, kept by set_priv */
    uint64_t satp;                /* current satp, refreshed when satp_stale */
    bool satp_stale;
    struct stlb_entry stlb[STLB_SLOTS];
    uint32_t stlb_gen;
    struct l0_entry l0[L0_SLOTS];
    uint32_t xlat_epoch;          /* bumped when any virtual->block mapping may change */
    uint32_t inline_epoch;        /* dispatch.c: bumped when an inlined block_info is retired */

    /* The interrupt-enable state, kept here because every write to it goes through
     * csrops.c; Unicorn's own copies are written too but never decide anything. */
    uint64_t mie, mideleg;

    /* CSRs Unicorn (QEMU 5.0, priv 1.10) lacks or must not hold, kept here. */
    uint64_t mcounteren, scounteren, menvcfg, senvcfg, mcountinhibit;
    uint64_t stimecmp;            /* Sstc: with menvcfg.STCE, STIP = (time >= stimecmp) */
    /* mstatus bits Unicorn cannot hold: VS (QEMU 7.2 keeps it writable, Unicorn's
     * QEMU 5.0 drops it) and TW/TSR, which Unicorn 2.1.4 still places at bits 29/30,
     * a QEMU bug since fixed. The core applies TW and TSR itself (xret.c). */
    uint64_t mstatus_extra;
    uint64_t cycle_offset, instret_offset;
    uint64_t cycle_frozen, instret_frozen;   /* their values while mcountinhibit stops them */
    uint64_t mhpmcounter[HPM_COUNTERS];      /* hpm.c: value, or offset while counting */
    uint64_t mhpmevent[HPM_NAMED];
    /* The guest's PMP entries (pmp.c); Unicorn's own stay zero and decide nothing. */
    uint8_t pmpcfg[PMP_ENTRIES];
    uint64_t pmpaddr[PMP_ENTRIES];
    /* Debug triggers (trigger.c). trig_exec/trig_data: some trigger matches execution /
     * loads or stores; trig_hit: pmp.c refused an access for hooks.c to decide. */
    unsigned tselect;
    uint64_t tdata1[TRIGGERS], tdata2[TRIGGERS];
    bool trig_exec, trig_data, trig_hit;
    /* The debugger's watchpoints (trigger.c): physical ranges checked like data
     * triggers but invisible to the guest; a hit stops the run before the access
     * (STOP_WATCH) instead of raising a breakpoint exception. */
    struct host_watch { uint64_t lo, len; unsigned privs; } watches[HOST_WATCHES];
    /* A data access refused because its page is watched or divided by PMP (trig_hit):
     * the page, the access kind and mode, for on_intr's exact check; trig_skip (PMP_R,
     * PMP_W) lets the next access of each kind through once: the one that was allowed
     * and is made again at trig_skip_pc, both for an AMO or SC, which Unicorn runs as a
     * load and then a store. */
    uint64_t trig_page, trig_skip_pc;
    unsigned trig_privs, trig_mode;
    unsigned trig_skip;
    /* pmp.c could not decide that access: PMP entries divide a page it was given
     * only the base of (the exact address is decided in hooks.c as well). */
    bool pmp_undecided;
    /* pmp.c refused a page-table walk's read of an Sv39/Sv48 entry with reserved bits
     * set: the access fault Unicorn raises for it is a page fault (hooks.c on_intr). */
    bool pte_reserved;
    /* vtlb.c (portable mode): the TLB fill its hook refused last, for hart_vtlb_stop,
     * and the page one instruction's access is let through on, once. */
    struct vtlb_state {
        uc_hook hook;
        unsigned kind, code, privs, mode;
        uint64_t pc, vpage, ppage;
        bool pass;
        uint64_t pass_vpage;
        unsigned pass_privs;
    } vt;

    /* Trap-storm detection: the last xRET target and the instret when it ran, and the
     * last trap. */
    uint64_t ret_pc, ret_instret;
    uint64_t last_cause, last_epc, last_tval, last_trap_instret;
    uint32_t storm_count;

    /* Single-step (debugger): the block hook does not count; step_end adds the one
     * instruction unless retire_before/retire_through already accounted for it. */
    bool accounted;
    uint64_t bp_skip;             /* resume over the breakpoint at this address once */

    uc_hook h_block, h_intr, h_invalid;
    uc_hook h_unmapped[2];        /* below RAM and above it: see hart_set_ram */
    uint64_t unmapped_range[2][2];
    unsigned n_unmapped;

    struct guard guards[GUARD_MAX];
    unsigned nguards;
    unsigned guards_deleted;      /* since Unicorn last restarted */
    struct guard guard_all;       /* all of RAM, once the guards overflowed */
    bool guard_all_on;
    /* Guarded pages Unicorn has since left without a translated block (guard.c), whose
     * guards go at the next block entry; and where guest RAM starts among Unicorn's
     * RAM addresses (ram_addr_t), to tell which page it names. */
    uint64_t unguard[GUARD_PENDING];
    unsigned nunguard;
    uint64_t ram_addr;
    bool ram_addr_known;
    /* guard.c's run of slow stores sweeping one page (the last store's address and
     * size), how long a run gives a page up after, and the last page given up. */
    uint64_t store_at;
    unsigned store_size, store_run, store_limit;
    uint64_t store_limit_until, giveup_page, giveup_instret;
    bool resume_wanted;           /* stop with STOP_RESUME at the next block boundary */
    bool flush_wanted;            /* and flush Unicorn's translations then (hart_resume) */

    /* Unicorn's CPUState and env of this hart's engine, learned from pmp.c's first check
     * and fill, and the TLBs kept per address space (tlbbank.c; NULL: not in use). */
    void *cpu, *env;
    struct tlbbanks *banks;
    bool in_sfence;               /* on_code saw sfence.vma: the flush that follows is its */
    bool bank_refused;            /* the TLB did not look like Unicorn's: no banks */
    struct tbcache *tbcache;      /* tbcache.c: blocks the jump cache lost (NULL: none yet) */
};

typedef struct hart hart;

/* regs.c */
uint64_t reg(hart *h, int ucid);
void set_reg(hart *h, int ucid, uint64_t v);
uint64_t gpr(hart *h, unsigned n);
void set_gpr(hart *h, unsigned n, uint64_t v);
unsigned cur_priv(hart *h);
void set_priv(hart *h, unsigned priv);
int csr_ucid(unsigned csr);
uint64_t csr_raw(hart *h, int ucid);          /* read at M, whatever the current level */
void set_csr_raw(hart *h, int ucid, uint64_t v);
bool read_insn(hart *h, uint64_t addr, uint32_t *insn);
bool vmem_read(hart *h, uint64_t addr, uc_prot prot, void *buf, size_t len);

/* fetch.c: the one page-table walker (fetch.c's own translation, tlbbank.c's record
 * of a fill, vtlb.c's checked walk), over the scheme satp selects. */
typedef void (*pte_seen)(void *arg, const uint8_t *at, uint64_t pte);
struct pt_scheme {
    uint64_t root;                 /* the root table's physical address */
    unsigned levels, pte_size, vpn_bits;
};
struct pt_leaf {
    uint64_t pte, ppn, pa;         /* pa: va's physical address through the leaf */
    uint8_t *at;                   /* the leaf in host RAM */
    unsigned level;                /* 0 for a 4 KiB page, higher for a superpage */
    bool misaligned;               /* a superpage whose PPN has low bits set */
};
enum { PTW_LEAF, PTW_PAGE_FAULT, PTW_ACCESS_FAULT, PTW_NOT_IN_RAM };
#define PTW_CHECKED 1u   /* PMP on each entry read (as S), canonical va, reserved bits */
bool pt_scheme(bool rv64, uint64_t satp, struct pt_scheme *s);
int pt_walk(hart *h, uint64_t va, const struct pt_scheme *s, unsigned flags, pte_seen seen,
            void *arg, struct pt_leaf *leaf);
bool fetch_paddr(hart *h, uint64_t vaddr, uint64_t *paddr);
bool walk_rv64(hart *h, uint64_t va, uint64_t satp, pte_seen seen, void *arg);
bool data_paddr(hart *h, uint64_t vaddr, uint64_t *paddr);
uint64_t current_satp(hart *h);   /* satp now, from fetch.c's copy (no Unicorn call) */
const uint8_t *ram_ptr(hart *h, uint64_t paddr, uint64_t len);
void stlb_flush(hart *h);

/* icount.c */
static inline size_t l0_slot(uint64_t vaddr)
{
    return (size_t)((vaddr >> 1) ^ (vaddr >> 12)) & (L0_SLOTS - 1);
}

/* The L0 entry for the block at vaddr of `size` bytes in the current address space, if
 * it is valid; inline, so a block entry that hits L0 (nearly all) makes no call. With
 * satp being written (satp_stale) only block_lookup can tell. */
static inline const struct l0_entry *l0_hit(const hart *h, uint64_t vaddr, uint32_t size)
{
    const struct l0_entry *l0 = &h->l0[l0_slot(vaddr)];
    if (!h->satp_stale && l0->vaddr == vaddr && l0->size == size &&
        l0->epoch == h->xlat_epoch && l0->ctx == h->satp)
        return l0;
    return NULL;
}
const struct block_info *block_lookup(hart *h, uint64_t start, uint32_t size, bool *fresh,
                                     uint32_t *count);
uint32_t insns_before(hart *h, uint64_t addr);
void retire_through(hart *h, uint64_t addr);
void retire_before(hart *h, uint64_t addr);
void icount_flush(hart *h);

/* guard.c */
void guard_code(hart *h, uint64_t vaddr, uint64_t paddr, uint32_t size);
void guard_install(void);
void guard_release(hart *h);
enum { GUARD_RELEASED, GUARD_QUEUED, GUARD_GIVEN_UP };
uint64_t guard_count(unsigned what);

/* decode.c */
unsigned insn_len(uint32_t insn);
uint64_t exception_tval(hart *h, unsigned code, uint64_t epc);
bool data_access_at(hart *h, uint64_t pc, uint64_t *ea, unsigned *size);
bool rmw_access_at(hart *h, uint64_t pc);
enum insn_kind classify(uint32_t insn, unsigned xlen);

/* trapentry.c */
void take_trap(hart *h, bool interrupt, unsigned code, uint64_t epc, uint64_t tval);
void take_exception(hart *h, unsigned code, uint64_t epc);

/* interrupt.c */
uint64_t mip_value(hart *h);
uint64_t guest_ns(const hart *h);
uint64_t mtime(const hart *h);
bool sstc_on(const hart *h);
int pending_interrupt(hart *h);
bool check_interrupts(hart *h, uint64_t pc);
void update_deadline(hart *h);

/* bitmanip.c */
bool emulate_bitmanip(hart *h, uint32_t insn, uint64_t pc);

/* csrops.c */
bool emulate_csr(hart *h, uint32_t insn, uint64_t pc, unsigned priv);
bool csr_read_virtual(hart *h, unsigned csr, uint64_t *value);
bool csr_write_virtual(hart *h, unsigned csr, uint64_t value);
extern uint64_t status_direct;
uint64_t status_access(hart *h, unsigned csr, uint64_t new_value, uint64_t write_mask,
                       uint64_t *word);
bool csr_write_enables_interrupts(unsigned csr);
bool is_virtualised_csr(unsigned csr, unsigned xlen);

/* hpm.c (i: counter index, counter 3 is 0) */
uint64_t hpm_read(const hart *h, unsigned i);
void hpm_write(hart *h, unsigned i, uint64_t value);
void hpm_retarget(hart *h, unsigned i, uint64_t event, uint64_t inhibit);

/* dispatch.c */
void dispatch_install(void);
bool dispatch_installed(void);
void core_tracecode(int32_t size, uint32_t index, void *uc, int64_t address);
uint64_t dispatch_inline_count(bool slow);
size_t dispatch_ring_bytes(void);

/* exitcheck.c */
void exitcheck_install(void);
uint64_t exitcheck_count(bool emitted);
void *exitcheck_engine(void *tcg_ctx, bool rv64);

/* tbcache.c */
void tbcache_install(void);
void *tbcache_ring(hart *h);
uint64_t tbcache_count(bool hits);
uint64_t tb_flushes(void);
bool tb_flushes_counted(void);

/* chain.c */
void chain_install(void);
uint64_t chain_count(bool chained_ends);

/* tlbflush.c */
void tlbflush_note_fill(void *cpu, uint64_t vaddr, int mmu_idx);
void tlbflush_full32(void *cpu);
void tlbflush_full64(void *cpu);
uint64_t tlbflush_count(bool by_page);
void tlbflush_forget(void *cpu);
void tlbflush_restart(void *cpu);

/* tlbbank.c (counts: tlbbank_count's argument) */
enum { TLBBANK_ENABLED, TLBBANK_ELIDED, TLBBANK_RESTORED, TLBBANK_STARTED, TLBBANK_FLUSHED,
       TLBBANK_COUNTS };
void tlbbank_note_fill(hart *h, uint64_t vaddr, int prot, int mmu_idx);
bool tlbbank_flush(hart *h);
bool tlbbank_settled(const hart *h);
bool tlbbank_active(const hart *h);
void tlbbank_flushed(hart *h);
void tlbbank_satp_begin(hart *h);
void tlbbank_satp_end(hart *h, bool known, uint64_t satp);
void tlbbank_free(hart *h);
uint64_t tlbbank_count(unsigned what);

/* fpu.c */
void fpu_install(void);
bool fpu_exact(void);
bool fpu_emulating(void);
uint64_t fpu_fingerprint(void);
bool fpu_classify(uint32_t insn);
bool fpu_emulate(hart *h, uint32_t insn, uint64_t pc);

/* pmp.c */
bool pmp_install(void);
/* devaccess.c: the access sizes and offsets device register windows take */
void devaccess_clear(void);
int devaccess_region(uint64_t lo, uint64_t hi);
int devaccess_rule(uint64_t lo, uint64_t hi, unsigned min, unsigned max);
bool devaccess_page(uint64_t pa);
bool devaccess_check(uint64_t pa, uint64_t size);
bool devaccess_in_last(uint64_t pa);
void hart_device_fetch_trap(hart *h, uint64_t pc, unsigned code, uint64_t tval);
hart *hart_of_env(void *env, unsigned xlen);
hart *hart_of_cpu(const void *cpu);
bool plt_patch(const char *name, void *fn);
void **plt_slot(const char *name);
bool code_range_of(const char *name, void *fn, uintptr_t *lo, uintptr_t *hi);
bool csrfast_install(void);
bool csrfast_handles(unsigned csr);
hart *hart_of_engine(const void *uc);
void privlab_probe(int on);
bool pmp_probing(void);
void pmp_probe_filled(hart *h);
bool pmp_page_privs(const hart *h, uint64_t page, unsigned mode, unsigned *privs);
bool pmp_store_backed(hart *h, uint64_t pa);
void pmp_note_noexec_fill(void);   /* vtlb.c: a fill left execute out */
bool vtlb_install(hart *h);
int hart_vtlb_stop(hart *h);
int hart_vtlb_on(void);
bool vtlb_mode(void);
void hart_free(hart *h);
void hart_step_begin(hart *h);
void hart_step_end(hart *h);
void pmp_register(hart *h, bool on);
bool pmp_is_csr(unsigned csr);
bool pmp_csr_exists(const hart *h, unsigned csr);
bool pmp_read_csr(hart *h, unsigned csr, uint64_t *value);
bool pmp_write_csr(hart *h, unsigned csr, uint64_t value);
bool pmp_has_active_rule(const hart *h);
bool pmp_allows(const hart *h, uint64_t addr, uint64_t size, unsigned privs, unsigned mode);

/* trigger.c */
void trigger_reset(hart *h);
void trigger_rearm(hart *h);
bool trigger_is_csr(unsigned csr);
bool trigger_read_csr(hart *h, unsigned csr, uint64_t *value);
bool trigger_write_csr(hart *h, unsigned csr, uint64_t value);
bool trigger_exec_hit(hart *h, uint64_t pc);
bool trigger_data_hit(hart *h, uint64_t addr, unsigned privs);
bool trigger_watches_page(hart *h, uint64_t page);
enum trigger_match { TRIGGER_NONE, TRIGGER_BREAKPOINT, TRIGGER_WATCHPOINT };
enum trigger_match trigger_confirm(hart *h, uint64_t ea, unsigned size);

/* xret.c */
bool do_mret(hart *h, uint64_t pc);
bool do_sret(hart *h, uint64_t pc);
bool do_wfi(hart *h, uint64_t pc);

/* events.c */
struct hart_event *event_begin(hart *h, unsigned kind);
void event_commit(hart *h);
uint64_t guest_mstatus(hart *h);
uint64_t guest_mstatus_of(const hart *h, uint64_t raw);

/* hooks.c */
void request_stop(hart *h, unsigned reason, uint64_t pc);
void redirect(hart *h, uint64_t pc);
void hook_insn_at(hart *h, uint64_t addr, uint32_t insn, enum insn_kind kind, bool *added);
void hart_update(hart *h);
void hart_set_trigger_hook(hart *h, uint64_t addr);
void on_block(uc_engine *uc, uint64_t addr, uint32_t size, void *user);
int hart_set_tohost(hart *h, uint64_t paddr, unsigned width);
void on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user);
void on_intr(uc_engine *uc, uint32_t intno, void *user);
bool on_invalid(uc_engine *uc, void *user);
bool on_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value,
                 void *user);
struct hooked_insn *find_hook(hart *h, uint64_t addr);
struct hooked_insn *add_hook(hart *h, uint64_t addr);
void hooks_evict(hart *h);

#endif /* HART_H */
