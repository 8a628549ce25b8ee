// user.h: everything a user program can call: the system calls (generated from
// kernel/syscall.tbl into syscalls.h), the shared ABI structures (abi.h) and the
// user library (userland/lib/).
#ifndef USER_H
#define USER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef long ssize_t;

#include "abi.h"
#include "platform.h"
#include "syscalls.h"

#define STDIN  0
#define STDOUT 1
#define STDERR 2

// lib/printf.c
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int fprintf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

// lib/malloc.c
void *malloc(size_t n);
void free(void *p);

// lib/string.c
void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strcpy(char *dst, const char *src);
char *strchr(const char *s, int c);
char *strrchr(const char *s, int c);      // the last c in s, or NULL
char *strstr(const char *hay, const char *needle);  // first occurrence, or NULL
long atol(const char *s);
int atoi(const char *s);

// lib/testsel.c
int test_selected(const char *name, int argc, char **argv);  // a case asked for?
int refuse_unknown_cases(const char *prog, int argc, char **argv,   // 1: a word names no case
                         const char *(*name)(unsigned), unsigned n);

// lib/ulib.c
int wait(int *status);                   // any child: waitpid(-1, status)
int getchar(void);                       // one byte from the console
char *gets(char *buf, int max);          // a line, with the newline
uint64_t time_ms(void);                  // ms since boot: get_time's clock, which
                                         // task_info's time counts too (kernel/clock.c)
void sleep_ms(uint64_t ms);              // yield until that much time has passed
void srand(uint64_t seed);
uint64_t rand64(void);                   // xorshift64*: same seed, same sequence
long syscall(long n, long a0, long a1, long a2, long a3, long a4, long a5);

// lib/files.c: the classic forms of the file-system calls. Each returns -1 on error.
int open(const char *path, int flags);   // openat(path, flags, 0)
int mkdir(const char *path);
int unlink(const char *path);            // a file's name, or an empty directory
int link(const char *oldpath, const char *newpath);
int pipe(int fds[2]);                    // fds[0] reads what fds[1] writes
int stat(const char *path, struct stat *st);  // open + fstat + close
int open_for_reading(const char *prog, const char *path);  // not a directory; says
                                                           // "prog: path: ..." on failure

// lib/linereader.c: a file descriptor read a buffer at a time, handed out by lines.
struct linereader {
  int fd;
  int pos, len;    // buf[pos..len) not handed out yet
  int error;       // a read() failed (lr_getline then reports end of input)
  char buf[512];
};
void lr_init(struct linereader *lr, int fd);
int lr_getline(struct linereader *lr, char *line, int max);  // length; 0 at the end

// Addresses a user program can never touch (kernel/memlayout.h), for hostile tests.
#define KERNEL_ADDR ((uintptr_t)PLATFORM_KERNEL_BASE)
#if __riscv_xlen == 64
#define TRAPFRAME_ADDR 0x3FFFFFE000UL  // TRAPFRAME in kernel/memlayout.h
#else
#define TRAPFRAME_ADDR 0xFFFFE000UL
#endif

#endif // USER_H
