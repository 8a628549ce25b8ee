// trap.c: traps from user space (usertrap), the way back (usertrapret), traps in
// the kernel (kerneltrap), and the scheduler's timer.
//
// Path of a trap from U: the hardware jumps to stvec = uservec (trampoline.S), which
// saves the user registers in the trapframe and jumps to usertrap_entry (there too),
// which calls usertrap() here. Going back, usertrapret() acts on pending signals
// (signal.c), prepares the trapframe and sstatus and calls userret (trampoline.S),
// which restores the registers and executes sret.
#include "abi.h"
#include "defs.h"
#include "memlayout.h"
#include "platform.h"
#include "proc.h"
#include "riscv.h"
#include "trapframe.h"

extern char trampoline[], uservec[], userret[], usertrap_entry[];  // trampoline.S
void kernelvec(void);                            // kernelvec.S

static uint64_t timer_interval;  // timebase ticks per time slice
static uint64_t timer_armed;     // when the timer interrupt asked for is due

void trapinit(void) { w_stvec((uintptr_t)kernelvec); }

static void timer_arm(uint64_t when) {
  timer_armed = when;
  sbi_set_timer(when);
}

// A tick (or the first one): ask the firmware for the next timer interrupt, one time
// slice from now, and wake the threads in sleep() whose time may have come (clock.c).
static void timer_next(void) {
  timer_arm(r_time() + timer_interval);
  clock_tick();
}

// A thread sleeps until `when` (clock.c): make sure a timer interrupt comes by then,
// not only at the end of the time slice.
void timer_wake_by(uint64_t when) {
  if (when < timer_armed)
    timer_arm(when);
}

// Does the timer interrupt the kernel at all? Not in lab 6's handout.
int timer_enabled(void) { return (r_sie() & SIE_STIE) != 0; }

void timerinit(void) {
  long hz = bootargs_number("timer_hz", TIMER_HZ);
  if (hz <= 0 || (uint64_t)hz > boot.timebase_hz)
    hz = TIMER_HZ;
  timer_interval = boot.timebase_hz / hz;  // 10 ms by default: 100,000 ticks at 10 MHz
  // Lab 6 (trap): without a timer, a process keeps the CPU until it makes a system
  // call; with one, every trap path must preserve all of the user's registers.
  // BEGIN SOLUTION
  w_sie(r_sie() | SIE_STIE);  // taken only in U: the kernel runs with sstatus.SIE = 0
  timer_next();
  // END SOLUTION
}

// Exception names as QEMU's `-d int` prints them (riscv_gen.h, from harness/abi/csr.py).
static const char *exception_name(uintptr_t code) {
  static const char *names[] = EXCEPTION_NAMES_INIT;
  if (code < sizeof(names) / sizeof(names[0]) && names[code])
    return names[code];
  return "unknown_exception";
}

// A user program did something it may not: one line, then the process dies, with
// all its threads. The line names the thread when it is not the main one.
static void kill_for_fault(struct proc *p, uintptr_t scause) {
  const char *what = exception_name(CAUSE_CODE(scause));
  void *sepc = (void *)r_sepc(), *stval = (void *)r_stval();
  if (p->tid != 0)
    printf("[kernel] pid %d tid %d (%s) killed: %s sepc=%p stval=%p\n", p->pid, p->tid,
           p->name, what, sepc, stval);
  else
    printf("[kernel] pid %d (%s) killed: %s sepc=%p stval=%p\n", p->pid, p->name, what,
           sepc, stval);
  exit_group(EXIT_KILLED);
}

// A supervisor external interrupt: ask the PLIC which device, service it, and tell
// the PLIC we are done so the device may interrupt again.
static void device_interrupt(void) {
  int src = plic_claim();
  if (src == PLATFORM_VIRTIO0_IRQ)
    virtio_disk_intr();
  else if (src != 0)
    printf("[kernel] unexpected interrupt from PLIC source %d\n", src);
  if (src != 0)
    plic_complete(src);
}

// Called by usertrap_entry, where uservec jumps (both in trampoline.S), on the
// process's kernel stack, with the kernel page table and the user registers saved in
// p->trapframe.
void usertrap(void) {
  struct proc *p = myproc();
  if (r_sstatus() & SSTATUS_SPP)
    panic("usertrap: not from user mode");
  w_stvec((uintptr_t)kernelvec);  // a trap in the kernel now goes to kerneltrap()
  p->trapframe->epc = r_sepc();
  uintptr_t scause = r_scause();
  if (scause == CAUSE_USER_ECALL) {
    p->trapframe->epc += 4;  // return after the ecall
    syscall();               // syscall.c; may not return (exit) or replace the image (exec)
  } else if (scause == (CAUSE_INTERRUPT | IRQ_S_TIMER)) {
    alarm_tick(p);           // alarm.c (lab 12): may send the coming sret to the handler
    // Lab 6 (trap): the time slice is over: arm the next tick and let another run.
    // BEGIN SOLUTION
    timer_next();            // also clears the pending interrupt
    yield();
    // END SOLUTION
  } else if (scause == (CAUSE_INTERRUPT | IRQ_S_EXT)) {
    device_interrupt();
  } else if (scause & CAUSE_INTERRUPT) {
    w_sie(r_sie() & ~BIT(CAUSE_CODE(scause)));  // no device of ours: mask it
  } else if ((scause == CAUSE_LOAD_PAGE_FAULT || scause == CAUSE_STORE_PAGE_FAULT) &&
             user_page_fault(p, scause, r_stval()) == 0) {
    // A page the kernel supplies on demand (pagefault.c: copy-on-write, lazy heap):
    // return to the same sepc, and the load or store runs again.
  } else if (scause == CAUSE_EXEC_PAGE_FAULT && r_sepc() == SIGRETURN_PC &&
             signal_return(p) == 0) {
    // A signal handler returned: start_handler() (signal.c) set its ra to an address
    // U may not execute, so the return traps here. Done: it is sigreturn().
  } else if (scause == CAUSE_EXEC_PAGE_FAULT && r_sepc() == THREAD_EXIT_PC && p->tid != 0) {
    // A thread's function returned (thread.c set its ra): exit with its value.
    exit((int)p->trapframe->a0);
  } else {
    kill_for_fault(p, scause);
  }
  usertrapret();
}

// Return to user space: act on pending signals, set up what uservec will need on the
// next trap, make sret go to U at the saved pc with interrupts on, and jump to
// userret on the trampoline.
void usertrapret(void) {
  struct proc *p = myproc();
  thread_leave_if_exiting();  // thread.c: the process is ending
  signal_deliver();  // signal.c: may rewrite the trapframe for a handler, stop, or exit
  w_stvec(TRAMPOLINE + (uservec - trampoline));  // traps from U now go to uservec

  p->trapframe->kernel_satp = kernel_satp();
  p->trapframe->kernel_sp = p->kstack + KSTACK_SIZE;
  p->trapframe->kernel_trap = (uintptr_t)usertrap_entry;  // trampoline.S
  p->trapframe->kernel_hartid = r_tp();

  uintptr_t sstatus = r_sstatus();
  sstatus &= ~SSTATUS_SPP;  // sret goes to U
  sstatus |= SSTATUS_SPIE;  // with interrupts enabled
  w_sstatus(sstatus);
  w_sepc(p->trapframe->epc);

  // userret sits at the same address in both page tables (the trampoline page).
  void (*ret)(uintptr_t, uintptr_t) =
      (void (*)(uintptr_t, uintptr_t))(TRAMPOLINE + (userret - trampoline));
  ret(MAKE_SATP(p->pagetable), TRAPFRAME_OF(p->tid));
  __builtin_unreachable();
}

// Entered from kernelvec (kernelvec.S). The kernel takes interrupts only while it
// waits in wfi (scheduler(), sleep()); any exception is a kernel bug: say where, and
// stop.
void kerneltrap(void) {
  uintptr_t scause = r_scause();
  if (scause == (CAUSE_INTERRUPT | IRQ_S_TIMER)) {
    timer_next();
    return;
  }
  if (scause == (CAUSE_INTERRUPT | IRQ_S_EXT)) {
    device_interrupt();
    return;
  }
  panic("kernel trap: %s scause=%p sepc=%p stval=%p",
        (scause & CAUSE_INTERRUPT) ? "interrupt" : exception_name(scause),
        (void *)scause, (void *)r_sepc(), (void *)r_stval());
}
