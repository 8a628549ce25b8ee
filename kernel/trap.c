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
#include "spinlock.h"
#include "trapframe.h"

extern char trampoline[], uservec[], userret[], usertrap_entry[];  // trampoline.S
void kernelvec(void);                            // kernelvec.S

static uint64_t timer_interval;  // timebase ticks per time slice (the same on every hart)

// stvec, and the software interrupt another hart raises to make this one look at its
// thread's signals (smp_kick()) or its run queue.
void trapinit(void) {
  w_stvec((uintptr_t)kernelvec);
  w_sie(r_sie() | SIE_SSIE);
}

// Each hart has its own timer (its own CLINT mtimecmp, through the firmware).
static void timer_arm(uint64_t when) {
  mycpu()->timer_armed = when;
  sbi_set_timer(when);
}

// A tick (or the first one): ask the firmware for the next timer interrupt, one time
// slice from now, and wake the threads in sleep() whose time may have come (clock.c).
static void timer_next(void) {
  timer_arm(r_time() + timer_interval);
  clock_tick();
}

// A thread sleeps until `when` (clock.c): make sure a timer interrupt comes by then,
// not only at the end of the time slice (this hart's: any hart's tick wakes it).
void timer_wake_by(uint64_t when) {
  if (when < mycpu()->timer_armed)
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

// Exception names as QEMU's `-d int` prints them (riscv_gen.h, from privlab/abi/csr.py).
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

// A page fault from U that the kernel resolves (a lazy heap page, a copy-on-write
// page: pagefault.c), taken without kernel_lock when the process has one thread: only
// that thread uses its page table, and the frame allocator has locks of its own
// (kalloc.c), so harts faulting in pages at once each get on with it, and the
// allocator's locks are what they contend for (the lock lab). 1 if resolved; 0 for
// any other trap, a fault of a process with several threads (their page table is
// shared: the kernel lock keeps them apart), or a fault this could not resolve, which
// usertrap() then handles under the lock as usual (a real fault kills the process).
static int fault_without_lock(struct proc *p, uintptr_t scause) {
  if (scause != CAUSE_LOAD_PAGE_FAULT && scause != CAUSE_STORE_PAGE_FAULT)
    return 0;
  if (boot.ncpu == 1)   // nobody to run beside: the lock is free, and lone_thread() costs
    return 0;
  if (!lone_thread(p))  // only p itself could add a thread, and it is here
    return 0;
  return uvm_fault(p->pagetable, r_stval(), scause == CAUSE_STORE_PAGE_FAULT) == FAULT_FIXED;
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
  if (fault_without_lock(p, scause))
    return_to_user(p, 0);
  acquire(&kernel_lock);          // kernel code runs on one hart at a time (smp.c)
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
  } else if (scause == (CAUSE_INTERRUPT | IRQ_S_EXTERNAL)) {
    device_interrupt();
  } else if (scause == (CAUSE_INTERRUPT | IRQ_S_SOFTWARE)) {
    sip_clear(SIP_SSIP);     // another hart's smp_kick(): usertrapret() looks at signals
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

// Return to user space, with kernel_lock held: act on pending signals, then
// return_to_user().
void usertrapret(void) {
  struct proc *p = myproc();
  thread_leave_if_exiting();  // thread.c: the process is ending
  signal_deliver();  // signal.c: may rewrite the trapframe for a handler, stop, or exit
  return_to_user(p, 1);
}

// Set up what uservec will need on the next trap, make sret go to U at the saved pc
// with interrupts on, give up kernel_lock if `locked`, and jump to userret on the
// trampoline.
void return_to_user(struct proc *p, int locked) {
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
  // From here on nothing touches what other harts may change: the trapframe and the
  // kernel stack are this thread's, and it stays RUNNING, so no hart picks it.
  if (locked)
    release(&kernel_lock);

  // userret sits at the same address in both page tables (the trampoline page).
  void (*ret)(uintptr_t, uintptr_t) =
      (void (*)(uintptr_t, uintptr_t))(TRAMPOLINE + (userret - trampoline));
  ret(MAKE_SATP(p->pagetable), TRAPFRAME_OF(p->tid));
  __builtin_unreachable();
}

// Entered from kernelvec (kernelvec.S). The kernel takes interrupts only while it
// waits in wfi (scheduler(), sleep(), a spinning mutex_lock()); any exception is a
// kernel bug: say where, and stop. Handling an interrupt wakes threads and talks to
// devices, which needs kernel_lock: the scheduler waits without it, sleep() and
// mutex_lock() with it.
void kerneltrap(void) {
  uintptr_t scause = r_scause();
  if (scause == (CAUSE_INTERRUPT | IRQ_S_SOFTWARE)) {
    sip_clear(SIP_SSIP);  // smp_kick(): whatever it was for is seen on the way to U
    return;
  }
  if (scause == (CAUSE_INTERRUPT | IRQ_S_TIMER) || scause == (CAUSE_INTERRUPT | IRQ_S_EXTERNAL)) {
    int take = !holding(&kernel_lock);
    if (take)
      acquire(&kernel_lock);
    if (scause == (CAUSE_INTERRUPT | IRQ_S_TIMER))
      timer_next();
    else
      device_interrupt();
    if (take)
      release(&kernel_lock);
    return;
  }
  panic("kernel trap: %s scause=%p sepc=%p stval=%p",
        (scause & CAUSE_INTERRUPT) ? "interrupt" : exception_name(scause),
        (void *)scause, (void *)r_sepc(), (void *)r_stval());
}
