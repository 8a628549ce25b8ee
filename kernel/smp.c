// smp.c: several harts: what each hart keeps, the kernel lock, starting the other
// harts, and telling them to flush their TLBs.
//
// The firmware (or OpenSBI) enters the kernel on one hart, the boot hart; the others
// wait in the firmware, STOPPED, until the boot hart starts them with SBI HSM
// hart_start (smp_start_harts). Each then sets up its own paging, trap vector and
// timer, and runs its own scheduler() loop over the one process table.
//
// The kernel lock. The kernel was written for one hart with interrupts off, where
// kernel code loses the CPU only where it calls sched(): file system, pipes,
// processes, signals and threads check a condition and sleep on it without locks.
// With several harts, kernel_lock keeps that true: a hart holds it whenever it runs
// kernel code for a thread (usertrap() takes it on every trap from U, usertrapret()
// gives it back on the way out), and the scheduler holds it while it picks. It is
// held across swtch(): sched() hands it from the thread to the hart's scheduler,
// which hands it on to the next thread it runs, so a thread sleeping or waking is
// atomic with the check before it, as on one hart. It is given up only where a hart
// has nothing to do (scheduler() waiting for an interrupt). User code runs on every
// hart at once; kernel code runs on one at a time (Linux 2.0's and FreeBSD's "Giant",
// OpenBSD's KERNEL_LOCK). Below it, finer spinlocks protect what harts touch without
// it: the frame allocator (kalloc.c, which the lock lab splits per hart), which page
// faults of one-thread processes reach without the kernel lock (trap.c).
#include "defs.h"
#include "proc.h"
#include "riscv.h"
#include "sbi.h"
#include "spinlock.h"

struct cpu cpus[NCPU];
struct spinlock kernel_lock;  // initlock()ed first thing in main()

extern char _secondary[];  // entry.S: where a started hart enters the kernel

// Start every other hart the device tree lists. Each enters _secondary (entry.S) in
// S-mode with paging off and a0 = its hart id, and calls secondary_main().
void smp_start_harts(void) {
  for (int h = 0; h < boot.ncpu; h++) {
    if ((uintptr_t)h == boot.hartid)
      continue;
    if (h >= NCPU) {
      printf("[kernel] hart %d: more harts than NCPU (%d); it stays stopped\n", h, NCPU);
      continue;
    }
    long err = sbi_hart_start(h, (uintptr_t)_secondary, 0);
    if (err != SBI_SUCCESS)
      printf("[kernel] hart %d did not start: SBI error %ld\n", h, err);
  }
}

// A started hart's C entry (from _secondary): the per-hart half of main().
void secondary_main(uintptr_t hartid) {
  (void)hartid;
  kvminithart();   // the kernel page table the boot hart built
  trapinit();      // stvec = kernelvec
  timerinit();     // this hart's own time slices
  scheduler();
}

// Other harts may be running threads of process p (its main thread's slot) with the
// old page table in their TLBs: after unmapping or write-protecting its pages, tell
// them to flush (SBI remote sfence.vma; the firmware waits until they have). The
// caller holds kernel_lock, so a thread cannot start running meanwhile: one that
// starts later flushes as it enters U (trampoline.S).
void tlb_shootdown(struct proc *p) {
  uintptr_t mask = 0;
  for (struct proc *t = proc; t < &proc[NPROC]; t++)
    if (t->group == p && t->state == RUNNING && t != myproc())
      mask |= 1ul << t->hart;
  if (mask != 0)
    sbi_remote_sfence_vma(mask);
}

// Thread t has something to act on as it returns to U (a signal: signal.c). If it runs
// on another hart, in U it would not notice before its next trap, a time slice away:
// interrupt that hart (an SBI IPI raises its sip.SSIP), so it traps, and usertrapret()
// delivers. A hart in the kernel takes the interrupt on its way back to U.
void smp_kick(struct proc *t) {
  if (t->state == RUNNING && t != myproc())
    sbi_send_ipi(1ul << t->hart);
}
