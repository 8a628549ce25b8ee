/*
 * fetch.c: the physical address of code, found without Unicorn's help.
 *
 * Decoded blocks (icount.c) are keyed by physical address, like QEMU's own translated
 * blocks: a kernel switches satp on every trap, and keying by virtual address would
 * mean re-decoding everything after each switch, while one physical block may also be
 * reached through several virtual addresses (a trampoline page).
 *
 * The walk follows the privileged spec (4.3.2 Sv32, 4.4 Sv39, 4.5 Sv48) far enough to
 * find the physical page: permissions need no checking, because Unicorn already
 * fetched the block. It reads page tables straight from host RAM; a page table outside
 * RAM makes it fall back to Unicorn's own walker. Results sit in a small TLB keyed by
 * (virtual page, satp), emptied by sfence.vma and by any host-side change.
 *
 * pt_walk is the core's one page-table walker: tlbbank.c records a fill's walk with it
 * and vtlb.c's TLB fill walks with PTW_CHECKED (PMP on each entry read, reserved bits,
 * canonical addresses) and checks the leaf's permissions itself.
 */
#include <string.h>

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

/* The scheme `satp` selects (spec 4.3 Sv32; 4.4-4.6 Sv39, Sv48, Sv57, all three of
 * which QEMU 7.2 accepts on RV64): false when it translates nothing (bare). Sv48 and
 * Sv57 are Sv39 with one and two more levels above it, the same entries. */
bool pt_scheme(bool rv64, uint64_t satp, struct pt_scheme *s)
{
    if (!rv64) {
        if (!((satp >> SATP32_MODE_SHIFT) & 1))
            return false;
        *s = (struct pt_scheme){(satp & ((1ull << SATP32_PPN_BITS) - 1)) << PAGE_SHIFT,
                                SV32_LEVELS, SV32_PTE_SIZE, SV32_VPN_BITS};
        return true;
    }
    uint64_t mode = satp >> SATP64_MODE_SHIFT;
    unsigned levels = mode == SV39_MODE ? SV39_LEVELS : mode == SV48_MODE ? SV48_LEVELS :
                      mode == SV57_MODE ? SV57_LEVELS : 0;
    if (!levels)
        return false;
    *s = (struct pt_scheme){(satp & ((1ull << SATP64_PPN_BITS) - 1)) << PAGE_SHIFT,
                            levels, SV39_PTE_SIZE, SV39_VPN_BITS};
    return true;
}

/* Walk `va` to its leaf, reading page tables straight from host RAM and telling `seen`
 * (if any) where each entry read lies and what it holds. Without PTW_CHECKED only what
 * finding the page needs is checked (V, W without R): fetch.c's caller knows Unicorn
 * already fetched the code. With it, as a TLB fill must (vtlb.c): bits above the
 * scheme's top virtual bit must equal it, each entry's read is an S-mode access PMP
 * checks (spec 3.7.1), and an Sv39/Sv48 entry with reserved bits 63:54 set faults
 * (QEMU 7.2). The leaf's permissions are the caller's to check. */
int pt_walk(hart *h, uint64_t va, const struct pt_scheme *s, unsigned flags, pte_seen seen,
            void *arg, struct pt_leaf *leaf)
{
    bool checked = flags & PTW_CHECKED, rv64 = s->pte_size == SV39_PTE_SIZE;
    if (checked && rv64) {
        int64_t hi = (int64_t)va >> (PAGE_SHIFT + s->levels * s->vpn_bits - 1);
        if (hi != 0 && hi != -1)
            return PTW_PAGE_FAULT;
    }
    uint64_t table = s->root;
    for (int level = (int)s->levels - 1; level >= 0; level--) {
        unsigned shift = PAGE_SHIFT + (unsigned)level * s->vpn_bits;
        uint64_t at = table + ((va >> shift) & ((1ull << s->vpn_bits) - 1)) * s->pte_size;
        if (checked && !pmp_allows(h, at, s->pte_size, PMP_R, PRV_S))
            return PTW_ACCESS_FAULT;
        uint8_t *p = (uint8_t *)ram_ptr(h, at, s->pte_size);
        if (!p)
            return PTW_NOT_IN_RAM;
        uint64_t pte = 0;
        memcpy(&pte, p, s->pte_size);   /* little-endian host and guest */
        if (seen)
            seen(arg, p, pte);
        uint64_t ppn = rv64 ? (pte >> PTE_PPN_SHIFT) & ((1ull << SV39_PPN_BITS) - 1)
                            : pte >> PTE_PPN_SHIFT;
        if (checked && rv64 && pte >> (PTE_PPN_SHIFT + SV39_PPN_BITS))
            return PTW_PAGE_FAULT;
        if (!(pte & PTE_V) || ((pte & PTE_W) && !(pte & PTE_R)))
            return PTW_PAGE_FAULT;
        if (!(pte & (PTE_R | PTE_X))) {   /* a pointer to the next level */
            table = ppn << PAGE_SHIFT;
            continue;
        }
        uint64_t low = (1ull << shift) - 1;   /* a superpage's offset bits */
        *leaf = (struct pt_leaf){pte, ppn, ((ppn << PAGE_SHIFT) & ~low) | (va & low), p,
                                 (unsigned)level, ((ppn << PAGE_SHIFT) & low) != 0};
        return PTW_LEAF;
    }
    return PTW_PAGE_FAULT;
}

/* Walk `va` through an RV64 satp (Sv39, Sv48 or Sv57), as tlbbank.c records a fill's
 * walk: false if the mode is none of them or the walk ends without a leaf in RAM. */
bool walk_rv64(hart *h, uint64_t va, uint64_t satp, pte_seen seen, void *arg)
{
    struct pt_scheme s;
    struct pt_leaf leaf;
    return pt_scheme(true, satp, &s) && pt_walk(h, va, &s, 0, seen, arg, &leaf) == PTW_LEAF;
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
    struct pt_scheme s;
    if (priv == PRV_M || !pt_scheme(h->s.xlen == 64, satp, &s)) {
        *paddr = vaddr & h->xmask;
        return true;
    }
    uint64_t vpage = vaddr >> PAGE_SHIFT;
    struct stlb_entry *e = &h->stlb[(vpage ^ (vpage >> 8)) & (STLB_SLOTS - 1)];
    if (e->gen == h->stlb_gen && e->vpage == vpage && e->ctx == satp) {
        *paddr = (e->ppage << PAGE_SHIFT) | (vaddr & ((1u << PAGE_SHIFT) - 1));
        return true;
    }
    struct pt_leaf leaf;
    uint64_t pa;
    if (pt_walk(h, vaddr, &s, 0, NULL, NULL, &leaf) == PTW_LEAF)
        pa = leaf.pa;
    else if (uc_vmem_translate(h->uc, vaddr, UC_PROT_EXEC, &pa) != UC_ERR_OK)
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
