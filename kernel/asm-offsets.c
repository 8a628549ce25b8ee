// asm-offsets.c: compiled to assembly (never linked) to turn C struct layouts into
// constants for the assembler. The build (harness/build/asm_offsets.py) compiles this
// file with -S, picks out the "->NAME value" markers below and writes asm-offsets.h,
// which trampoline.S and switch.S include. Edit the structs, never the offsets.
// The LAYOUT_ markers carry the kernel's virtual layout (memlayout.h) to the harness,
// which reads them from the built kernel's asm-offsets.h (a grader's backtrace check).
#include <stddef.h>
#include "memlayout.h"
#include "trapframe.h"
#include "proc.h"

#define DEFINE(sym, val) asm volatile("\n.ascii \"->" #sym " %0\"" : : "i"(val))
#define TF(field, name) DEFINE(TF_##name, offsetof(struct trapframe, field))
#define CTX(field, name) DEFINE(CTX_##name, offsetof(struct context, field))

void asm_offsets(void) {
  TF(kernel_satp, KERNEL_SATP); TF(kernel_sp, KERNEL_SP); TF(kernel_trap, KERNEL_TRAP);
  TF(kernel_hartid, KERNEL_HARTID); TF(epc, EPC);
  TF(ra, RA); TF(sp, SP); TF(gp, GP); TF(tp, TP);
  TF(t0, T0); TF(t1, T1); TF(t2, T2); TF(s0, S0); TF(s1, S1);
  TF(a0, A0); TF(a1, A1); TF(a2, A2); TF(a3, A3); TF(a4, A4); TF(a5, A5); TF(a6, A6); TF(a7, A7);
  TF(s2, S2); TF(s3, S3); TF(s4, S4); TF(s5, S5); TF(s6, S6); TF(s7, S7); TF(s8, S8);
  TF(s9, S9); TF(s10, S10); TF(s11, S11);
  TF(t3, T3); TF(t4, T4); TF(t5, T5); TF(t6, T6);
  DEFINE(TRAPFRAME_SIZE, sizeof(struct trapframe));

  CTX(ra, RA); CTX(sp, SP);
  CTX(s[0], S0); CTX(s[1], S1); CTX(s[2], S2); CTX(s[3], S3); CTX(s[4], S4); CTX(s[5], S5);
  CTX(s[6], S6); CTX(s[7], S7); CTX(s[8], S8); CTX(s[9], S9); CTX(s[10], S10); CTX(s[11], S11);

  DEFINE(LAYOUT_TRAMPOLINE, TRAMPOLINE); DEFINE(LAYOUT_TRAPFRAME, TRAPFRAME);
  DEFINE(LAYOUT_KSTACK0, KSTACK(0)); DEFINE(LAYOUT_KSTACK1, KSTACK(1));
  DEFINE(LAYOUT_KSTACK_SIZE, KSTACK_SIZE);
  DEFINE(LAYOUT_THREAD_TRAPFRAME1, THREAD_TRAPFRAME(1));
  DEFINE(LAYOUT_THREAD_BLOCK_SIZE, THREAD_BLOCK_SIZE);
  DEFINE(LAYOUT_USTACK_SIZE, USTACK_PAGES * PGSIZE);
  DEFINE(LAYOUT_USER_BASE, USER_BASE);     // user.ld links programs there
}
