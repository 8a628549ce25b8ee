// sysfile.c: read and write, on the console only: fd 0 is input, fds 1 and 2 output.
#include "defs.h"
#include "memlayout.h"
#include "proc.h"
#include "riscv.h"

#define STDIN  0
#define STDOUT 1
#define STDERR 2

// Is every byte of [va, va+len) in mapped user pages with perm?
static int user_range_ok(pagetable_t pt, uintptr_t va, size_t len, int perm) {
  if (va + len < va)
    return 0;
  for (uintptr_t a = PGROUNDDOWN(va); len > 0 && a < va + len; a += PGSIZE)
    if (walkaddr(pt, a, perm) == 0)
      return 0;
  return 1;
}

// write(fd, buf, len): all of buf must be readable user memory, else -1 and nothing
// is written. Returns len.
long sys_write(int fd, uintptr_t buf, size_t len) {
  pagetable_t pt = myproc()->pagetable;
  char chunk[128];
  if ((fd != STDOUT && fd != STDERR) || !user_range_ok(pt, buf, len, PTE_R))
    return -1;
  for (size_t done = 0; done < len;) {
    size_t n = len - done < sizeof(chunk) ? len - done : sizeof(chunk);
    copyin(pt, chunk, buf + done, n);  // cannot fail: checked above
    console_write(chunk, n);
    done += n;
  }
  return (long)len;
}

// read(fd, buf, len): wait for at least one byte, then return what has arrived (up
// to len, stopping after a newline). Waiting is a loop around yield(): the console
// raises no interrupt we could sleep on.
long sys_read(int fd, uintptr_t buf, size_t len) {
  pagetable_t pt = myproc()->pagetable;
  if (fd != STDIN || !user_range_ok(pt, buf, len, PTE_W))
    return -1;
  size_t got = 0;
  while (got < len) {
    int c = console_getc();
    if (c < 0) {
      if (got > 0)
        break;
      yield();
      continue;
    }
    char ch = (char)c;
    copyout(pt, buf + got++, &ch, 1);  // cannot fail: checked above, and only we change pt
    if (ch == '\n')
      break;
  }
  return (long)got;
}
