// console.c: the console as the kernel and sys_read/sys_write (sysfile.c) see it.
// All I/O goes through the firmware (sbi.c): the kernel maps no device.
#include "defs.h"

// DBCN takes physical addresses. Kernel stacks live at virtual addresses
// (KSTACK in memlayout.h), so data goes through this buffer in the kernel image,
// which is identity-mapped: its virtual address is its physical address.
static char bounce[128];

// Returns 0 if DBCN took all of it, -1 if the legacy path must be used.
static int dbcn_write(const char *buf, size_t n) {
  while (n > 0) {
    size_t chunk = n < sizeof(bounce) ? n : sizeof(bounce);
    memmove(bounce, buf, chunk);
    for (size_t sent = 0; sent < chunk;) {  // DBCN may write fewer bytes than asked
      long done = sbi_console_write(bounce + sent, chunk - sent);
      if (done <= 0)
        return -1;
      sent += (size_t)done;
    }
    buf += chunk, n -= chunk;
  }
  return 0;
}

void console_write(const char *buf, size_t n) {
  if (sbi_has_dbcn() && dbcn_write(buf, n) == 0)
    return;
  for (size_t i = 0; i < n; i++)
    sbi_putchar(buf[i]);
}

#define CTRL(x) ((x) - '@')

// The next input byte, or -1 if none has arrived. Carriage returns from a terminal
// become newlines. Ctrl-P prints the process table (procdump.c) and is not passed on:
// the reader gets the byte after it. Input is polled (the firmware's console raises no
// interrupt), so the key is seen when a process next reads the console.
int console_getc(void) {
  int c;
  while ((c = sbi_getchar()) == CTRL('P'))
    procdump();
  return c == '\r' ? '\n' : c;
}
