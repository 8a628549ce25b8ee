// ucore_shaped.c: a bare-metal program whose data has the shape of a uCore-Tutorial
// C kernel's (chapter 5/6: `pool[]` of struct proc, `current_proc`, `idle` outside the
// table, `files[]`, `kernel_pagetable`; with -DTHREADS chapter 8's: struct thread in
// each process, `current_thread`), so `--abi ucore` is tested without the course's
// repository. M-mode fills the table, then runs U code that makes two uCore system
// calls: getpid (172), answered with the running process's pid, and exit (93), which
// powers off. The process hart 0 runs is pool[RUNNING_SLOT], pid RUNNING_PID, its
// page table `uroot`.
#include "platform.h"
#include "riscv.h"
#include "riscv_gen.h"

#define NPROC 4
#define NFILE 4
#define RUNNING_SLOT 1
#define RUNNING_PID 7
#define PARENT_PID 1
#define FRAME_A0 0x1234          // what the running process's trap frame holds in a0
#define UCORE_SYS_EXIT 93
#define GIGAPAGE_INDEX 2         // Sv39 root index of the gigapage at RAM base

#define STR(x) #x
#define XSTR(x) STR(x)

typedef unsigned long uint64;
typedef uint64 *pagetable_t;

struct trapframe {
  uint64 kernel_satp, kernel_sp, kernel_trap, epc, kernel_hartid;
  uint64 ra, sp, gp, tp, t0, t1, t2, s0, s1, a0, a1, a2, a3, a4, a5, a6, a7;
};

struct inode;
struct file {
  enum { FD_NONE = 0, FD_INODE, FD_STDIO } type;
  int ref;
  char readable;
  char writable;
  struct inode *ip;
  unsigned off;
};

#ifdef THREADS
enum threadstate { T_UNUSED, T_USED, SLEEPING, RUNNABLE, RUNNING, EXITED };
enum procstate { P_UNUSED, P_USED, ZOMBIE };
struct proc;
struct thread {
  enum threadstate state;
  int tid;
  struct proc *process;
  uint64 kstack;
  struct trapframe *trapframe;
};
#define NTHREAD 2
#define RUNNABLE_STATE P_USED
#define RUNNING_STATE P_USED
#else
enum procstate { UNUSED, USED, SLEEPING, RUNNABLE, RUNNING, ZOMBIE };
#define RUNNABLE_STATE RUNNABLE
#define RUNNING_STATE RUNNING
#endif

struct proc {
  enum procstate state;
  int pid;
  pagetable_t pagetable;
  uint64 kstack;
#ifdef THREADS
  struct thread threads[NTHREAD];
#else
  struct trapframe *trapframe;
#endif
  struct proc *parent;
  uint64 exit_code;
  struct file *files[NFILE];
};

struct proc pool[NPROC];
struct proc idle;                 // the scheduler's: outside pool[], as in uCore
#ifdef THREADS
struct thread *current_thread;
#else
struct proc *current_proc;
#endif
pagetable_t kernel_pagetable;
struct trapframe frames[NPROC] __attribute__((aligned(PAGE_SIZE)));
uint64 kroot[PAGE_SIZE / sizeof(uint64)] __attribute__((aligned(PAGE_SIZE)));
uint64 uroot[PAGE_SIZE / sizeof(uint64)] __attribute__((aligned(PAGE_SIZE)));
struct file stdio = { FD_STDIO, 1, 1, 0, 0, 0 };

void user_code(void);
void m_trap(void);

// U: getpid, then exit with its result.
asm(".text\n.align 2\n.globl user_code\nuser_code:\n"
    "  li a7, 172\n  ecall\n"
    "  li a7, " XSTR(UCORE_SYS_EXIT) "\n  ecall\n"
    "1: j 1b\n");

// M: every ecall from U is a system call; exit powers off, the rest return the pid.
asm(".text\n.align 2\n.globl m_trap\nm_trap:\n"
    "  csrr t0, mepc\n  addi t0, t0, 4\n  csrw mepc, t0\n"
    "  li t1, " XSTR(UCORE_SYS_EXIT) "\n  beq a7, t1, 2f\n"
    "  li a0, " XSTR(RUNNING_PID) "\n  mret\n"
    "2: li t0, " XSTR(PLATFORM_FINISHER_BASE) "\n  li t1, " XSTR(FINISHER_PASS) "\n"
    "  sw t1, 0(t0)\n3: j 3b\n");

void kmain(void) {
  pool[0].state = RUNNABLE_STATE;
  pool[0].pid = PARENT_PID;
  pool[RUNNING_SLOT].state = RUNNING_STATE;
  pool[RUNNING_SLOT].pid = RUNNING_PID;
  pool[RUNNING_SLOT].parent = &pool[0];
  pool[RUNNING_SLOT].pagetable = uroot;
  pool[RUNNING_SLOT].files[0] = &stdio;
  frames[RUNNING_SLOT].a0 = FRAME_A0;
#ifdef THREADS
  pool[RUNNING_SLOT].threads[1].state = RUNNING;
  pool[RUNNING_SLOT].threads[1].tid = 1;
  pool[RUNNING_SLOT].threads[1].process = &pool[RUNNING_SLOT];
  pool[RUNNING_SLOT].threads[1].trapframe = &frames[RUNNING_SLOT];
  current_thread = &pool[RUNNING_SLOT].threads[1];
#else
  pool[RUNNING_SLOT].trapframe = &frames[RUNNING_SLOT];
  current_proc = &pool[RUNNING_SLOT];
#endif
  // One gigapage at RAM base, identity-mapped: the kernel's own table, and the
  // process's (user pages), which U runs under, as a uCore process does.
  kroot[GIGAPAGE_INDEX] = ((PLATFORM_RAM_BASE >> PAGE_SHIFT) << 10) | PTE_V | PTE_R | PTE_W | PTE_X;
  kernel_pagetable = kroot;
  uroot[GIGAPAGE_INDEX] = kroot[GIGAPAGE_INDEX] | PTE_U | PTE_A | PTE_D;
  w_satp(SATP_MODE | ((uintptr_t)uroot >> PAGE_SHIFT));
  asm volatile("sfence.vma");

  // Every address to U (one NAPOT region covering all), then mret to user_code.
  w_pmpaddr0(-1UL);
  w_pmpcfg0(PMP_A_NAPOT | PMP_R | PMP_W | PMP_X);
  w_mtvec((uintptr_t)m_trap);
  w_mstatus((r_mstatus() & ~MSTATUS_MPP) | MSTATUS_MPP_U);
  w_mepc((uintptr_t)user_code);
  asm volatile("mret");
}

__attribute__((naked, section(".text.entry"))) void _start(void) {
  asm volatile("la sp, __stack_top\n  j kmain");
}
