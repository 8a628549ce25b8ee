// abi.h: the structures and constants user programs and the kernel share, beyond
// the system-call numbers (which come from syscall.tbl). Included by the kernel and
// by userland/include/user.h. Layouts match rCore-Tutorial / uCore-Tutorial, where
// usize/isize are register-sized (uintptr_t here).
#ifndef ABI_H
#define ABI_H

#include <stdint.h>

// get_time(tv, tz): the time since boot.
struct timeval {
  uintptr_t sec;
  uintptr_t usec;
};

// mmap(start, len, prot): prot bits; others must be 0 and at least one must be set.
// The pages get exactly these permissions: PROT_WRITE alone is W without R, an
// encoding the spec reserves, so every access to such a page faults.
#define PROT_READ  1
#define PROT_WRITE 2
#define PROT_EXEC  4
#define PROT_MASK  (PROT_READ | PROT_WRITE | PROT_EXEC)

// waitpid(pid, &status): results besides a pid.
#define WAIT_NO_CHILD   -1  // no such child (or a bad status pointer)
#define WAIT_STILL_RUNS -2  // the child exists but has not exited yet

// task_info(&info) (a lab: taskinfo.c).
#define MAX_SYSCALL_NUM 500
enum task_status { TASK_UNINIT, TASK_READY, TASK_RUNNING, TASK_EXITED };
struct task_info {
  uint32_t status;                          // enum task_status: TASK_RUNNING for the caller
  uint32_t syscall_times[MAX_SYSCALL_NUM];  // calls made so far, by number
  uintptr_t time;                           // ms since the task was first scheduled,
                                            // on get_time's clock (kernel/clock.c)
};

// Exit status of a process the kernel killed for a fault (trap.c).
#define EXIT_KILLED -1

#endif // ABI_H
