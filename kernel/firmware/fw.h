// fw.h: what the firmware's files share.
#ifndef FW_H
#define FW_H

// Each hart's M-mode stack (fwmain.c: hart 0's at boot; hsm.c: the others').
#define FW_STACK_SHIFT 13
#define FW_STACK_SIZE (1 << FW_STACK_SHIFT)

#ifndef __ASSEMBLER__
#include <stdint.h>
#include <stddef.h>

// The registers of the interrupted hart, saved by mtrap.S: regs[n] is xn.
struct mframe {
  uintptr_t regs[32];
};
#define REG_A0 10
#define REG_A1 11
#define REG_A6 16
#define REG_A7 17

// mentry.S
void enter_supervisor(uintptr_t hartid, uintptr_t dtb, uintptr_t entry) __attribute__((noreturn));
// fwmain.c
void fw_panic(const char *what, uintptr_t a, uintptr_t b, uintptr_t c) __attribute__((noreturn));
// What an SBI call returns: an error in a0, a value in a1.
struct sbiret {
  long error;
  long value;
};
// set_timer's 64-bit deadline (sbicalls.c, hsm.c): a0 on RV64; a0 (low) and a1 (high) on RV32.
static inline uint64_t timer_arg(const uintptr_t *a) {
#if XLEN == 32
  return ((uint64_t)a[1] << 32) | a[0];
#else
  return a[0];
#endif
}
// sbicalls.c
void sbi_handle(struct mframe *f);
// hsm.c
struct sbiret smp_sbi(uintptr_t eid, uintptr_t fid, const uintptr_t *a);
// clint.c
void timer_set(uint64_t when);
void timer_interrupt(void);
// uart.c
void uart_init(void);
void uart_putc(int c);
int uart_getc(void);
void uart_puts(const char *s);
void uart_puthex(uintptr_t x);
// finisher.c
void finisher_exit(uint32_t status) __attribute__((noreturn));
void finisher_reset(void) __attribute__((noreturn));

#endif // __ASSEMBLER__
#endif // FW_H
