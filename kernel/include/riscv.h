// riscv.h: CSR accessors, named as in the RISC-V privileged specification v1.12.
// Shared by the M-mode firmware and the S-mode kernel.
//
// Convention: r_<csr>() reads, w_<csr>(x) writes; each CSR's accessors say which of
// its fields we use. The numbers themselves (MSTATUS_MPP, SSTATUS_SPP, IRQ_S_TIMER,
// MIP_STIP, CAUSE_USER_ECALL, PTE_V, SATP_MODE, PT_LEVELS, ...) come from riscv_gen.h,
// generated per architecture from privlab/abi (the one definition the harness, the
// inspectors and the native core read too). It holds plain integers, so assembler
// includes it as well; everything here is XLEN-clean: registers are uintptr_t.
#ifndef RISCV_H
#define RISCV_H

#include "riscv_gen.h"

#define XLEN __riscv_xlen
#define BIT(n) ((uintptr_t)1 << (n))

#ifndef __ASSEMBLER__

#include <stdint.h>

#define CSR_READ(name) ({ uintptr_t _v; asm volatile("csrr %0, " #name : "=r"(_v)); _v; })
#define CSR_WRITE(name, v) asm volatile("csrw " #name ", %0" : : "r"((uintptr_t)(v)))
#define CSR_SET(name, bits) asm volatile("csrs " #name ", %0" : : "r"((uintptr_t)(bits)))
#define CSR_CLEAR(name, bits) asm volatile("csrc " #name ", %0" : : "r"((uintptr_t)(bits)))

// ---- Machine level (firmware only) -------------------------------------------------

// mstatus: MPP is the privilege mret returns to; MPIE/MIE the interrupt enables.
static inline uintptr_t r_mstatus(void) { return CSR_READ(mstatus); }
static inline void w_mstatus(uintptr_t x) { CSR_WRITE(mstatus, x); }

static inline uintptr_t r_mhartid(void) { return CSR_READ(mhartid); }
static inline uintptr_t r_mvendorid(void) { return CSR_READ(mvendorid); }
static inline uintptr_t r_marchid(void) { return CSR_READ(marchid); }
static inline uintptr_t r_mimpid(void) { return CSR_READ(mimpid); }
static inline uintptr_t r_mepc(void) { return CSR_READ(mepc); }
static inline void w_mepc(uintptr_t x) { CSR_WRITE(mepc, x); }
static inline uintptr_t r_mcause(void) { return CSR_READ(mcause); }
static inline uintptr_t r_mtval(void) { return CSR_READ(mtval); }
static inline void w_mtvec(uintptr_t x) { CSR_WRITE(mtvec, x); }
static inline void w_mscratch(uintptr_t x) { CSR_WRITE(mscratch, x); }

// medeleg: one bit per exception code (the CAUSE_* numbers) handed to S.
static inline void w_medeleg(uintptr_t x) { CSR_WRITE(medeleg, x); }
// mideleg: one bit per interrupt code (the IRQ_* numbers) handed to S.
static inline void w_mideleg(uintptr_t x) { CSR_WRITE(mideleg, x); }

// mie / mip: interrupt enable and pending, bit n = interrupt code n.
static inline void mie_set(uintptr_t bits) { CSR_SET(mie, bits); }
static inline void mie_clear(uintptr_t bits) { CSR_CLEAR(mie, bits); }
static inline void mip_set(uintptr_t bits) { CSR_SET(mip, bits); }
static inline void mip_clear(uintptr_t bits) { CSR_CLEAR(mip, bits); }

// mcounteren: which counters the next lower level may read (CY, TM, IR).
static inline void w_mcounteren(uintptr_t x) { CSR_WRITE(mcounteren, x); }

// PMP: entry 0 as Top-Of-Range over the whole address space gives S and U access to
// everything (M-mode is not checked by an unlocked entry).
static inline void w_pmpaddr0(uintptr_t x) { CSR_WRITE(pmpaddr0, x); }
static inline void w_pmpcfg0(uintptr_t x) { CSR_WRITE(pmpcfg0, x); }

// ---- Supervisor level ----------------------------------------------------------------

// sstatus: SPP is the privilege sret returns to (0 = U), SPIE becomes SIE on sret,
// SIE enables interrupts while in S, SUM lets S touch U pages (we never set it).
static inline uintptr_t r_sstatus(void) { return CSR_READ(sstatus); }
static inline void w_sstatus(uintptr_t x) { CSR_WRITE(sstatus, x); }
static inline void intr_on(void) { CSR_SET(sstatus, SSTATUS_SIE); }
static inline void intr_off(void) { CSR_CLEAR(sstatus, SSTATUS_SIE); }
static inline int intr_get(void) { return (r_sstatus() & SSTATUS_SIE) != 0; }

// Wait for an interrupt. Returns when one is pending, even if SIE masks it.
static inline void wfi(void) { asm volatile("wfi"); }

// sie / sip: S-level interrupt enable and pending.
static inline uintptr_t r_sie(void) { return CSR_READ(sie); }
static inline void w_sie(uintptr_t x) { CSR_WRITE(sie, x); }
static inline uintptr_t r_sip(void) { return CSR_READ(sip); }
static inline void sip_clear(uintptr_t bits) { CSR_CLEAR(sip, bits); }

static inline uintptr_t r_sepc(void) { return CSR_READ(sepc); }
static inline void w_sepc(uintptr_t x) { CSR_WRITE(sepc, x); }
static inline uintptr_t r_scause(void) { return CSR_READ(scause); }
static inline uintptr_t r_stval(void) { return CSR_READ(stval); }
static inline uintptr_t r_stvec(void) { return CSR_READ(stvec); }
static inline void w_stvec(uintptr_t x) { CSR_WRITE(stvec, x); }
static inline void w_sscratch(uintptr_t x) { CSR_WRITE(sscratch, x); }

// xcause: the top bit says interrupt; the rest is the code.
#define CAUSE_CODE(c)            ((c) & ~CAUSE_INTERRUPT)

// satp: MODE selects the translation scheme, PPN the root page table's page number.
#define MAKE_SATP(pagetable) (SATP_MODE | ((uintptr_t)(pagetable) >> PAGE_SHIFT))
static inline uintptr_t r_satp(void) { return CSR_READ(satp); }
static inline void w_satp(uintptr_t x) { CSR_WRITE(satp, x); }

// Page-table entries (Sv39 on RV64, Sv32 on RV32): PPN above bit 10, flags below.
#define PTE_FLAGS(pte) ((pte) & ((1 << PTE_PPN_SHIFT) - 1))
#define PTE_LEAF(pte)  ((pte) & (PTE_R | PTE_W | PTE_X))
// W without R is reserved (spec 4.3.1): the hart raises a page fault on any access
// through such a leaf, load, store or fetch alike.
#define PTE_W_WITHOUT_R(pte) (((pte) & (PTE_R | PTE_W)) == PTE_W)
#define PA2PTE(pa)     ((((uintptr_t)(pa)) >> PAGE_SHIFT) << PTE_PPN_SHIFT)
#define PTE2PA(pte)    (((pte) >> PTE_PPN_SHIFT) << PAGE_SHIFT)
#define PT_ENTRIES     (1 << PT_INDEX_BITS)
#define PXSHIFT(level) (PAGE_SHIFT + PT_INDEX_BITS * (level))
#define PX(level, va)  ((((uintptr_t)(va)) >> PXSHIFT(level)) & (PT_ENTRIES - 1))

// Flush the whole TLB: needed after any change to a live page table.
static inline void sfence_vma(void) { asm volatile("sfence.vma zero, zero"); }

// ---- Unprivileged ---------------------------------------------------------------------

// time: the platform timer (mtime), readable in S because the firmware set mcounteren.TM.
static inline uint64_t r_time(void) {
#if XLEN == 64
  return CSR_READ(time);
#else
  uint32_t hi, lo;
  do {  // re-read if the low half wrapped between the two reads
    hi = CSR_READ(timeh);
    lo = CSR_READ(time);
  } while (hi != CSR_READ(timeh));
  return ((uint64_t)hi << 32) | lo;
#endif
}

static inline uintptr_t r_sp(void) { uintptr_t x; asm volatile("mv %0, sp" : "=r"(x)); return x; }
static inline uintptr_t r_fp(void) { uintptr_t x; asm volatile("mv %0, s0" : "=r"(x)); return x; }
static inline uintptr_t r_tp(void) { uintptr_t x; asm volatile("mv %0, tp" : "=r"(x)); return x; }
static inline void w_tp(uintptr_t x) { asm volatile("mv tp, %0" : : "r"(x)); }

#endif // __ASSEMBLER__
#endif // RISCV_H
