// param.h: tunable limits of the kernel.
#ifndef PARAM_H
#define PARAM_H

#define NPROC        64    // process table size
#define KSTACK_PAGES 2     // kernel stack per process, below a guard page
#define USTACK_PAGES 8     // user stack, below TRAPFRAME (memlayout.h)
#define TIMER_HZ     100   // scheduler ticks per second: a 10 ms time slice
#define MAXARG       32    // most argv entries exec accepts
#define MAXPATH      64    // longest program name
#define BOOTARGS_MAX 256   // longest /chosen bootargs kept
#define INIT_PROGRAM "init" // the first process when bootargs has no init=
#define PROC_NAME    16
#define EXIT_NOT_FOUND 127 // power-off status when init= names no program (as a shell's)

#endif // PARAM_H
