/*
 * hooks.c: the Unicorn callbacks and the API Python calls (harness/machine/hart.py).
 *
 *   on_block    every translated block, on entry: deterministic time (instret), the
 *               timer/budget deadline, stop requests, and first-sight decoding that
 *               plants code hooks (icount.c)
 *   on_code     exact-address hooks on CSR/xRET/wfi/fence instructions and debugger
 *               breakpoints; one hook per address, so their order is ours
 *   on_intr     every synchronous exception Unicorn raises (ecall, faults, illegal);
 *               PC there is the faulting instruction + 4
 *               (docs/unicorn.md#epc-is-pc-minus-4); every ecall is reported as 8
 *               (docs/unicorn.md#ecall-is-always-8)
 *   on_invalid  ebreak, which Unicorn reports as an invalid instruction
 *               (docs/unicorn.md#ebreak-is-an-invalid-instruction)
 *   on_unmapped accesses to physical addresses with no RAM or device: noted here,
 *               turned into an access fault by the run loop
 *               (docs/unicorn.md#unmapped-memory-is-a-host-error)
 */
#include <stdlib.h>
#include <string.h>

#include "hart.h"

/* Stop Unicorn at the next block boundary. A later reason does not hide an earlier
 * one, except that draining events is only worth reporting if nothing else happened. */
void request_stop(hart *h, unsigned reason, uint64_t pc)
{
    if (h->s.stop_reason == STOP_NONE || h->s.stop_reason == STOP_EVENTS_FULL) {
        h->s.stop_reason = reason;
        h->s.stop_pc = pc;
    }
    uc_emu_stop(h->uc);
}

/* Continue at pc. Writing PC makes Unicorn leave the current block and resume there
 * without returning to Python. */
void redirect(hart *h, uint64_t pc)
{
    set_reg(h, UC_RISCV_REG_PC, pc);
    h->irq_from = 0;
}

/* The deadline passed at the start of the block at `pc`, before it ran. Returns true
 * when execution does not continue into this block. */
static bool deadline_reached(hart *h, uint64_t pc)
{
    if (h->nunguard)
        guard_release(h);   /* pages that lost their last translated block */
    if (h->resume_wanted && !h->s.step) {
        request_stop(h, STOP_RESUME, pc);   /* guard.c: restart before this block */
        return true;
    }
    if (h->s.instret >= h->s.budget) {
        request_stop(h, STOP_BUDGET, pc);
        return true;
    }
    if (h->s.instret >= h->s.poll_at && !h->s.step) {
        h->s.poll_at = UNLIMITED;
        request_stop(h, STOP_POLL, pc);
        return true;
    }
    bool taken = h->s.instret >= h->irq_from && check_interrupts(h, pc);
    update_deadline(h);
    return taken;
}

/* With budget_exact (a run to an exact instret), a block that would retire past the
 * budget does not run: the run stops before it and Python single-steps the last few
 * instructions. Plain budgets (--max-insns, a grader's slices) end at the first block
 * boundary at or after them instead: a step costs Python a flush of Unicorn's
 * translations (harness/machine/machine.py), too much to pay at every slice. */
static inline bool crosses_budget(hart *h, uint64_t pc, uint64_t count)
{
    if (!h->s.budget_exact || h->s.step || h->s.instret + count <= h->s.budget)
        return false;
    h->irq_from = h->s.instret + count;   /* the steps and what follows are inside it */
    request_stop(h, STOP_BUDGET, pc);
    return true;
}

void on_block(uc_engine *uc, uint64_t addr, uint32_t size, void *user)
{
    hart *h = user;
    (void)uc;
    if (__builtin_expect(h->s.stop_reason != STOP_NONE, 0)) {
        uc_emu_stop(h->uc);    /* a stop asked for outside the core: honour it here */
        return;
    }
    if (__builtin_expect(h->trig_skip, 0) && addr != h->trig_skip_pc)
        h->trig_skip = 0;   /* that instruction is done or gone */
    if (__builtin_expect(h->s.instret >= h->deadline, 0) && deadline_reached(h, addr))
        return;
    /* Fast path: a loop re-entering the block it just ran. */
    if (addr == h->blk_start && size == h->blk_size && h->blk_epoch == h->xlat_epoch && h->blk) {
        h->blk_instret = h->s.instret;
        if (!h->s.step)
            h->s.instret += h->blk_count;
        return;
    }
    uint32_t count;
    const struct block_info *b;
    const struct l0_entry *l0 = l0_hit(h, addr, size);
    if (__builtin_expect(l0 != NULL, 1)) {
        b = l0->b;
        count = l0->count;
    } else {
        bool retranslate;
        b = block_lookup(h, addr, size, &retranslate, &count);
        if (retranslate) {
            /* New code hooks: drop this translation so the next one carries them. */
            uc_ctl_remove_cache(h->uc, addr, addr + size);
            set_reg(h, UC_RISCV_REG_PC, addr);
            h->blk = NULL;
            return;
        }
    }
    if (crosses_budget(h, addr, count))
        return;
    /* A step that starts a block (as a run would see it: Unicorn translates the same
     * block for a one-instruction run) holds interrupts back to the block's end, as a
     * run takes them only at block boundaries. */
    if (h->s.step && h->s.instret >= h->irq_from)
        h->irq_from = h->s.instret + count;
    h->blk = b;
    /* Running to an exact instret, every block takes this slow path, where the budget
     * is checked against the block's count: the fast path stays free of that test. */
    h->blk_epoch = h->s.budget_exact ? h->xlat_epoch - 1 : h->xlat_epoch;
    h->blk_start = addr;
    h->blk_size = size;
    h->blk_count = count;
    h->blk_instret = h->s.instret;
    if (!h->s.step)
        h->s.instret += count;
}

static bool at_breakpoint(hart *h, struct hooked_insn *hi)
{
    if (!hi->breakpoint)
        return false;
    if (h->bp_skip == hi->addr) {
        h->bp_skip = UNLIMITED;   /* resuming from this breakpoint: run it once */
        return false;
    }
    h->s.break_addr = hi->addr;
    retire_before(h, hi->addr);
    if (!h->s.step)
        h->irq_from = h->blk_instret + h->blk_count;   /* stopped inside this block */
    request_stop(h, STOP_BREAKPOINT, hi->addr);
    return true;
}

/* fence.i may have rewritten code: re-check a hooked word once per code epoch. */
static void revalidate(hart *h, struct hooked_insn *hi)
{
    uint32_t insn;
    hi->epoch = h->code_epoch;
    if (read_insn(h, hi->addr, &insn) && insn != hi->insn) {
        hi->insn = insn;
        hi->kind = classify(insn, h->s.xlen);
    }
}

void on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *user)
{
    struct hooked_insn *hi = user;
    hart *h = hi->h;
    (void)uc; (void)size;
    if (h->s.stop_reason != STOP_NONE || at_breakpoint(h, hi))
        return;
    if (trigger_exec_hit(h, addr)) {
        /* An execute trigger (trigger.c): a breakpoint before the instruction runs. */
        retire_before(h, addr);
        take_trap(h, false, CAUSE_BREAKPOINT, addr, 0);
        return;
    }
    if (hi->epoch != h->code_epoch)
        revalidate(h, hi);
    unsigned priv = cur_priv(h);
    switch (hi->kind) {
    case INSN_CSR:
        emulate_csr(h, hi->insn, addr, priv);
        break;
    case INSN_MRET:
        do_mret(h, addr);
        break;
    case INSN_SRET:
        do_sret(h, addr);
        break;
    case INSN_WFI:
        do_wfi(h, addr);
        break;
    case INSN_FP:
        fpu_emulate(h, hi->insn, addr);
        break;
    case INSN_FENCE:
        /* sfence.vma: page tables may have changed, so cached fetch translations go.
         * fence.i: code may have been rewritten, so decoded blocks go too. Unicorn
         * flushes its own TLB and translations when it executes either. */
        h->in_sfence = (hi->insn & 0x7f) != 0x0f;   /* tlbbank.c: the flush is sfence.vma's */
        if (!h->in_sfence || !tlbbank_active(h))
            stlb_flush(h);   /* (tlbbank.c decides for sfence.vma: it knows what changed) */
        if ((hi->insn & 0x7f) == 0x0f) {
            icount_flush(h);
            h->code_epoch++;
            if (h->s.shared_code) {
                /* Another hart (its own Unicorn engine) may have rewritten code this
                 * one has translated, and Unicorn sees only its own engine's stores:
                 * drop this engine's translations, between runs (hart_resume). */
                h->flush_wanted = true;
                h->resume_wanted = true;
                h->deadline = 0;
            }
        }
        break;
    default:
        break;
    }
}

static size_t hook_slot(uint64_t addr)
{
    return (size_t)((addr >> 1) ^ (addr >> 13)) & (HOOK_SLOTS - 1);
}

struct hooked_insn *find_hook(hart *h, uint64_t addr)
{
    for (size_t i = hook_slot(addr), n = 0; n < HOOK_SLOTS; i = (i + 1) & (HOOK_SLOTS - 1), n++) {
        struct hooked_insn *hi = h->hook_map[i];
        if (!hi || hi->addr == addr)
            return hi;
    }
    return NULL;
}

static struct hooked_insn *add_hook(hart *h, uint64_t addr)
{
    if (h->nhooks >= HOOK_SLOTS * 3 / 4)
        return NULL;   /* the map is full: leave the instruction to Unicorn */
    if (h->nhooks == h->hooks_cap) {
        size_t cap = h->hooks_cap ? 2 * h->hooks_cap : 64;
        struct hooked_insn **grown = realloc(h->hooks, cap * sizeof *grown);
        if (!grown)
            return NULL;
        h->hooks = grown;
        h->hooks_cap = cap;
    }
    struct hooked_insn *hi = calloc(1, sizeof *hi);
    if (!hi)
        return NULL;
    hi->h = h;
    hi->addr = addr;
    hi->epoch = h->code_epoch;
    if (uc_hook_add(h->uc, &hi->handle, UC_HOOK_CODE, (void *)on_code, hi, addr, addr) != UC_ERR_OK) {
        free(hi);
        return NULL;
    }
    h->hooks[h->nhooks++] = hi;
    size_t i = hook_slot(addr);
    while (h->hook_map[i])
        i = (i + 1) & (HOOK_SLOTS - 1);
    h->hook_map[i] = hi;
    return hi;
}

/* Make sure the instruction at addr is intercepted; *added is set if a new Unicorn
 * hook was installed (the caller must have the block retranslated). */
void hook_insn_at(hart *h, uint64_t addr, uint32_t insn, enum insn_kind kind, bool *added)
{
    struct hooked_insn *hi = find_hook(h, addr);
    if (hi) {
        hi->insn = insn;
        hi->kind = kind;
        return;
    }
    hi = add_hook(h, addr);
    if (!hi)
        return;
    hi->insn = insn;
    hi->kind = kind;
    *added = true;
}

/* pmp.c refused, for the core to decide, the access by the instruction at epc, which
 * has not run: its page is watched by a data trigger or debugger watchpoint
 * (trigger.c), or divided by PMP entries and pmp.c was given only the page. The exact
 * address comes from the instruction. Interrupts stay held to the end of the block
 * whatever follows, as the block would have run on without the check. */
static void data_trigger_fault(hart *h, uint64_t epc, unsigned code)
{
    uint64_t ea;
    unsigned size;
    bool decoded = data_access_at(h, epc, &ea, &size);
    /* An AMO or SC both reads and writes: refused as either, it is checked as both, as
     * QEMU 7.2 checks its watchpoints (a load trigger fires on an AMO too). */
    bool rmw = decoded && rmw_access_at(h, epc);
    if (rmw)
        h->trig_privs = PMP_R | PMP_W;
    if (h->pmp_undecided) {
        h->pmp_undecided = false;
        uint64_t pa = h->trig_page | (ea & (PAGE_SIZE - 1));
        if (!decoded || !pmp_allows(h, pa, size, h->trig_privs, h->trig_mode)) {
            take_exception(h, code, epc);   /* PMP refuses those bytes */
            return;
        }
    }
    enum trigger_match match = decoded ? trigger_confirm(h, ea, size) : TRIGGER_NONE;
    uint64_t hold = h->s.step ? h->irq_from : h->blk_instret + h->blk_count;
    switch (match) {
    case TRIGGER_WATCHPOINT:
        /* The debugger's: stop before the access, no trap. */
        set_reg(h, UC_RISCV_REG_PC, epc);
        h->irq_from = hold;
        request_stop(h, STOP_WATCH, epc);
        break;
    case TRIGGER_BREAKPOINT:
        take_trap(h, false, CAUSE_BREAKPOINT, epc, 0);   /* tval 0, as QEMU 7.2 */
        break;
    case TRIGGER_NONE:
        /* Nothing watches these bytes and PMP allows them: make the access again, let
         * through. */
        h->trig_skip = h->trig_privs;
        h->trig_skip_pc = epc;
        redirect(h, epc);
        h->irq_from = hold;
        if (h->s.step)
            request_stop(h, STOP_RETRY, epc);   /* the step ran nothing: Python steps again */
        break;
    }
}

static void on_intr(uc_engine *uc, uint32_t intno, void *user)
{
    hart *h = user;
    (void)uc;
    h->in_sfence = false;   /* an sfence.vma that raised an exception flushed nothing */
    uint64_t epc = (reg(h, UC_RISCV_REG_PC) - 4) & h->xmask;
    unsigned priv = cur_priv(h);
    unsigned code = intno;
    if (code == CAUSE_USER_ECALL)   /* Unicorn reports every ecall as 8 */
        code = priv == PRV_M ? CAUSE_MACHINE_ECALL : priv == PRV_S ? CAUSE_SUPERVISOR_ECALL : CAUSE_USER_ECALL;
    retire_before(h, epc);
    if (h->trig_hit) {
        h->trig_hit = false;
        if (code == CAUSE_FAULT_LOAD || code == CAUSE_FAULT_STORE) {
            data_trigger_fault(h, epc, code);   /* pmp.c left it to the core */
            return;
        }
    }
    if (code == CAUSE_ILLEGAL_INSTRUCTION) {
        uint32_t insn;
        if (read_insn(h, epc, &insn) && classify(insn, h->s.xlen) == INSN_CSR &&
            emulate_csr(h, insn, epc, priv))
            return;   /* rdtime, or a CSR only QEMU 7.2 has */
    }
    take_exception(h, code, epc);
}

static bool on_invalid(uc_engine *uc, void *user)
{
    hart *h = user;
    (void)uc;
    uint64_t pc = reg(h, UC_RISCV_REG_PC);
    take_exception(h, CAUSE_BREAKPOINT, pc);
    return true;
}

static bool on_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr, int size,
                        int64_t value, void *user)
{
    hart *h = user;
    (void)uc; (void)size; (void)value;
    h->s.unmapped_type = (uint32_t)type;
    h->s.unmapped_addr = addr;
    return false;
}

/* ------------------------------------------------------------------------------ */
/* API for Python (ctypes).                                                         */

hart *hart_new(uc_engine *uc, unsigned xlen)
{
    if (!pmp_install())
        return NULL;   /* Unicorn's PMP could not be replaced (pmp.c) */
    dispatch_install();
    exitcheck_install();
    chain_install();
    tbcache_install();
    guard_install();
    fpu_install();
    hart *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->uc = uc;
    h->s.xlen = xlen;
    h->xmask = xlen == 32 ? 0xffffffffull : UNLIMITED;
    h->s.budget = UNLIMITED;
    h->s.poll_at = UNLIMITED;
    h->s.mtimecmp = UNLIMITED;
    h->s.ns_per_tick = 100;
    h->s.storm_limit = 1000;
    h->s.stop_at_event = UNLIMITED;
    h->bp_skip = UNLIMITED;
    h->ret_pc = UNLIMITED;
    h->last_trap_instret = UNLIMITED;
    h->icache_gen = 1;
    h->stlb_gen = 1;
    h->priv = PRV_M;      /* Unicorn's reset state */
    h->satp_stale = true;
    update_deadline(h);
    bool ok = uc_hook_add(uc, &h->h_block, UC_HOOK_BLOCK, (void *)on_block, h, 1, 0) == UC_ERR_OK
        && uc_hook_add(uc, &h->h_intr, UC_HOOK_INTR, (void *)on_intr, h, 1, 0) == UC_ERR_OK
        && uc_hook_add(uc, &h->h_invalid, UC_HOOK_INSN_INVALID, (void *)on_invalid, h, 1, 0) == UC_ERR_OK;
    if (!ok) {
        free(h);
        return NULL;
    }
    pmp_register(h, true);
    trigger_reset(h);
    return h;
}

void hart_free(hart *h)
{
    if (!h)
        return;
    pmp_register(h, false);
    tlbbank_free(h);
    free(h->tbcache);
    for (size_t i = 0; i < h->nhooks; i++)
        free(h->hooks[i]);
    free(h->hooks);
    free(h);
}

/* Guest RAM's host address, for reading code and page tables directly.
 *
 * The unmapped-memory hook is installed here, bounded to the physical addresses
 * outside RAM, and never over RAM itself: Unicorn keeps every store to a page that any
 * memory hook's range covers on its slow path (notdirty_write, a code-invalidation
 * check per store; docs/unicorn.md#a-memory-hook-over-ram-slows-every-store). */
int hart_set_ram(hart *h, void *host, uint64_t base, uint64_t size)
{
    tlbbank_free(h);   /* its records point into the old RAM */
    h->ram = host;
    h->ram_base = base;
    h->ram_size = size;
    h->ram_addr_known = false;
    h->nunguard = 0;
    for (unsigned i = 0; i < h->n_unmapped; i++)
        uc_hook_del(h->uc, h->h_unmapped[i]);
    h->n_unmapped = 0;
    uint64_t ranges[2][2] = {{0, base - 1}, {base + size, UNLIMITED}};
    for (unsigned i = 0; i < 2; i++) {
        uint64_t lo = ranges[i][0], hi = ranges[i][1];
        if ((i == 0 && base == 0) || (i == 1 && base + size == 0))
            continue;   /* RAM reaches that end of the address space */
        if (uc_hook_add(h->uc, &h->h_unmapped[h->n_unmapped], UC_HOOK_MEM_UNMAPPED,
                        (void *)on_unmapped, h, lo, hi) != UC_ERR_OK)
            return 0;
        h->unmapped_range[h->n_unmapped][0] = lo;
        h->unmapped_range[h->n_unmapped][1] = hi;
        h->n_unmapped++;
    }
    return 1;
}

/* The i-th physical range the unmapped-memory hook covers; 0 past the last. */
int hart_unmapped_range(hart *h, unsigned i, uint64_t *lo, uint64_t *hi)
{
    if (i >= h->n_unmapped)
        return 0;
    *lo = h->unmapped_range[i][0];
    *hi = h->unmapped_range[i][1];
    return 1;
}

/* The host changed the hart's state behind the core's back (privilege, satp, memory):
 * refresh what the core keeps. */
void hart_sync(hart *h)
{
    h->priv = (unsigned)reg(h, UC_RISCV_REG_PRIV) & 3;
    h->satp_stale = true;
    stlb_flush(h);
    icount_flush(h);
    hart_update(h);
}

void hart_set_event_buffer(hart *h, struct hart_event *buf, uint32_t cap)
{
    h->events = buf;
    h->s.ev_cap = cap;
    h->s.ev_len = 0;
}

/* Python changed a device line, the timer, or the budget. */
void hart_update(hart *h)
{
    update_deadline(h);
    if (pending_interrupt(h) >= 0)
        h->deadline = 0;   /* look at the next block boundary */
}

/* Between runs: take a pending, enabled interrupt at the current pc. */
int hart_check_interrupts(hart *h)
{
    return check_interrupts(h, reg(h, UC_RISCV_REG_PC));
}

/* The run loop stopped for wfi: skip guest time to the next event that can wake the
 * hart (an interrupt pending and enabled in mie). Returns 0 if nothing ever can. */
int hart_wfi_wake(hart *h)
{
    if (mip_value(h) & h->mie)
        return 1;
    uint64_t wake = UNLIMITED;
    if (h->mie & MIP_MTIP)
        wake = h->s.mtimecmp;
    if ((h->mie & MIP_STIP) && sstc_on(h) && h->stimecmp < wake)
        wake = h->stimecmp;   /* Sstc's comparator */
    if (wake > UNLIMITED / h->s.ns_per_tick)
        return 0;
    uint64_t wake_ns = wake * h->s.ns_per_tick;
    uint64_t now_ns = guest_ns(h);
    if (wake_ns > now_ns)
        h->s.idle_ns += wake_ns - now_ns;
    update_deadline(h);
    return 1;
}

/* An access to unmapped physical memory stopped Unicorn at the instruction `pc`. */
void hart_access_fault(hart *h, uint64_t pc)
{
    unsigned code = h->s.unmapped_type == UC_MEM_WRITE_UNMAPPED ? CAUSE_FAULT_STORE
                  : h->s.unmapped_type == UC_MEM_FETCH_UNMAPPED ? CAUSE_FAULT_FETCH
                  : CAUSE_FAULT_LOAD;
    take_exception(h, code, pc);
    h->s.unmapped_addr = UNLIMITED;
}

/* A device stopped the run in the middle of a block (the finisher, HTIF, a device
 * error) with the hart at `pc`, the instruction after the access: the block was
 * counted whole at entry, but only the instructions before `pc` ran. */
void hart_stopped_at(hart *h, uint64_t pc)
{
    if (h->s.step || !h->blk || pc < h->blk_start || pc > h->blk_start + h->blk_size)
        return;
    retire_before(h, pc);
}

int hart_read_csr(hart *h, unsigned csr, uint64_t *value)
{
    if (csr_read_virtual(h, csr, value))
        return 1;
    int id = csr_ucid(csr);
    if (id < 0)
        return 0;
    *value = csr_raw(h, id);
    return 1;
}

int hart_write_csr(hart *h, unsigned csr, uint64_t value)
{
    if (!csr_write_virtual(h, csr, value)) {
        int id = csr_ucid(csr);
        if (id < 0)
            return 0;
        set_csr_raw(h, id, value);
        if (csr == CSR_SATP)
            h->satp_stale = true;
    }
    hart_update(h);
    return 1;
}

int hart_set_breakpoint(hart *h, uint64_t addr, int on)
{
    struct hooked_insn *hi = find_hook(h, addr);
    if (!hi) {
        if (!on)
            return 1;
        hi = add_hook(h, addr);
        if (!hi)
            return 0;
        uint32_t insn;
        if (read_insn(h, addr, &insn)) {
            hi->insn = insn;
            hi->kind = classify(insn, h->s.xlen);
        }
        uc_ctl_remove_cache(h->uc, addr, addr + 4);
    }
    hi->breakpoint = on;
    return 1;
}

/* An execute trigger at addr (trigger.c): make sure on_code runs there. */
void hart_set_trigger_hook(hart *h, uint64_t addr)
{
    if (find_hook(h, addr))
        return;
    struct hooked_insn *hi = add_hook(h, addr);
    if (!hi)
        return;
    uint32_t insn;
    if (read_insn(h, addr, &insn)) {
        hi->insn = insn;
        hi->kind = classify(insn, h->s.xlen);
    }
    uc_ctl_remove_cache(h->uc, addr, addr + 4);
}

void hart_skip_breakpoint_once(hart *h, uint64_t addr)
{
    h->bp_skip = addr;
}

/* Single step (debugger): Python runs Unicorn for one instruction with `step` set. */
void hart_step_begin(hart *h)
{
    h->s.step = 1;
    h->accounted = false;
    h->blk_start = reg(h, UC_RISCV_REG_PC);
    h->blk_size = 0;
    h->blk_count = 0;
    h->blk = NULL;
    h->blk_instret = h->s.instret;
}

void hart_step_end(hart *h)
{
    if (!h->accounted)
        h->s.instret++;
    h->s.step = 0;
}

uint64_t hart_mtime(hart *h)
{
    return mtime(h);
}

uint64_t hart_mip(hart *h)
{
    return mip_value(h);
}

size_t hart_hook_count(hart *h)
{
    return h->nhooks;
}

/* Is the next instruction inside a block a run has started (so a run with a plain
 * budget would go on to the block's end before it stops)? Several harts' turns end
 * at a block start (harness/machine/machine.py); a stepped turn ends there too. */
int hart_in_block(hart *h)
{
    return h->s.instret < h->irq_from;
}
