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

// waitpid(pid, &status) waits for the child to exit; the result besides a pid:
#define WAIT_NO_CHILD   -1  // no such child (or a bad status pointer)

// task_info(&info) (a lab: taskinfo.c).
#define MAX_SYSCALL_NUM 500
enum task_status { TASK_UNINIT, TASK_READY, TASK_RUNNING, TASK_EXITED };
struct task_info {
  uint32_t status;                          // enum task_status: TASK_RUNNING for the caller
  uint32_t syscall_times[MAX_SYSCALL_NUM];  // calls made so far, by number
  uintptr_t time;                           // ms since the task was first scheduled,
                                            // on get_time's clock (kernel/clock.c)
};

// The longest path the kernel takes, its NUL included (exec, open, mkdir, ...); a
// longer one is refused whole, never cut. Room for a few directory-entry names
// (DIRSIZ, fs_gen.h) of course-length program names.
#define MAXPATH 128

// Exit status of a process the kernel killed for a fault (trap.c).
#define EXIT_KILLED -1

// lockstat(name, stat): the kernel's spinlocks whose names begin with `name` (every
// lock for ""), their statistics summed: how often they were taken and how many times
// a hart found one held and tried again. Returns how many locks matched (spinlock.c).
#define LOCKSTAT_NAME_MAX 16
struct lockstat {
  uint64_t acquires;
  uint64_t spins;
};

// Threads and their sync objects (thread.c, sync.c): how many a process may have.
// thread_create returns tids 1..NTHREAD-1 (the main thread is 0), lowest free first;
// mutex_create, semaphore_create and condvar_create return indexes from 0.
#define NTHREAD  16
#define NMUTEX   16
#define NSEM     16
#define NCONDVAR 16

// openat(path, flags, mode) flags, as rCore-Tutorial's OpenFlags (not Linux's values).
// O_APPEND is ours (rCore has none); it takes the next free bit.
#define O_RDONLY  0x000
#define O_WRONLY  0x001
#define O_RDWR    0x002
#define O_ACCMODE 0x003
#define O_CREATE  0x200
#define O_TRUNC   0x400
#define O_APPEND  0x800

// The directory fd meaning "relative to the current directory", for the Linux forms of
// openat/linkat/unlinkat/mkdirat (the only dirfd accepted).
#define AT_FDCWD -100

// fstat(fd, &st): rCore-Tutorial's Stat (dev, ino, mode, nlink, then 7 words of
// padding), with the file's size in the first padding word.
#define S_IFMT  0xf000   // Unix's octal 0170000, as are the others
#define S_IFDIR 0x4000
#define S_IFREG 0x8000
#define S_IFCHR 0x2000
#define S_IFIFO 0x1000
struct stat {
  uint64_t dev;
  uint64_t ino;
  uint32_t mode;   // S_IFDIR, S_IFREG, S_IFCHR (the console), S_IFIFO (a pipe)
  uint32_t nlink;
  uint64_t size;   // bytes (rCore's pad[0])
  uint64_t pad[6];
};

// getdents64(fd, buf, len) fills buf with these records, each d_reclen bytes (a
// multiple of 8), the name NUL-terminated at DIRENT64_NAME_OFFSET (Linux's layout).
#define DT_CHR 2
#define DT_DIR 4
#define DT_REG 8
struct linux_dirent64 {
  uint64_t d_ino;
  int64_t d_off;     // offset of the next entry in the directory
  uint16_t d_reclen;
  uint8_t d_type;
  char d_name[];
};
#define DIRENT64_NAME_OFFSET 19


// Signals (kernel/signal.c): kill(pid, signum), sigaction(signum, &action, &old),
// sigprocmask(mask), sigreturn(). The numbers are rCore-Tutorial's SignalFlags bits,
// which are Linux's; a set of signals (a mask) has bit (1 << signum) for each.
// 0 is no signal: kill(pid, 0) only asks whether pid exists.
#define SIGHUP    1
#define SIGINT    2
#define SIGQUIT   3
#define SIGILL    4
#define SIGTRAP   5
#define SIGABRT   6
#define SIGBUS    7
#define SIGFPE    8
#define SIGKILL   9   // cannot be caught, blocked or ignored
#define SIGUSR1   10
#define SIGSEGV   11
#define SIGUSR2   12
#define SIGPIPE   13
#define SIGALRM   14
#define SIGTERM   15
#define SIGSTKFLT 16
#define SIGCHLD   17  // ignored by default, as are SIGURG and SIGWINCH
#define SIGCONT   18  // continues a stopped process (when sent, whatever its action)
#define SIGSTOP   19  // cannot be caught, blocked or ignored
#define SIGTSTP   20  // SIGTSTP, SIGTTIN, SIGTTOU stop by default
#define SIGTTIN   21
#define SIGTTOU   22
#define SIGURG    23
#define SIGXCPU   24
#define SIGXFSZ   25
#define SIGVTALRM 26
#define SIGPROF   27
#define SIGWINCH  28
#define SIGIO     29
#define SIGPWR    30
#define SIGSYS    31
#define NSIG      32  // signal numbers are below this
#define SIGBIT(sig) ((uint32_t)1 << (sig))

// sigaction's handler: one of these, or the address of void handler(int signum).
#define SIG_DFL 0     // the default action (rCore's handler 0)
#define SIG_IGN 1     // discard the signal (ours: rCore has no ignore)

// rCore-Tutorial's SignalAction: #[repr(C, align(16))] { handler: usize, mask: u32 }.
// mask: the signals blocked, besides this one, while the handler runs.
struct sigaction {
  uintptr_t handler;
  uint32_t mask;
} __attribute__((aligned(16)));

// Exit status of a process a signal ended: -signum, as rCore-Tutorial's kernel exits
// with (SIGKILL: -9).
#define EXIT_SIGNALED(sig) (-(sig))

#endif // ABI_H
