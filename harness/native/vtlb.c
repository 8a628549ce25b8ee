/*
 * vtlb.c: PMP and the MMU through Unicorn's public API only, for portable mode.
 *
 * pmp.c replaces Unicorn's PMP check and TLB fill through libunicorn's PLT, which a
 * Mach-O libunicorn (macOS) does not have. In portable mode (portable.h) the core
 * replaces nothing: the hart's engine runs with Unicorn's virtual TLB
 * (UC_TLB_VIRTUAL), where Unicorn's own RISC-V MMU is bypassed and every TLB miss
 * asks a UC_HOOK_TLB_FILL hook for the page (qemu/softmmu/unicorn_vtlb.c). The hook
 * is given the page's virtual address and the access type only, and fills a whole
 * page. So the core:
 *
 *   - walks Sv32/Sv39/Sv48 itself (fetch.c pt_walk, checked) and checks the leaf as
 *     the privileged spec (4.3, 4.4) and QEMU 7.2's get_physical_address do: V,
 *     R/W/X, U with SUM, MXR, mstatus.MPRV+MPP for loads
 *     and stores, superpage alignment, reserved bits, A and D set by the walk (a page
 *     whose D bit is clear is filled without write, so the first store walks again);
 *   - checks PMP (pmp.c pmp_allows) on each page-table entry it reads (as S) and on
 *     the leaf, for the whole page (pmp_page_privs);
 *   - refuses the fill when the access faults. Unicorn then stops uc_emu_start with
 *     UC_ERR_EXCEPTION, pc at the faulting instruction, which has not run; the run
 *     loop (harness/machine/machine.py) calls hart_vtlb_stop, which takes the trap:
 *     cause 1/5/7 or 12/13/15, tval the exact address, from the decoded instruction
 *     as hooks.c data_trigger_fault finds it (the page's start when the access crosses
 *     into the refused page; for a fetch the fetch address);
 *   - refuses the fill, too, on a page it must decide access by access: a page PMP
 *     entries divide for the access's privilege, one a data trigger or debugger
 *     watchpoint watches, a device page (devaccess.c). hart_vtlb_stop decides from the
 *     decoded instruction; if the access is allowed, it runs that one instruction with
 *     the page let through and flushes the TLB after it, so no later access finds the
 *     entry.
 *
 * A store to a physical address with nothing behind it is a store access fault, as in
 * pmp.c. The TLB is flushed where the translation may change: Unicorn still flushes at
 * sfence.vma, at satp writes that change the ASID and at mstatus writes that change
 * MPRV, MPP, SUM or MXR (its write_mstatus, reached by the core's register writes:
 * csrops.c, xret.c, trapentry.c); pmp.c flushes at every PMP write. Host probes
 * (uc_vmem_translate and uc_vmem_read from memory.py, inside privlab_probe) are walked
 * without PMP and flushed when the probe ends, as pmp.c's are.
 */
#include <stdlib.h>
#include <string.h>

#include "hart.h"
#include "portable.h"

#define PMP_RWX (PMP_R | PMP_W | PMP_X)

enum { VT_NONE, VT_TRAP, VT_DECIDE };

/* hart_vtlb_stop's answers, for the C loop there. */
enum { VT_DONE, VT_RUN_ONE };

static unsigned privs_of(uc_mem_type type)
{
    return type == UC_MEM_FETCH ? PMP_X : type == UC_MEM_WRITE ? PMP_W : PMP_R;
}

static unsigned access_fault(unsigned privs)
{
    return privs == PMP_X ? CAUSE_FAULT_FETCH : privs & PMP_W ? CAUSE_FAULT_STORE : CAUSE_FAULT_LOAD;
}

static unsigned page_fault(unsigned privs)
{
    return privs == PMP_X ? CAUSE_EXEC_PAGE_FAULT
        : privs & PMP_W ? CAUSE_STORE_PAGE_FAULT : CAUSE_LOAD_PAGE_FAULT;
}

/* mstatus's SUM and MXR now. Read at the hart's own level: lending Unicorn M (csr_raw)
 * goes through its riscv_cpu_set_mode, which drops the LR reservation, so a fill
 * between an LR and its SC made the SC fail. sstatus has both bits from S; from U
 * only MXR is ever needed, and only for a load from an execute-only page. */
static uint64_t status_now(hart *h)
{
    unsigned priv = cur_priv(h);
    if (priv == PRV_M)
        return reg(h, UC_RISCV_REG_MSTATUS);
    if (priv == PRV_S)
        return reg(h, UC_RISCV_REG_SSTATUS);
    return csr_raw(h, UC_RISCV_REG_MSTATUS);
}

/* The walk of `va` for an access of `privs` at `mode`: 0 and the physical page and the
 * page table's permissions (PMP_R/W/X), or the cause of the exception. */
static unsigned translate(hart *h, uint64_t va, unsigned privs, unsigned mode,
                          uint64_t *pa, unsigned *prot, bool *bare)
{
    struct pt_scheme s;
    struct pt_leaf leaf;
    *bare = true;
    if (mode == PRV_M || !pt_scheme(h->s.xlen == 64, current_satp(h), &s)) {
        *pa = va & h->xmask;
        *prot = PMP_RWX;
        return 0;
    }
    *bare = false;
    switch (pt_walk(h, va, &s, PTW_CHECKED, NULL, NULL, &leaf)) {
    case PTW_LEAF:
        break;
    case PTW_ACCESS_FAULT:
        return access_fault(privs);
    default:
        return page_fault(privs);   /* QEMU 7.2: a failed PTE load fails the walk too */
    }
    uint64_t pte = leaf.pte;
    bool xonly = (pte & PTE_X) && !(pte & PTE_R);
    uint64_t status = ((pte & PTE_U) && mode == PRV_S) || xonly ? status_now(h) : 0;
    bool sum = status & MSTATUS_SUM, mxr = status & MSTATUS_MXR;
    if (pte & PTE_U) {
        if (mode != PRV_U && (!sum || privs == PMP_X))
            return page_fault(privs);
    } else if (mode != PRV_S) {
        return page_fault(privs);
    }
    if (leaf.misaligned)
        return page_fault(privs);
    bool readable = (pte & PTE_R) || ((pte & PTE_X) && mxr);
    if ((privs & PMP_R && !readable) || (privs & PMP_W && !(pte & PTE_W)) ||
        (privs & PMP_X && !(pte & PTE_X)))
        return page_fault(privs);
    /* A and D, set by the walk as QEMU 7.2 sets them. */
    uint64_t updated = pte | PTE_A | ((privs & PMP_W) ? PTE_D : 0);
    if (updated != pte)
        memcpy(leaf.at, &updated, s.pte_size);
    *prot = (readable ? PMP_R : 0) | ((pte & PTE_X) ? PMP_X : 0) |
            ((pte & PTE_W) && (updated & PTE_D) ? PMP_W : 0);
    if ((pte & PTE_U) && mode == PRV_S)
        *prot &= ~(unsigned)PMP_X;   /* S never executes a user page */
    *pa = leaf.pa & ~(uint64_t)(PAGE_SIZE - 1);
    return 0;
}

/* The privilege a load or store is translated and checked at: M's under MPRV is MPP's. */
static unsigned data_mode(hart *h)
{
    unsigned priv = cur_priv(h);
    if (priv != PRV_M)
        return priv;
    uint64_t mstatus = reg(h, UC_RISCV_REG_MSTATUS);
    if (mstatus & MSTATUS_MPRV)
        return (unsigned)((mstatus & MSTATUS_MPP) >> MSTATUS_MPP_SHIFT);
    return priv;
}

static void refuse(hart *h, unsigned kind, unsigned code, uint64_t vpage, uint64_t ppage,
                   unsigned privs, unsigned mode)
{
    h->vt.kind = kind;
    h->vt.code = code;
    h->vt.pc = reg(h, UC_RISCV_REG_PC) & h->xmask;   /* restored: the faulting instruction */
    h->vt.vpage = vpage;
    h->vt.ppage = ppage;
    h->vt.privs = privs;
    h->vt.mode = mode;
}

bool vtlb_fill(uc_engine *uc, uint64_t vpage, uc_mem_type type, uc_tlb_entry *e, void *user)
{
    hart *h = user;
    (void)uc;
    unsigned privs = privs_of(type);
    unsigned mode = privs == PMP_X ? cur_priv(h) : data_mode(h);
    uint64_t pa;
    unsigned prot;
    bool bare;
    unsigned code = translate(h, vpage, privs, mode, &pa, &prot, &bare);
    if (pmp_probing()) {
        /* The host's question is what the page tables say: no PMP, no trap. */
        if (code)
            return false;
        e->paddr = pa;
        e->perms = prot;
        pmp_probe_filled(h);
        return true;
    }
    if (code) {
        refuse(h, VT_TRAP, code, vpage, 0, privs, mode);
        return false;
    }
    bool pass = h->vt.pass && h->vt.pass_vpage == vpage && (h->vt.pass_privs & privs);
    unsigned whole = 0;
    bool divided = !pmp_page_privs(h, pa, mode, &whole);
    if (pass) {
        /* hart_vtlb_stop decided this instruction's access: let it through, once. */
        e->paddr = pa;
        e->perms = prot & h->vt.pass_privs;
        return true;
    }
    bool special = divided || devaccess_page(pa) || trigger_watches_page(h, pa) ||
        trigger_watches_page(h, vpage);
    /* Loads and stores under MPRV are translated as MPP, fetches in M are not: then an
     * entry serves only the kind of access that filled it. */
    bool same = !(cur_priv(h) == PRV_M && mode != PRV_M);
    bool in_ram = ram_ptr(h, pa, PAGE_SIZE) != NULL;
    unsigned others = same && !special ? prot & whole & (in_ram ? PMP_R | PMP_W : PMP_R) : 0;
    if (privs == PMP_X) {
        /* A fetch keeps a divided page's entry, as QEMU 7.2 does: the first fetch's
         * check, at the fetch address, decides for the page (docs/machine.md). */
        uint64_t pc = reg(h, UC_RISCV_REG_PC) & h->xmask;
        uint64_t at = (pc & ~(uint64_t)(PAGE_SIZE - 1)) == vpage ? pc : vpage;
        if (divided ? !pmp_allows(h, pa | (at & (PAGE_SIZE - 1)), 0, PMP_X, mode)
                    : !(whole & PMP_X)) {
            refuse(h, VT_TRAP, CAUSE_FAULT_FETCH, vpage, pa, privs, mode);
            return false;
        }
        e->paddr = pa;
        e->perms = PMP_X | others;
        return true;
    }
    if (special) {
        refuse(h, VT_DECIDE, 0, vpage, pa, privs, mode);
        return false;
    }
    if (!(whole & privs) || ((privs & PMP_W) && !in_ram && !pmp_store_backed(h, pa))) {
        refuse(h, VT_TRAP, access_fault(privs), vpage, pa, privs, mode);
        return false;
    }
    e->paddr = pa;
    /* Without translation a load's or store's entry leaves execute out (pmp.c
     * untranslated: Unicorn keeps stores to an executable entry on its slow path); a
     * fetch from the page fills its own. */
    e->perms = (others | privs) & ~(bare ? (unsigned)PMP_X : 0u);
    if (!bare && same)
        e->perms |= prot & whole & PMP_X;
    else if (bare && (prot & whole & PMP_X))
        pmp_note_noexec_fill();   /* execute the page allows, left out (pmp.c's count) */
    return true;
}

/* Where the refused access lies: its virtual address for tval, and its physical
 * address and size on the refused page. */
static bool refused_access(hart *h, uint64_t *tval, uint64_t *pa, unsigned *size)
{
    uint64_t ea;
    unsigned sz;
    if (!data_access_at(h, h->vt.pc, &ea, &sz))
        return false;
    if ((ea & ~(uint64_t)(PAGE_SIZE - 1)) == h->vt.vpage) {
        *tval = ea;
        *pa = h->vt.ppage | (ea & (PAGE_SIZE - 1));
        uint64_t room = PAGE_SIZE - (ea & (PAGE_SIZE - 1));
        *size = sz < room ? sz : (unsigned)room;
    } else {
        /* The upper part of an access that crosses into this page. */
        *tval = h->vt.vpage;
        *pa = h->vt.ppage;
        *size = (unsigned)((ea + sz - h->vt.vpage) & h->xmask);
    }
    return true;
}

/* The trap for the refused access, taken at its instruction. */
static void trap(hart *h, unsigned code, uint64_t tval)
{
    retire_before(h, h->vt.pc);
    take_trap(h, false, code, h->vt.pc, tval);
}

static int decide(hart *h)
{
    unsigned kind = h->vt.kind;
    h->vt.kind = VT_NONE;
    uint64_t pc = reg(h, UC_RISCV_REG_PC) & h->xmask;
    if (kind == VT_NONE || pc != h->vt.pc)
        return VT_DONE;   /* not a refusal of ours: an ebreak the core delivered */
    uint64_t hold = h->s.step ? h->irq_from : h->blk_instret + h->blk_count;
    if (h->vt.privs == PMP_X) {
        if ((pc & ~(uint64_t)(PAGE_SIZE - 1)) == h->vt.vpage) {
            trap(h, h->vt.code, pc);
            return VT_DONE;
        }
        /* The next page of a block's last instruction, which crosses into it: the
         * instructions before it run first, one at a time, and it faults itself. Only
         * its first half is readable (read_insn of the whole instruction fails, which
         * sent it back to run alone, refused again, forever): a 32-bit encoding there
         * is the crossing instruction, epc its first byte, tval the refused page. */
        uint16_t half;
        if (pc + 2 == h->vt.vpage &&
            (!vmem_read(h, pc, UC_PROT_EXEC, &half, sizeof half) || (half & 3) == 3)) {
            trap(h, h->vt.code, h->vt.vpage);
            return VT_DONE;
        }
        h->irq_from = hold;
        return VT_RUN_ONE;
    }
    /* An AMO or SC reads and writes in one access: its faults are store faults. */
    bool rmw = rmw_access_at(h, pc);
    unsigned privs = rmw ? PMP_R | PMP_W : h->vt.privs;
    uint64_t tval = 0, pa = 0;
    unsigned size = 0;
    bool decoded = refused_access(h, &tval, &pa, &size);
    if (kind == VT_TRAP) {
        /* The refused fill's own kind decides, for an AMO too: Unicorn runs its read
         * before its write, so a page the AMO cannot read refuses the read, a
         * load fault, as QEMU 7.2 reports it (exc_access_fault and vm_page_faults
         * check this), and a read-only page refuses the write, a store fault. */
        trap(h, h->vt.code, decoded ? tval : h->vt.vpage);
        return VT_DONE;
    }
    unsigned fault = rmw ? CAUSE_FAULT_STORE : access_fault(h->vt.privs);
    if (!decoded || !pmp_allows(h, pa, size, privs, h->vt.mode) ||
        (devaccess_page(pa) && !devaccess_check(pa, size))) {
        trap(h, fault, decoded ? tval : h->vt.vpage);
        return VT_DONE;
    }
    bool skip = h->trig_skip && pc == h->trig_skip_pc && (h->trig_skip & privs) == privs;
    if (skip) {
        /* Resuming from the debugger's stop before this access (trigger.c
         * hart_skip_watch_once): it goes through once, as pmp.c lets it. */
        h->trig_skip &= ~privs;
    } else if (trigger_watches_page(h, h->vt.ppage) || trigger_watches_page(h, h->vt.vpage)) {
        h->trig_page = h->vt.ppage;
        h->trig_privs = privs;
        uint64_t ea;
        unsigned sz;
        data_access_at(h, pc, &ea, &sz);
        switch (trigger_confirm(h, ea, sz)) {
        case TRIGGER_WATCHPOINT:
            /* The debugger's: stop before the access, no trap. */
            retire_before(h, pc);
            h->irq_from = hold;
            request_stop(h, STOP_WATCH, pc);
            return VT_DONE;
        case TRIGGER_BREAKPOINT:
            trap(h, CAUSE_BREAKPOINT, 0);   /* tval 0, as QEMU 7.2 */
            return VT_DONE;
        case TRIGGER_NONE:
            break;
        }
    }
    h->vt.pass = true;
    h->vt.pass_vpage = h->vt.vpage;
    h->vt.pass_privs = privs;
    h->irq_from = hold;
    return VT_RUN_ONE;
}

/* Makes the end of the let-through load, store or AMO at `pc` the run's one exit, so
 * that the run stops after it without a count: an uncounted uc_emu_start after a
 * counted one drops every translated block (Unicorn 2.1.4 uc.c, removing its count
 * hook), and a device page (the PLIC's claim register, the CLINT, the UART) sends
 * every access here: abitests ran 11 times slower in counted runs than without
 * PRIVLAB_VTLB. The block at `pc` is translated afresh and ends at the exit; not
 * where the next instruction is on the next page (the block ends at the page's end
 * and the next one, translated earlier, runs on), nor while other exits are set. The
 * access was decided and its fill requested, so the instruction traps no more. */
static bool exit_after(hart *h, uint64_t pc, uint64_t *next)
{
    uint32_t insn;
    size_t exits = 1;
    if (!h->vt.pass || !read_insn(h, pc, &insn))
        return false;
    *next = (pc + insn_len(insn)) & h->xmask;
    if ((*next & ~(uint64_t)(PAGE_SIZE - 1)) != (pc & ~(uint64_t)(PAGE_SIZE - 1)))
        return false;
    if (uc_ctl_get_exits_cnt(h->uc, &exits) != UC_ERR_OK || exits != 0)
        return false;
    return uc_ctl_set_exits(h->uc, next, 1) == UC_ERR_OK;
}

/* Portable mode: uc_emu_start stopped with UC_ERR_EXCEPTION (the run loop,
 * harness/machine/machine.py). If the TLB hook refused a fill, take the trap, or run
 * the one instruction whose access was let through (or, for a fetch refused on the
 * next page, the instructions before the one that crosses into it), then flush the
 * TLB. Returns an error of those runs other than UC_ERR_EXCEPTION, for the run loop
 * to handle as its own (0 if none). */
int hart_vtlb_stop(hart *h)
{
    for (unsigned n = 0; n < 2 * PAGE_SIZE; n++) {
        if (decide(h) != VT_RUN_ONE)
            return 0;
        uint64_t pc = reg(h, UC_RISCV_REG_PC) & h->xmask;
        bool stepping = h->s.step;
        if (!stepping) {
            retire_before(h, pc);
            hart_step_begin(h);
        }
        /* A one-instruction run stops only in blocks translated for it
         * (docs/unicorn.md#counted-runs-need-fresh-translations). */
        uc_ctl_remove_cache(h->uc, pc, pc + 4);
        uint64_t next = 0;
        bool at_exit = !stepping && exit_after(h, pc, &next);
        uc_err err = uc_emu_start(h->uc, pc, h->xmask, 0, at_exit ? 0 : 1);
        if (at_exit) {
            uc_ctl_set_exits(h->uc, &next, 0);
            uc_ctl_remove_cache(h->uc, pc, next);   /* its block ends at the exit */
        }
        if (!stepping)
            hart_step_end(h);
        if (h->vt.pass) {
            h->vt.pass = false;
            uc_ctl_flush_tlb(h->uc);   /* the entry let through goes */
        }
        if (err != UC_ERR_EXCEPTION)
            return err;
    }
    return 0;
}

/* Portable mode: the engine's TLB is the core's (Unicorn's virtual TLB). */
bool vtlb_install(hart *h)
{
    /* Exits instead of uc_emu_start's `until` (none: the run loop's end address is never
     * a pc). After each run Unicorn drops the translation at `until` - 1, which asks
     * for a fetch fill of the top page: refused there, it turned the end of every run
     * into UC_ERR_EXCEPTION (qemu/softmmu/cpus.c resume_all_vcpus). */
    if (uc_ctl_tlb_mode(h->uc, UC_TLB_VIRTUAL) != UC_ERR_OK ||
        uc_ctl_exits_enable(h->uc) != UC_ERR_OK)
        return false;
    return uc_hook_add(h->uc, &h->vt.hook, UC_HOOK_TLB_FILL, (void *)vtlb_fill, h, 1, 0) ==
        UC_ERR_OK;
}

/* In portable mode, with PRIVLAB_VTLB, or by itself where libunicorn has no PLT slot
 * for pmp.c's check (a Mach-O libunicorn, PRIVLAB_NO_PLT): the one way PMP and the MMU
 * can then be exact. PRIVLAB_VTLB=0 turns it off even there, as on a libunicorn
 * without the virtual TLB: then hart_new refuses, for the tests of what such a host
 * says (hart.py). Read once. */
bool vtlb_mode(void)
{
    static int mode = -1;
    if (mode < 0) {
        const char *env = getenv("PRIVLAB_VTLB");
        bool asked = env && *env && strcmp(env, "0") != 0;
        bool refused = env && strcmp(env, "0") == 0;
        mode = portable_mode() && !refused && (asked || !plt_slot("pmp_hart_has_privs_riscv64"));
    }
    return mode;
}

int hart_vtlb_on(void)
{
    return vtlb_mode();
}
