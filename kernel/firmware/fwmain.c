// fwmain.c: M-mode setup, then a jump to the S-mode kernel; and the C side of mtrap.S.
//
// The firmware does as little as a kernel needs (after OpenSBI's fw_jump): open PMP,
// hand the traps a kernel handles to S, let S read the timer, and then serve SBI calls
// and the machine timer forever.
#include "fw.h"
#include "platform.h"
#include "riscv.h"

#define FW_STACK_SIZE 8192
__attribute__((aligned(16))) static uint8_t fw_stack[FW_STACK_SIZE];
uint8_t *const fw_stack_top = fw_stack + FW_STACK_SIZE;  // read by mentry.S
void mtrap_vector(void);                                 // mtrap.S

// Exceptions the S-mode kernel handles itself (see kernel/trap.c).
#define DELEGATED_EXCEPTIONS                                                    \
  (BIT(CAUSE_MISALIGNED_FETCH) | BIT(CAUSE_FAULT_FETCH) |                      \
   BIT(CAUSE_ILLEGAL_INSTRUCTION) | BIT(CAUSE_BREAKPOINT) |                     \
   BIT(CAUSE_MISALIGNED_LOAD) | BIT(CAUSE_FAULT_LOAD) |                        \
   BIT(CAUSE_MISALIGNED_STORE) | BIT(CAUSE_FAULT_STORE) |                      \
   BIT(CAUSE_USER_ECALL) | BIT(CAUSE_EXEC_PAGE_FAULT) |                        \
   BIT(CAUSE_LOAD_PAGE_FAULT) | BIT(CAUSE_STORE_PAGE_FAULT))
#define DELEGATED_INTERRUPTS (MIP_SSIP | MIP_STIP | MIP_SEIP)

// Entered from mentry.S with a0 = hart id, a1 = device tree, on fw_stack.
void fw_main(uintptr_t hartid, uintptr_t dtb) {
  uart_init();
  w_mtvec((uintptr_t)mtrap_vector);
  w_mscratch((uintptr_t)fw_stack_top);  // mtrap.S swaps this with sp

  // One TOR entry up to the top of the address space: S and U may access everything.
  w_pmpaddr0(~(uintptr_t)0);
  w_pmpcfg0(PMP_A_TOR | PMP_R | PMP_W | PMP_X);

  w_medeleg(DELEGATED_EXCEPTIONS);
  w_mideleg(DELEGATED_INTERRUPTS);
  w_mcounteren(COUNTEREN_CY | COUNTEREN_TM | COUNTEREN_IR);

  // mret will drop to S with interrupts as the kernel sets them; M interrupts (the
  // timer) are always taken from S, whatever mstatus.MIE says.
  w_mstatus((r_mstatus() & ~MSTATUS_MPP) | MSTATUS_MPP_S);
  w_satp(0);
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
