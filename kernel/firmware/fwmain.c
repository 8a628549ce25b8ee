// fwmain.c: M-mode setup, then a jump to the S-mode kernel; and the C side of mtrap.S.
//
// The firmware does as little as a kernel needs (after OpenSBI's fw_jump): open PMP,
// hand the traps a kernel handles to S, let S read the timer, and then serve SBI calls
// and the machine timer forever.
#include "fw.h"
#include "platform.h"
#include "riscv.h"
#include "setup.h"

__attribute__((aligned(16))) static uint8_t fw_stack[FW_STACK_SIZE];
uint8_t *const fw_stack_top = fw_stack + FW_STACK_SIZE;  // read by mentry.S

// Entered from mentry.S with a0 = hart id, a1 = device tree, on fw_stack.
void fw_main(uintptr_t hartid, uintptr_t dtb) {
  uart_init();
  w_mtvec((uintptr_t)mtrap_vector);
  w_mscratch((uintptr_t)fw_stack_top);  // mtrap.S swaps this with sp
  machine_setup();
  enter_supervisor(hartid, dtb, PLATFORM_KERNEL_BASE);  // -> kernel/entry.S _entry
}

// Called by mtrap.S for every trap that reaches M-mode.
void mtrap(struct mframe *f) {
  uintptr_t cause = r_mcause();
  if (cause == (CAUSE_INTERRUPT | IRQ_M_TIMER)) {
    timer_interrupt();
  } else if (cause == CAUSE_SUPERVISOR_ECALL) {
    sbi_handle(f);
    w_mepc(r_mepc() + 4);  // resume after the ecall
  } else {
    fw_panic("unexpected trap: mcause", cause, r_mepc(), r_mtval());
  }
}

void fw_panic(const char *what, uintptr_t a, uintptr_t b, uintptr_t c) {
  uart_puts("firmware: ");
  uart_puts(what);
  uart_puts(" ");
  uart_puthex(a);
  uart_puts(" mepc ");
  uart_puthex(b);
  uart_puts(" mtval ");
  uart_puthex(c);
  uart_puts("\n");
  finisher_exit(1);
}
