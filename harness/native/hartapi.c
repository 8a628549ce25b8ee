/*
 * hartapi.c: the hart_* functions Python calls through ctypes (harness/machine/hart.py,
 * declared for it in library.py): making and freeing a hart's core and installing its
 * Unicorn callbacks (hooks.c), RAM, the event buffer, CSR access as the guest sees it,
 * breakpoints, single steps, and the state the run loop asks after a stop.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "hart.h"
#include "portable.h"

/* What the core replaces inside libunicorn is replaced once per process, before any
 * hart runs (the *_install functions are called from here alone): 0 not begun, 1 one
 * thread at it, 2 done. A thread making its first hart while another thread is still
 * patching waits for it, rather than go on with a decision half made (fpu.c's above
 * all: a block translated while the FPU still counted as emulated, and run once its
 * helpers were replaced, would be done as fsgnj.s). */
static int installs;
static bool installs_ok;

static bool install_once(void)
{
    int expected = 0;
    if (__atomic_compare_exchange_n(&installs, &expected, 1, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        /* Without libunicorn's PLT, PMP and the MMU are vtlb.c's: nothing is replaced. */
        bool ok = vtlb_mode() || pmp_install();
        if (ok) {
            dispatch_install();
            exitcheck_install();
            chain_install();
            tbcache_install();
            guard_install();
            fpu_install();
        }
        installs_ok = ok;
        __atomic_store_n(&installs, 2, __ATOMIC_RELEASE);
    }
    while (__atomic_load_n(&installs, __ATOMIC_ACQUIRE) != 2)
        sched_yield();
    return installs_ok;
}

hart *hart_new(uc_engine *uc, unsigned xlen)
{
    if (!install_once())
        return NULL;   /* Unicorn's PMP could not be replaced (pmp.c) */
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
    if (vtlb_mode() && !vtlb_install(h)) {
        hart_free(h);
        return NULL;   /* no virtual TLB in this Unicorn */
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
    free(h->hook_map);
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

/* HTIF: the core looks at the XLEN-wide word at physical `paddr` (in RAM) at every
 * block entry and stops with STOP_HALT while it is nonzero; Python reads the command.
 * paddr = 0 turns it off. Returns 0 if the word is not inside RAM. */
int hart_set_tohost(hart *h, uint64_t paddr, unsigned width)
{
    h->tohost = NULL;
    h->tohost_width = 0;
    if (paddr == 0)
        return 1;
    if ((width != 4 && width != 8) || paddr < h->ram_base ||
        paddr - h->ram_base > h->ram_size - width)
        return 0;
    h->tohost = h->ram + (paddr - h->ram_base);
    h->tohost_width = width;
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

/* Drop every translated block of `uc` (Unicorn's uc_ctl_flush_tb). uc_ctl takes
 * variadic arguments, which ctypes cannot pass portably, so Python asks here. */
void engine_flush_tb(uc_engine *uc)
{
    uc_ctl_flush_tb(uc);
}
