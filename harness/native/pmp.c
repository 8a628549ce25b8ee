/*
 * pmp.c: physical memory protection as the privileged spec (3.7) and QEMU 7.2 define
 * it, in place of Unicorn's QEMU 5.0 copy.
 *
 * What is wrong with Unicorn's (docs/unicorn.md#pmp-is-qemu-5):
 *   - its range arithmetic is XLEN-wide, so on RV32 a NAPOT entry of 2^32 bytes or
 *     more (riscv-tests open all memory with pmpaddr0 = 0x7fffffff, the whole 34-bit
 *     space) covers 4 bytes, and TOR tops at or above 2^32 wrap;
 *   - on RV64 pmpcfg2 configures entries 16-23 (nonexistent) instead of 8-15;
 *   - with no active entry S and U may access everything (QEMU 7.2 and the spec: nothing);
 *   - it checks PMP only when it fills a TLB entry and then caches the whole page with
 *     the page table's permissions, so permissions finer than a page, or an access type
 *     the entry forbids after another type filled the entry, go unchecked
 *     (docs/unicorn.md#pmp-permissions-cached-per-page).
 *
 * What the core does: the guest's pmpcfg0-3 and pmpaddr0-15 live here (csrops.c
 * emulates every CSR instruction on them, Unicorn's copies stay zero), and Unicorn's
 * own check, pmp_hart_has_privs_riscv{32,64}, and its TLB fill, tlb_set_page_riscv
 * {32,64}, are replaced in libunicorn's PLT (GOT slots patched once, at the first
 * hart_new) by the functions below. The check decides each access as the spec does; the
 * TLB fill then keeps the page's PMP permissions for the access mode (ANDed with the
 * page table's, as QEMU 7.2's get_physical_address_pmp does) and, when entries divide
 * the page, asks for an entry smaller than a page, which QEMU's softmmu refills on
 * every access (TLB_INVALID_MASK; code from such a page runs one instruction per
 * block): QEMU 7.2's pmp_is_range_in_tlb. Every PMP write flushes Unicorn's TLB, as
 * QEMU 7.2's pmpcfg_csr_write/pmpaddr_csr_write do.
 *
 * Through the page tables Unicorn's caller passes only the page's physical address
 * (docs/unicorn.md#pmp-check-gets-the-page-under-translation). Where that matters, on a
 * page PMP entries divide, the check refuses the access for the core to decide from
 * the instruction's own address (hooks.c data_trigger_fault): an access fault, or the
 * access made again and let through (trig_skip).
 */
#include <string.h>

#include "hart.h"
#include "portable.h"

#define PMP_RWX (PMP_R | PMP_W | PMP_X)
#define PAGE 4096ull
#define PMP_HARTS_MAX 256

/* Live harts, newest last, to find the one a Unicorn CPU state (env) belongs to. A
 * hart the host never freed stays until an engine at the same address replaces it
 * (its engine is gone then) or the table is full (the oldest goes). */
static hart *harts[PMP_HARTS_MAX];
static unsigned nharts;
static hart *last_hart;   /* the hart of the last lookup */

static void unregister_at(unsigned i)
{
    if (harts[i] == last_hart)
        last_hart = NULL;
    memmove(&harts[i], &harts[i + 1], (nharts - i - 1) * sizeof *harts);
    nharts--;
}

void pmp_register(hart *h, bool on)
{
    for (unsigned i = nharts; i-- > 0;)
        if (harts[i] == h || (on && harts[i]->uc == h->uc))
            unregister_at(i);
    if (!on)
        return;
    if (nharts == PMP_HARTS_MAX)
        unregister_at(0);
    harts[nharts++] = h;
}

/* The hart whose CPUState is cpu, once pmp.c's fill has seen it (tlbflush.c). The
 * CPU's env lies at a fixed distance from it (QEMU's RISCVCPU), learned with the first
 * hart's; the hart is then found from env as hart_of_env does, by the engine env names,
 * so a hart left registered after its engine was freed is not taken for a new engine's
 * whose CPU landed at the same address. */
static ptrdiff_t cpu_env_distance;

hart *hart_of_cpu(const void *cpu)
{
    if (!cpu_env_distance)
        return NULL;
    hart *h = hart_of_env((char *)cpu + cpu_env_distance, 64);
    return h && h->cpu == cpu ? h : NULL;
}

static void learn_cpu(hart *h, void *cpu)
{
    ptrdiff_t d = (char *)h->env - (char *)cpu;
    if (!h->env || d <= 0 || d > (1 << 20) || (cpu_env_distance && d != cpu_env_distance))
        return;
    cpu_env_distance = d;
    h->cpu = cpu;
}

/* The hart whose engine is uc, if it has one (dispatch.c). */
hart *hart_of_engine(const void *uc)
{
    if (last_hart && (const void *)last_hart->uc == uc)
        return last_hart;
    for (unsigned i = nharts; i-- > 0;)
        if ((const void *)harts[i]->uc == uc)
            return last_hart = harts[i];
    return NULL;
}

/* QEMU's CPURISCVState ends with `struct uc_struct *uc` (Unicorn's field): the word of
 * env at that offset names the engine, and so the hart. The offset is found once, as
 * the first word of an env equal to a live hart's engine. */
#define ENV_SCAN_BYTES 8192
static size_t env_uc_offset[2] = {SIZE_MAX, SIZE_MAX};   /* RV32's env, RV64's */

hart *hart_of_env(void *env, unsigned xlen)
{
    const uintptr_t *w = env;
    size_t *off = &env_uc_offset[xlen == 64];
    if (*off == SIZE_MAX) {
        for (size_t k = 0; k < ENV_SCAN_BYTES / sizeof *w && *off == SIZE_MAX; k++)
            for (unsigned i = 0; i < nharts; i++)
                if (harts[i]->s.xlen == xlen && w[k] == (uintptr_t)harts[i]->uc)
                    *off = k;
        if (*off == SIZE_MAX)
            return NULL;
    }
    uintptr_t uc = w[*off];
    if (last_hart && (uintptr_t)last_hart->uc == uc)
        return last_hart;
    for (unsigned i = nharts; i-- > 0;)
        if ((uintptr_t)harts[i]->uc == uc)
            return last_hart = harts[i];
    return NULL;
}

/* ---- the guest's PMP registers ---- */

static unsigned pmp_a(uint8_t cfg)
{
    return cfg & PMP_A;
}

/* An entry's address register is locked by its own L bit, or (TOR) by the next
 * entry's L bit when that one is TOR. */
static bool addr_locked(const hart *h, unsigned i)
{
    if (h->pmpcfg[i] & PMP_L)
        return true;
    return i + 1 < PMP_ENTRIES && (h->pmpcfg[i + 1] & PMP_L) &&
           pmp_a(h->pmpcfg[i + 1]) == PMP_A_TOR;
}

/* pmpaddr holds address bits 33:2 on RV32 and 55:2 on RV64; RV64's bits 63:54 read
 * as zero (spec 3.7.1; QEMU 7.2 keeps them, with no effect on matching). */
static uint64_t pmpaddr_mask(const hart *h)
{
    return h->s.xlen == 32 ? 0xffffffffull : (1ull << 54) - 1;
}

/* The pmpcfg CSRs that exist: pmpcfg0-3 on RV32, the even ones on RV64. */
bool pmp_csr_exists(const hart *h, unsigned csr)
{
    if (csr >= CSR_PMPCFG0 && csr < CSR_PMPCFG0 + PMP_ENTRIES / 4)
        return h->s.xlen == 32 || !((csr - CSR_PMPCFG0) & 1);
    return csr >= CSR_PMPADDR0 && csr < CSR_PMPADDR0 + PMP_ENTRIES;
}

bool pmp_is_csr(unsigned csr)
{
    return (csr >= CSR_PMPCFG0 && csr < CSR_PMPCFG0 + PMP_ENTRIES / 4) ||
           (csr >= CSR_PMPADDR0 && csr < CSR_PMPADDR0 + PMP_ENTRIES);
}

bool pmp_read_csr(hart *h, unsigned csr, uint64_t *value)
{
    if (!pmp_csr_exists(h, csr))
        return false;
    if (csr >= CSR_PMPADDR0) {
        *value = h->pmpaddr[csr - CSR_PMPADDR0];
        return true;
    }
    unsigned first = (csr - CSR_PMPCFG0) * 4, n = h->s.xlen / 8;
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)h->pmpcfg[first + i] << (8 * i);
    *value = v;
    return true;
}

bool pmp_write_csr(hart *h, unsigned csr, uint64_t value)
{
    if (!pmp_csr_exists(h, csr))
        return false;
    if (csr >= CSR_PMPADDR0) {
        unsigned i = csr - CSR_PMPADDR0;
        if (!addr_locked(h, i))
            h->pmpaddr[i] = value & pmpaddr_mask(h);
    } else {
        unsigned first = (csr - CSR_PMPCFG0) * 4, n = h->s.xlen / 8;
        for (unsigned i = 0; i < n; i++) {
            uint8_t b = (uint8_t)(value >> (8 * i));
            /* Locked until reset. Every other value is kept as written, the reserved
             * R=0 W=1 too, as QEMU 7.2 does. */
            if (!(h->pmpcfg[first + i] & PMP_L))
                h->pmpcfg[first + i] = b;
        }
    }
    /* The entries changed: no cached translation may keep the old permissions. */
    uc_ctl_flush_tlb(h->uc);
    return true;
}

bool pmp_has_active_rule(const hart *h)
{
    for (unsigned i = 0; i < PMP_ENTRIES; i++)
        if (pmp_a(h->pmpcfg[i]))
            return true;
    return false;
}

/* Entry i's address range [*lo, *hi] (physical, 64-bit arithmetic), or false when it
 * is off or empty. */
static bool entry_range(const hart *h, unsigned i, uint64_t *lo, uint64_t *hi)
{
    uint64_t a = h->pmpaddr[i];
    switch (pmp_a(h->pmpcfg[i])) {
    case PMP_A_TOR: {
        uint64_t prev = i == 0 ? 0 : h->pmpaddr[i - 1];
        if (a <= prev)
            return false;   /* pmpaddr[i-1] >= pmpaddr[i]: matches nothing */
        *lo = prev << 2;
        *hi = (a << 2) - 1;
        return true;
    }
    case PMP_A_NA4:
        *lo = a << 2;
        *hi = *lo + 3;
        return true;
    case PMP_A_NAPOT: {
        /* aaaa...a0111 with t trailing ones: 2^(t+3) bytes. */
        unsigned t = (unsigned)__builtin_ctzll(~a);
        uint64_t size_m1 = t + 3 >= 64 ? UINT64_MAX : (1ull << (t + 3)) - 1;
        *lo = (a << 2) & ~size_m1;
        *hi = *lo + size_m1;
        return true;
    }
    default:
        return false;
    }
}

/* The permissions an entry grants an access at `mode`: all to M unless locked. */
static unsigned entry_privs(uint8_t cfg, unsigned mode)
{
    return mode == PRV_M && !(cfg & PMP_L) ? PMP_RWX : cfg & PMP_RWX;
}

static unsigned default_privs(const hart *h, unsigned mode)
{
    /* No entry matched: M may access, S and U may not (16 entries are implemented),
     * unless no entry is active at all and the hart follows QEMU before 7.0, where
     * that let S and U access everything (`pmp_open_when_empty`: privlab's
     * --pmp-before-qemu7, for firmware of that time such as RustSBI 0.1.1). */
    if (mode == PRV_M || (h->s.pmp_open_when_empty && !pmp_has_active_rule(h)))
        return PMP_RWX;
    return 0;
}

/* Spec 3.7.1: the lowest-numbered entry matching any byte of [addr, addr+size) decides;
 * it must match all of them. */
bool pmp_allows(const hart *h, uint64_t addr, uint64_t size, unsigned privs, unsigned mode)
{
    uint64_t last = addr + (size ? size : 1) - 1;
    for (unsigned i = 0; i < PMP_ENTRIES; i++) {
        uint64_t lo, hi;
        if (!entry_range(h, i, &lo, &hi) || last < lo || addr > hi)
            continue;
        if (addr < lo || last > hi)
            return false;   /* partial match */
        return (privs & ~entry_privs(h->pmpcfg[i], mode)) == 0;
    }
    return (privs & ~default_privs(h, mode)) == 0;
}

/* The permissions PMP gives the whole page at `page` for `mode`, or false when entries
 * divide it (then every access must be checked on its own). */
static bool page_privs(const hart *h, uint64_t page, unsigned mode, unsigned *privs)
{
    uint64_t last = page + PAGE - 1;
    for (unsigned i = 0; i < PMP_ENTRIES; i++) {
        uint64_t lo, hi;
        if (!entry_range(h, i, &lo, &hi) || last < lo || page > hi)
            continue;
        if (page < lo || last > hi)
            return false;
        *privs = entry_privs(h->pmpcfg[i], mode);
        return true;
    }
    *privs = default_privs(h, mode);
    return true;
}

bool pmp_page_privs(const hart *h, uint64_t page, unsigned mode, unsigned *privs)
{
    return page_privs(h, page & ~(PAGE - 1), mode, privs);
}

/* ---- replacing Unicorn's functions ---- */

/* Unicorn's own, called for the TLB fill after ours adjusted it. */
extern void tlb_set_page_riscv32(void *cpu, uint32_t vaddr, uint64_t paddr, int prot,
                                 int mmu_idx, uint32_t size);
extern void tlb_set_page_riscv64(void *cpu, uint64_t vaddr, uint64_t paddr, int prot,
                                 int mmu_idx, uint64_t size);

/* The last check that passed, for the TLB fill that follows it in
 * riscv_cpu_tlb_fill (page-table walks check their PTE reads first, the data access
 * last). */
static _Thread_local struct {
    hart *h;
    uint64_t page;
    unsigned mode, privs;
    void *caller;
} last_check;

/* Where in libunicorn the check of an access itself is called from (one place per
 * XLEN: riscv_cpu_tlb_fill), as opposed to the checks of the page-table entries a walk
 * reads on the way (get_physical_address), which look alike (an S-mode read of
 * XLEN/8 bytes). Learned from the first TLB fill, which always follows the check of
 * the access. Data triggers and watchpoints match accesses, not walks: QEMU 7.2's
 * do not fire on page-table reads either. */
static void *access_caller[2];

/* While the host translates or reads through the current address space for itself
 * (harness/machine/memory.py: the debugger, the inspectors), PMP does not apply: the
 * question is what the page tables say. Such a fill must be a whole page: Unicorn's
 * uc_vmem_translate reads the address back from the TLB entry it just filled, and an
 * entry smaller than a page is marked invalid there (the translation then fails with
 * UC_ERR_READ_PROT). So the fill is kept for the probe, and the TLB is flushed when the
 * probe ends, so that the guest's next access to the page checks PMP again. */
static _Thread_local int probing;
static _Thread_local hart *probe_filled;   /* a probe filled a TLB entry on this hart */

bool pmp_probing(void)
{
    return probing > 0;
}

/* vtlb.c filled a TLB entry for a probe: flushed when the probe ends. */
void pmp_probe_filled(hart *h)
{
    probe_filled = h;
}

void privlab_probe(int on)
{
    probing += on ? 1 : -1;
    if (probing == 0 && probe_filled) {
        uc_ctl_flush_tlb(probe_filled->uc);
        probe_filled = NULL;
    }
}

/* Is there RAM or a device at physical address pa? Asked only for stores outside RAM
 * (device pages, or nothing), at a TLB fill. */
static bool backed(hart *h, uint64_t pa)
{
    if (pa >= h->ram_base && pa - h->ram_base < h->ram_size)
        return true;
    uc_mem_region *regions;
    uint32_t n;
    if (uc_mem_regions(h->uc, &regions, &n) != UC_ERR_OK)
        return true;   /* cannot tell: leave it to Unicorn's own path */
    bool found = false;
    for (uint32_t i = 0; i < n && !found; i++)
        found = regions[i].begin <= pa && pa <= regions[i].end;
    uc_free(regions);
    return found;
}

/* A store to a physical address with nothing behind it is a store access fault at the
 * store, as on QEMU 7.2 (its unassigned-memory access fails the transaction). Refused
 * here, before the fill, because Unicorn would only note it and stop at the next check,
 * and exitcheck.c leaves out the checks after stores. The page is noted as unmapped
 * memory's is (hooks.c on_unmapped) for the tval of a store that crosses into it. */
static bool store_backed(hart *h, uint64_t addr)
{
    if (backed(h, addr))
        return true;
    h->s.unmapped_type = UC_MEM_WRITE_UNMAPPED;
    h->s.unmapped_addr = addr;
    return false;
}

bool pmp_store_backed(hart *h, uint64_t pa)
{
    return store_backed(h, pa);
}

/* Is the access checked a page-table walk's read of an Sv39/Sv48 entry (an S-mode read
 * of 8 bytes from elsewhere than the access's own check) whose reserved bits 63:54 are
 * set? QEMU 7.2's walk fails there, at any level, before it looks at V: a page fault.
 * Unicorn's QEMU 5.0 walk ignores them (docs/unicorn.md#pte-reserved-bits). The entry
 * is read here, before the walk reads it; a read PMP forbids stays an access fault. */
static bool reserved_pte(hart *h, unsigned xlen, uint64_t addr, uint64_t size,
                         unsigned privs, uint64_t mode, void *caller)
{
    void *known = access_caller[xlen == 64];
    if (xlen != 64 || size != 8 || privs != PMP_R || mode != PRV_S || !known || known == caller)
        return false;
    const uint8_t *p = ram_ptr(h, addr, 8);
    uint64_t pte;
    if (!p)
        return false;
    memcpy(&pte, p, 8);   /* little-endian host and guest */
    return (pte >> (PTE_PPN_SHIFT + SV39_PPN_BITS)) != 0 &&
        (probing > 0 || pmp_allows(h, addr, size, privs, (unsigned)mode));
}

static bool check(void *env, unsigned xlen, uint64_t addr, uint64_t size, unsigned privs,
                  uint64_t mode, void *caller)
{
    hart *h = hart_of_env(env, xlen);
    if (!h)
        return true;   /* an engine no hart drives: nothing to enforce */
    if (!h->env)
        h->env = env;   /* tlbbank.c finds the TLB from it */
    /* Set only by the refusal just before the exception it is for: a walk that was
     * refused but raised nothing (a non-faulting probe) leaves no mark for a later one. */
    h->pte_reserved = false;
    if (reserved_pte(h, xlen, addr, size, privs, mode, caller)) {
        h->pte_reserved = probing == 0;   /* a host probe just finds no translation */
        last_check.h = NULL;
        return false;
    }
    if (probing > 0) {
        last_check.h = h;
        last_check.page = addr & ~(PAGE - 1);
        last_check.privs = 0;   /* a probe: fill_args keeps no entry */
        last_check.caller = NULL;
        return true;
    }
    /* A probe (size 0: a translation asked for by the host or the core) is no access,
     * nor is a walk's read of a page-table entry. */
    void *known = access_caller[xlen == 64];
    bool access = size && privs != PMP_X && (!known || known == caller);
    unsigned whole;
    bool ok;
    if (access && (h->trig_skip & privs)) {
        /* The access hooks.c decided and makes again (data_trigger_fault): an AMO's or
         * SC's load and store each once. */
        h->trig_skip &= ~privs;
        ok = true;
    } else if (access && mode != PRV_M && !(addr & (PAGE - 1)) &&
               !page_privs(h, addr, (unsigned)mode, &whole)) {
        /* Probably only the page, and PMP entries divide it: refused for now, decided
         * by hooks.c from the instruction's own address
         * (docs/unicorn.md#pmp-check-gets-the-page-under-translation). */
        h->pmp_undecided = true;
        h->trig_hit = true;
        h->trig_page = addr;
        h->trig_privs = privs;
        h->trig_mode = (unsigned)mode;
        ok = false;
    } else {
        ok = pmp_allows(h, addr, size, privs, (unsigned)mode) &&
            (!access || !(privs & PMP_W) || store_backed(h, addr));
        /* A load/store trigger fires before the access (trigger.c). */
        if (ok && access && trigger_data_hit(h, addr, privs))
            ok = false;
    }
    /* A device register window refuses what QEMU's region does (devaccess.c): an
     * access fault. A walk's page-table read is only noted (devaccess_in_last). */
    if (ok && size && !devaccess_check(addr, size) && access)
        ok = false;
    last_check.caller = caller;
    last_check.h = ok ? h : NULL;
    last_check.page = addr & ~(PAGE - 1);
    last_check.mode = (unsigned)mode;
    last_check.privs = privs;
    return ok;
}

static bool check32(void *env, uint32_t addr, uint32_t size, int privs, uint32_t mode)
{
    return check(env, 32, addr, size, (unsigned)privs, mode, __builtin_return_address(0));
}

static bool check64(void *env, uint64_t addr, uint64_t size, int privs, uint64_t mode)
{
    return check(env, 64, addr, size, (unsigned)privs, mode, __builtin_return_address(0));
}

static uint64_t noexec_fills;   /* loads' and stores' fills that left execute out */

/* Is an access at `mode` untranslated (M, or satp bare)? Then every TLB fill grants
 * read, write and execute, and Unicorn never lets a store to an entry that allows
 * execution leave its slow path (its notdirty_write marks only entries without
 * addr_code dirty): a kernel that fills memory before it turns paging on (xv6's kinit
 * writes all 128 MB) stayed there for every store. So a load's or store's fill there
 * leaves execute out: a fetch from the page misses the entry and fills its own, as a
 * fetch from a page only read so far does. Without page tables there are no A/D bits
 * a second fill could set, so nothing the guest sees changes. Unknown satp (it is
 * being written): translated, the entry is left as it is. */
static bool untranslated(hart *h, unsigned mode)
{
    if (mode == PRV_M)
        return true;
    if (h->satp_stale)
        return false;
    return h->s.xlen == 64 ? (h->satp >> SATP64_MODE_SHIFT) == 0
                           : ((h->satp >> SATP32_MODE_SHIFT) & 1) == 0;
}

/* QEMU's PAGE_READ/WRITE/EXEC are PMP's R/W/X bits. */
static void fill_args(uint64_t paddr, int *prot, uint64_t *size)
{
    unsigned privs;
    hart *h = last_check.h;
    if (!h || last_check.page != (paddr & ~(PAGE - 1)))
        return;
    last_check.h = NULL;
    if (!access_caller[h->s.xlen == 64] && last_check.caller)
        access_caller[h->s.xlen == 64] = last_check.caller;
    if (last_check.privs == 0) {
        probe_filled = h;   /* a host probe: flushed when it ends (privlab_probe) */
        return;
    }
    if (devaccess_page(last_check.page))
        *size = 1;   /* a device page: every access comes to the check (devaccess.c) */
    if (trigger_watches_page(h, last_check.page)) {
        /* A load/store trigger or watchpoint watches the page: check every access. A
         * fetch's entry serves fetches only, or the page's loads and stores would hit
         * it unchecked (code and data sharing a page, as in M without paging). */
        if (last_check.privs == PMP_X)
            *prot &= ~(int)(PMP_R | PMP_W);
        else
            *size = 1;
    }
    if (page_privs(h, last_check.page, last_check.mode, &privs))
        *prot &= (int)privs | ~(int)PMP_RWX;
    else if (last_check.privs != PMP_X)
        *size = 1;   /* smaller than a page: QEMU re-checks every access */
    else
        *prot &= ~(int)(PMP_R | PMP_W);
    /* A fetch from a divided page keeps the page's entry, as QEMU 7.2 does: the first
     * fetch's check decides for the instructions on the page (docs/machine.md); its
     * loads and stores still come back to the check, each one. */

    /* A load or store without translation: an entry without execute (untranslated). */
    if (last_check.privs != PMP_X && untranslated(h, last_check.mode) && (*prot & (int)PMP_X)) {
        *prot &= ~(int)PMP_X;
        noexec_fills++;
    }
}

/* vtlb.c's fill leaves execute out of the same entries (vtlb_fill): counted here too,
 * so that one count says the path is taken in either mode. */
void pmp_note_noexec_fill(void)
{
    noexec_fills++;
}

/* Loads' and stores' fills without execute (tests: the path is taken). */
uint64_t pmp_noexec_fills(void)
{
    return noexec_fills;
}

static void fill32(void *cpu, uint32_t vaddr, uint64_t paddr, int prot, int mmu_idx,
                   uint32_t size)
{
    uint64_t sz = size;
    fill_args(paddr, &prot, &sz);
    tlbflush_note_fill(cpu, vaddr, mmu_idx);
    tlb_set_page_riscv32(cpu, vaddr, paddr, prot, mmu_idx, (uint32_t)sz);
}

static void fill64(void *cpu, uint64_t vaddr, uint64_t paddr, int prot, int mmu_idx,
                   uint64_t size)
{
    hart *h = last_check.h;
    if (h && !h->cpu && h->s.xlen == 64 && last_check.page == (paddr & ~(PAGE - 1)))
        learn_cpu(h, cpu);   /* the CPU whose check came just before */
    fill_args(paddr, &prot, &size);
    tlbflush_note_fill(cpu, vaddr, mmu_idx);
    if ((h = hart_of_cpu(cpu)) != NULL)
        tlbbank_note_fill(h, vaddr, prot, mmu_idx);
    tlb_set_page_riscv64(cpu, vaddr, paddr, prot, mmu_idx, size);
}

/* Once per process, from the first hart_new (hartapi.c install_once). False when
 * libunicorn is not laid out as expected (then no hart may run: PMP would be
 * Unicorn's). */
bool pmp_install(void)
{
    bool ok = plt_patch("pmp_hart_has_privs_riscv32", (void *)check32) &&
        plt_patch("pmp_hart_has_privs_riscv64", (void *)check64) &&
        plt_patch("tlb_set_page_riscv32", (void *)fill32) &&
        plt_patch("tlb_set_page_riscv64", (void *)fill64);
    /* Full flushes through tlbflush.c, which needs the fills above to be ours. */
    if (ok && !portable_mode()) {
        plt_patch("tlb_flush_riscv32", (void *)tlbflush_full32);
        plt_patch("tlb_flush_riscv64", (void *)tlbflush_full64);
    }
    return ok;
}
