// asm.h: register-width neutral mnemonics for assembly files, so one .S serves RV32 and RV64.
#ifndef ASM_H
#define ASM_H

#if __riscv_xlen == 64
#define REG_S sd
#define REG_L ld
#define REGBYTES 8
#else
#define REG_S sw
#define REG_L lw
#define REGBYTES 4
#endif

#endif // ASM_H
