// defs.h: every function one kernel file offers the others, grouped by file.
#ifndef DEFS_H
#define DEFS_H

#include "param.h"
#include "types.h"

struct proc;
struct context;
struct trapframe;
struct args;
struct buf;
struct file;
struct inode;
struct pipe;
struct stat;
struct superblock;

// main.c: what the boot protocol told us (filled by fdt.c)
struct bootinfo {
  uintptr_t hartid;             // the hart that booted the kernel
  int ncpu;                     // harts in the device tree's /cpus (at least 1)
  uintptr_t dtb, dtb_size;
  uintptr_t ram_base, ram_size;
  uint64_t timebase_hz;
  uintptr_t initrd_start, initrd_end;
  char bootargs[BOOTARGS_MAX];
};
extern struct bootinfo boot;

// fdt.c
int fdt_parse(uintptr_t dtb, struct bootinfo *info);

// bootargs.c
void bootargs_parse(const char *cmdline);
int bootargs_flag(const char *name);
long bootargs_number(const char *name, long otherwise);
struct args *bootargs_init_args(void);
int bootargs_has_init(void);

// sbi.c
void sbi_console_init(void);
int sbi_has_dbcn(void);
void sbi_putchar(int c);
int sbi_getchar(void);
long sbi_console_write(const char *buf, size_t n);
long sbi_hart_start(uintptr_t hartid, uintptr_t start_addr, uintptr_t opaque);
void sbi_remote_sfence_vma(uintptr_t hart_mask);
void sbi_send_ipi(uintptr_t hart_mask);
long sbi_console_read(char *buf, size_t n);
void sbi_set_timer(uint64_t when);
void sbi_shutdown(int status) __attribute__((noreturn));
void sbi_system_failure(void) __attribute__((noreturn));

// clock.c
uint64_t clock_us(uint64_t ticks);
void clock_tick(void);

// console.c
void console_write(const char *buf, size_t n);
int console_getc(void);

// plic.c
void plic_enable(int src);
int plic_claim(void);
void plic_complete(int src);

// virtio_disk.c
int virtio_disk_init(void);
uint32_t virtio_disk_blocks(void);
void virtio_disk_rw(struct buf *b, int write);
void virtio_disk_intr(void);

// alarm.c
void alarm_tick(struct proc *p);
int alarm_running(struct proc *p);
int alarm_return(struct proc *p);
void alarm_exec(struct proc *p);

// bio.c
void binit(void);
struct buf *bread(uint32_t blockno);
void bwrite(struct buf *b);
void brelse(struct buf *b);
void bpin(struct buf *b);
void bunpin(struct buf *b);

// log.c
void log_init(const struct superblock *sb);
void begin_op(void);
void end_op(void);
void log_write(struct buf *b);

// fs.c
int fsinit(void);
int fs_mounted(void);
struct inode *fs_root(void);
struct inode *ialloc(int16_t type);
struct inode *iget(uint32_t inum);
struct inode *idup(struct inode *ip);
void iupdate(struct inode *ip);
void ilock(struct inode *ip);
void iunlock(struct inode *ip);
void iput(struct inode *ip);
void iunlockput(struct inode *ip);
void itruncate(struct inode *ip);
uint32_t max_file_blocks(void);
long readi(struct inode *ip, int user, uintptr_t dst, uint32_t off, uint32_t n);
long writei(struct inode *ip, int user, uintptr_t src, uint32_t off, uint32_t n);
void stati(struct inode *ip, struct stat *st);
struct inode *dirlookup(struct inode *dp, const char *name, uint32_t *poff);
int dirlink(struct inode *dp, const char *name, uint32_t inum);
int dir_is_empty(struct inode *dp);
struct inode *namei(const char *path);
struct inode *nameiparent(const char *path, char *name);

// file.c
struct file *filealloc(void);
struct file *filedup(struct file *f);
void fileclose(struct file *f);
int filestat(struct file *f, struct stat *st);
long fileread(struct file *f, uintptr_t dst, size_t n);
long filewrite(struct file *f, uintptr_t src, size_t n);
int console_files(struct proc *p);

// pipe.c
int pipealloc(struct file **r, struct file **w);
void pipeclose(struct pipe *pi, int writable);
long pipewrite(struct pipe *pi, uintptr_t src, size_t n);
long piperead(struct pipe *pi, uintptr_t dst, size_t n);
const char *pipe_chan(struct pipe *pi, void *chan);

// printf.c
void printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

// backtrace.c
void backtrace(void);

// string.c
void *memset(void *dst, int c, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *safestrcpy(char *dst, const char *src, size_t n);
void strncpy_pad(char *dst, const char *src, size_t n);

// kalloc.c
void kinit(void);
void *kalloc(void);
void kfree(void *pa);
size_t kfree_count(void);
void kref(void *pa);          // lab 10: reference counts of shared frames
int kref_count(void *pa);

// vm.c
void kvminit(void);
void kvminithart(void);
void kvmmap_stack(uintptr_t va, void *pa);
uintptr_t kernel_satp(void);
pte_t *walk(pagetable_t pt, uintptr_t va, int alloc);
uintptr_t walkaddr(pagetable_t pt, uintptr_t va, int perm);
int mappages(pagetable_t pt, uintptr_t va, size_t size, uintptr_t pa, int perm);
pagetable_t uvmcreate(void);
int uvmmap_zeroed(pagetable_t pt, uintptr_t va, size_t size, int perm);
void uvmunmap(pagetable_t pt, uintptr_t va, size_t npages, int do_free);
int uvmcopy(pagetable_t old, pagetable_t new);
void uvmfree(pagetable_t pt);
int uvm_range_unmapped(pagetable_t pt, uintptr_t va, size_t npages);
int uvm_range_mapped(pagetable_t pt, uintptr_t va, size_t npages);
int copyout(pagetable_t pt, uintptr_t dstva, const void *src, size_t len);
int copyin(pagetable_t pt, void *dst, uintptr_t srcva, size_t len);
int copyinstr(pagetable_t pt, char *dst, uintptr_t srcva, size_t max);

// pagefault.c: faults the kernel resolves (labs 10 and 11); uvm_fault's results:
#define FAULT_FIXED      0   // the page is there now: retry the access
#define FAULT_BAD       -1   // a real fault: the process broke the rules
#define FAULT_NO_MEMORY -2   // the page is the process's, but no frame is free
int uvm_fault(pagetable_t pt, uintptr_t va, int write);
int user_page_fault(struct proc *t, uintptr_t scause, uintptr_t va);

// cow.c (lab 10)
int cow_share(pte_t *pte, uintptr_t va, pagetable_t child);
int cow_fault(pte_t *pte);

// lazy.c (lab 11)
int heap_grow(struct proc *p, uintptr_t new);
int heap_overlaps(struct proc *p, uintptr_t start, size_t npages);
int lazy_fault(pagetable_t pt, uintptr_t va);

// vmprint.c
void vmprint(pagetable_t pt);

// spinlock.c
struct spinlock;
void initlock(struct spinlock *lk, const char *name);
void acquire(struct spinlock *lk);
void release(struct spinlock *lk);
int holding(struct spinlock *lk);
void push_off(void);
void pop_off(void);

// smp.c
extern struct spinlock kernel_lock;
void smp_start_harts(void);
void tlb_shootdown(struct proc *p);
void smp_kick(struct proc *t);

// proc.c
struct proc *myproc(void);
struct proc *myprocess(void);
void procinit(void);
struct proc *allocslot(void);
struct proc *allocproc(void);
void freeproc(struct proc *p);
pagetable_t proc_pagetable(struct proc *p);
void proc_freepagetable(pagetable_t pt);
void userinit(void);
int fork(void);
void exit(int status) __attribute__((noreturn));
int waitpid(int pid, uintptr_t status_addr);
int getppid(void);
void inherit_files(struct proc *np, struct proc *p);
void sleep(void *chan);
int sleep_intr(void *chan);
int wait_interrupted(void);
void wakeup(void *chan);
struct proc *wakeup_one(void *chan);
long growproc(long n);
void sched(void);
void yield(void);
void scheduler(void) __attribute__((noreturn));

// procdump.c
void procdump(void);

// thread.c
int thread_create(uintptr_t entry, uintptr_t arg);
void thread_exit(int status) __attribute__((noreturn));
void exit_group(int status) __attribute__((noreturn));
void end_other_threads(struct proc *p);
void thread_leave_if_exiting(void);
int waittid(int tid);
int lone_thread(struct proc *p);

// sync.c
void sync_thread_exit(struct proc *t);

// sched.c
struct proc *sched_pick(void);
void sched_charge(struct proc *p);
void sched_newproc(struct proc *p);

// signal.c
int kill(int pid, int sig);
int signal_interrupts(struct proc *p);
void signal_deliver(void);
int signal_return(struct proc *p);
void signal_fork(struct proc *child, struct proc *parent);
void signal_exec(struct proc *p);

// taskinfo.c
void taskinfo_count(struct proc *p, uintptr_t num);
void taskinfo_start(struct proc *p);

// swtch.S
void swtch(struct context *old, struct context *new);

// exec.c
struct args *args_alloc(void);
int args_add(struct args *a, const char *s);
int args_copyin(struct args *a, pagetable_t pt, uintptr_t uargv);
void args_free(struct args *a);
const char *args_argv0(struct args *a);
int exec_load(struct proc *p, const char *path, struct args *a);

// initrd.c
void initrd_init(uintptr_t start, uintptr_t end);
int initrd_count(void);
int initrd_find(const char *name, const uint8_t **data, size_t *size);

// trap.c
void trapinit(void);
void timerinit(void);
void timer_wake_by(uint64_t when);
int timer_enabled(void);
void usertrapret(void) __attribute__((noreturn));
void return_to_user(struct proc *p, int locked) __attribute__((noreturn));

// syscall.c
void syscall(void);

// sysproc.c
int fetchargs(uintptr_t upath, uintptr_t uargv, char *path, struct args **out);

#endif // DEFS_H
