// xlen_asm.h: register-sized load/store mnemonics and size for inline assembly in
// test programs that save and check every register (lab_trap.c, sigtests.c).
#ifndef XLEN_ASM_H
#define XLEN_ASM_H

#if __riscv_xlen == 64
#define SZ "8"
#define ST "sd"
#define LD "ld"
#else
#define SZ "4"
#define ST "sw"
#define LD "lw"
#endif

#endif // XLEN_ASM_H
