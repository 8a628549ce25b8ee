/*
 * fetch.c: the physical address of code, found without Unicorn's help.
 *
 * Decoded blocks (icount.c) are keyed by physical address, like QEMU's own translated
 * blocks: a kernel switches satp on every trap, and keying by virtual address would
 * mean re-decoding everything after each switch, while one physical block may also be
 * reached through several virtual addresses (a trampoline page).
 *
 * The walk follows the privileged spec (4.3.2 Sv32, 4.4 Sv39) far enough to find the
 * physical page: permissions need no checking, because Unicorn already fetched the
 * block. It reads page tables straight from host RAM; a page table outside RAM makes
 * it fall back to Unicorn's own walker. Results sit in a small TLB keyed by (virtual
 * page, satp), emptied by sfence.vma and by any host-side change.
 */
#include "hart.h"

/* PAGE_SHIFT, PTE_* and the schemes' SV39_MODE/SV32_MODE come from riscv_gen.h
 * (inside privlab_gen.h), generated from privlab/abi/paging.py. */

const uint8_t *ram_ptr(hart *h, uint64_t paddr, uint64_t len)
{
    if (!h->ram || paddr < h->ram_base || paddr - h->ram_base + len > h->ram_size)
        return NULL;
    return h->ram + (paddr - h->ram_base);
}

void stlb_flush(hart *h)
{
    h->xlat_epoch++;
    if (++h->stlb_gen == 0) {
        for (size_t i = 0; i < STLB_SLOTS; i++)
            h->stlb[i].gen = 0;
        h->stlb_gen = 1;
    }
}

static uint64_t read_pte(hart *h, uint64_t addr, unsigned size, bool *ok)
{
    const uint8_t *p = ram_ptr(h, addr, size);
    uint64_t v = 0;
    *ok = p != NULL;
    for (unsigned i = 0; p && i < size; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Walk the page table rooted at `root` (a physical address), telling `seen` (if
 * any) where each entry read lies in host RAM and what it holds. */
static bool walk(hart *h, uint64_t va, uint64_t root, unsigned levels, unsigned pte_size,
                 unsigned vpn_bits, uint64_t *pa, pte_seen seen, void *arg)
{
    uint64_t table = root;
    for (int level = (int)levels - 1; level >= 0; level--) {
        unsigned shift = PAGE_SHIFT + (unsigned)level * vpn_bits;
        uint64_t vpn = (va >> shift) & ((1ull << vpn_bits) - 1);
        bool ok;
        uint64_t pte = read_pte(h, table + vpn * pte_size, pte_size, &ok);
        if (ok && seen)
            seen(arg, ram_ptr(h, table + vpn * pte_size, pte_size), pte);
        if (!ok || !(pte & PTE_V) || ((pte & PTE_W) && !(pte & PTE_R)))
            return false;
        uint64_t ppn = pte_size == SV39_PTE_SIZE
            ? (pte >> PTE_PPN_SHIFT) & ((1ull << SV39_PPN_BITS) - 1) : pte >> PTE_PPN_SHIFT;
        if (pte & (PTE_R | PTE_X)) {   /* a leaf, maybe a superpage */
            uint64_t low = (1ull << shift) - 1;
            *pa = ((ppn << PAGE_SHIFT) & ~low) | (va & low);
            return true;
        }
        table = ppn << PAGE_SHIFT;
    }
    return false;
}

/* Walk `va` through an RV64 satp (Sv39 or Sv48), as tlbbank.c records a fill's walk:
 * false if the mode is neither or the walk ends without a leaf in RAM. */
bool walk_rv64(hart *h, uint64_t va, uint64_t satp, pte_seen seen, void *arg)
{
    uint64_t mode = satp >> SATP64_MODE_SHIFT, pa;
    if (mode != SV39_MODE && mode != SV39_MODE + 1)   /* Sv48 is Sv39's mode + 1 */
        return false;
    uint64_t root = (satp & ((1ull << SATP64_PPN_BITS) - 1)) << PAGE_SHIFT;
    return walk(h, va, root, mode == SV39_MODE ? SV39_LEVELS : SV39_LEVELS + 1, SV39_PTE_SIZE,
                SV39_VPN_BITS, &pa, seen, arg);
}

uint64_t current_satp(hart *h)
{
    if (h->satp_stale) {
        h->satp = csr_raw(h, UC_RISCV_REG_SATP);
        h->satp_stale = false;
        h->xlat_epoch++;
    }
    return h->satp;
}

/* The physical address of `vaddr` for an access made at privilege `priv`. */
static bool translate(hart *h, uint64_t vaddr, unsigned priv, uint64_t *paddr)
{
    uint64_t satp = current_satp(h);
    bool rv64 = h->s.xlen == 64;
    bool bare = priv == PRV_M ||
        (rv64 ? (satp >> SATP64_MODE_SHIFT) != SV39_MODE : (satp >> SATP32_MODE_SHIFT) != SV32_MODE);
    if (bare) {
        *paddr = vaddr & h->xmask;
        return true;
    }
    uint64_t vpage = vaddr >> PAGE_SHIFT;
    struct stlb_entry *e = &h->stlb[(vpage ^ (vpage >> 8)) & (STLB_SLOTS - 1)];
    if (e->gen == h->stlb_gen && e->vpage == vpage && e->ctx == satp) {
        *paddr = (e->ppage << PAGE_SHIFT) | (vaddr & ((1u << PAGE_SHIFT) - 1));
        return true;
    }
    uint64_t pa;
    bool found = rv64
        ? walk(h, vaddr, (satp & ((1ull << SATP64_PPN_BITS) - 1)) << PAGE_SHIFT, SV39_LEVELS,
               SV39_PTE_SIZE, SV39_VPN_BITS, &pa, NULL, NULL)
        : walk(h, vaddr, (satp & ((1ull << SATP32_PPN_BITS) - 1)) << PAGE_SHIFT, SV32_LEVELS,
               SV32_PTE_SIZE, SV32_VPN_BITS, &pa, NULL, NULL);
    if (!found && uc_vmem_translate(h->uc, vaddr, UC_PROT_EXEC, &pa) != UC_ERR_OK)
        return false;
    *e = (struct stlb_entry){vpage, satp, pa >> PAGE_SHIFT, h->stlb_gen};
    *paddr = pa;
    return true;
}

/* The physical address an instruction fetch from `vaddr` uses now. */
bool fetch_paddr(hart *h, uint64_t vaddr, uint64_t *paddr)
{
    return translate(h, vaddr, h->priv, paddr);
}

/* The physical address a load or store to `vaddr` uses now: in M with mstatus.MPRV
 * set, translated as the privilege in MPP (spec 3.1.6.3). */
bool data_paddr(hart *h, uint64_t vaddr, uint64_t *paddr)
{
    unsigned priv = h->priv;
    if (priv == PRV_M) {
        uint64_t mstatus = csr_raw(h, UC_RISCV_REG_MSTATUS);
        if (mstatus & MSTATUS_MPRV)
            priv = (unsigned)((mstatus & MSTATUS_MPP) >> __builtin_ctzll(MSTATUS_MPP));
    }
    return translate(h, vaddr, priv, paddr);
}
