// lab_mmap MODE TOKEN ARGS...: the graded checks of lab 2 (mmap/munmap, mmap.c).
// Prints "PASS TOKEN" only if every check of MODE held (labs/mmap/).
//   rw TOKEN ADDR LEN      map LEN bytes read/write at ADDR: zeroed, writable, unmapped
//   readonly TOKEN ADDR    a PROT_READ page reads as zero; a child writing it is killed
//   writeonly TOKEN ADDR   a PROT_WRITE page (W without R, a reserved encoding): system
//                          calls refuse it, and a child storing to or loading from it dies
//   errors TOKEN ADDR      bad requests give -1 and change nothing
//   unmap TOKEN ADDR       unmapping the middle page of three: a child touching it dies
//   reuse TOKEN MIB ROUNDS map, touch and unmap MIB MiB ROUNDS times (frames come back)
//   fork TOKEN ADDR        a child gets a copy of a mapping
#include "user.h"

#define PAGE 4096

static int fail(const char *why) {
  printf("FAIL: %s\n", why);
  return 1;
}

static int child_status(void (*fn)(char *), char *addr) {
  int pid = fork(), status = 0;
  if (pid == 0) {
    fn(addr);
    exit(0);
  }
  if (pid < 0 || waitpid(pid, &status) != pid)
    return -100;
  return status;
}

static void store(char *p) { *(volatile char *)p = 1; }
static void load(char *p) { exit(*(volatile char *)p == 0 ? 0 : 1); }

static int rw(char *addr, long len) {
  if (mmap(addr, len, PROT_READ | PROT_WRITE) != 0)
    return fail("mmap(ADDR, LEN, PROT_READ|PROT_WRITE) did not return 0");
  long pages = (len + PAGE - 1) / PAGE;
  for (long i = 0; i < pages * PAGE; i++)
    if (addr[i] != 0)
      return fail("mapped memory is not zeroed");
  for (long i = 0; i < pages * PAGE; i += 64)
    addr[i] = (char)(i / 64 + 1);
  for (long i = 0; i < pages * PAGE; i += 64)
    if (addr[i] != (char)(i / 64 + 1))
      return fail("mapped memory did not keep what was written");
  if (munmap(addr, len) != 0)
    return fail("munmap of the mapping did not return 0");
  if (child_status(load, addr) != EXIT_KILLED)
    return fail("reading unmapped memory did not kill the child");
  return 0;
}

static int readonly(char *addr) {
  if (mmap(addr, PAGE, PROT_READ) != 0)
    return fail("mmap(ADDR, 4096, PROT_READ) did not return 0");
  if (child_status(load, addr) != 0)
    return fail("a PROT_READ page is not readable");
  if (child_status(store, addr) != EXIT_KILLED)
    return fail("writing a PROT_READ page did not kill the child");
  return munmap(addr, PAGE) == 0 ? 0 : fail("munmap failed");
}

// PROT_WRITE alone is mapped as asked, W without R: the hart faults on every access
// to such a page, so the kernel must not read or write it for us either.
static int writeonly(char *addr) {
  struct timeval *tv = (struct timeval *)addr;
  if (mmap(addr, PAGE, PROT_WRITE) != 0)
    return fail("mmap(ADDR, 4096, PROT_WRITE) did not return 0");
  if (write(STDOUT, addr, 16) != -1)
    return fail("write() from a PROT_WRITE page did not return -1");
  if (get_time(tv, 0) != -1)
    return fail("get_time() into a PROT_WRITE page did not return -1");
  if (read(STDIN, addr, 1) != -1)
    return fail("read() into a PROT_WRITE page did not return -1");
  if (child_status(store, addr) != EXIT_KILLED)
    return fail("storing to a PROT_WRITE page did not kill the child");
  if (child_status(load, addr) != EXIT_KILLED)
    return fail("loading from a PROT_WRITE page did not kill the child");
  return munmap(addr, PAGE) == 0 ? 0 : fail("munmap of a PROT_WRITE page did not return 0");
}

static int errors(char *addr) {
  int bad = 0;
  bad += mmap(addr + 1, PAGE, PROT_READ) != -1;              // not page-aligned
  bad += mmap(addr, PAGE, 0) != -1;                           // no permission
  bad += mmap(addr, PAGE, 8 | PROT_READ) != -1;               // unknown bit
  bad += mmap((void *)0x10000, PAGE, PROT_READ) != -1;        // our own text
  bad += mmap((void *)TRAPFRAME_ADDR, PAGE, PROT_READ) != -1; // above user space
  bad += munmap(addr, PAGE) != -1;                            // not mapped
  if (bad)
    return fail("a bad mmap/munmap did not return -1");
  if (mmap(addr, PAGE, PROT_READ | PROT_WRITE) != 0)
    return fail("a good mmap did not return 0");
  addr[0] = 9;
  bad += mmap(addr, 2 * PAGE, PROT_READ) != -1;               // overlaps
  bad += mmap(addr - PAGE, 2 * PAGE, PROT_READ) != -1;        // overlaps from below
  bad += munmap(addr, 2 * PAGE) != -1;                        // half not mapped
  if (bad)
    return fail("an overlapping request did not return -1");
  if (addr[0] != 9)
    return fail("a failed request changed the existing mapping");
  return munmap(addr, PAGE) == 0 ? 0 : fail("munmap failed");
}

static int unmap(char *addr) {
  if (mmap(addr, 3 * PAGE, PROT_READ | PROT_WRITE) != 0)
    return fail("mmap of three pages failed");
  addr[0] = addr[PAGE] = addr[2 * PAGE] = 3;
  if (munmap(addr + PAGE, PAGE) != 0)
    return fail("munmap of the middle page failed");
  if (child_status(load, addr + PAGE) != EXIT_KILLED)
    return fail("reading the unmapped middle page did not kill the child");
  if (addr[0] != 3 || addr[2 * PAGE] != 3)
    return fail("the pages around the hole changed");
  if (munmap(addr, 3 * PAGE) != -1)
    return fail("munmap over the hole did not return -1");
  return munmap(addr, PAGE) == 0 && munmap(addr + 2 * PAGE, PAGE) == 0 ? 0
                                                                        : fail("cleanup failed");
}

static int reuse(long mib, long rounds) {
  char *addr = (char *)0x20000000;
  for (long r = 0; r < rounds; r++) {
    if (mmap(addr, mib << 20, PROT_READ | PROT_WRITE) != 0) {
      printf("FAIL: round %ld: mmap failed (were the frames freed?)\n", r);
      return 1;
    }
    addr[0] = addr[(mib << 20) - 1] = 1;
    if (munmap(addr, mib << 20) != 0)
      return fail("munmap failed");
  }
  return 0;
}

static int forked(char *addr) {
  if (mmap(addr, PAGE, PROT_READ | PROT_WRITE) != 0)
    return fail("mmap failed");
  addr[7] = 7;
  int pid = fork(), status = -1;
  if (pid == 0) {
    int ok = addr[7] == 7;
    addr[7] = 8;
    exit(ok ? 0 : 1);
  }
  if (pid < 0 || waitpid(pid, &status) != pid || status != 0)
    return fail("the child did not see the mapping");
  return addr[7] == 7 ? 0 : fail("the child's write reached the parent");
}

int main(int argc, char **argv) {
  if (argc < 3)
    return fail("usage: lab_mmap MODE TOKEN ARGS...");
  const char *mode = argv[1];
  long a = argc > 3 ? atol(argv[3]) : 0, b = argc > 4 ? atol(argv[4]) : 0;
  char *addr = (char *)a;
  int r;
  if (strcmp(mode, "rw") == 0)
    r = rw(addr, b);
  else if (strcmp(mode, "readonly") == 0)
    r = readonly(addr);
  else if (strcmp(mode, "writeonly") == 0)
    r = writeonly(addr);
  else if (strcmp(mode, "errors") == 0)
    r = errors(addr);
  else if (strcmp(mode, "unmap") == 0)
    r = unmap(addr);
  else if (strcmp(mode, "reuse") == 0)
    r = reuse(a, b);
  else if (strcmp(mode, "fork") == 0)
    r = forked(addr);
  else
    return fail("unknown mode");
  if (r == 0)
    printf("PASS %s\n", argv[2]);
  return r;
}
