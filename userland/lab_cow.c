// lab_cow MODE TOKEN ARGS...: the graded checks of lab 10 (copy-on-write fork, cow.c).
// Prints "PASS TOKEN" only if every check of MODE held (labs/cow/). Each getppid()
// call is a checkpoint, where the grader stops the machine and reads the page tables
// itself (the program needs getppid for nothing else).
//   share TOKEN PAGES      fork shares PAGES heap pages and the text; the child's store
//                          copies one page; the parent's store, once the child has
//                          exited, copies nothing (it is the frame's last owner)
//   readonly TOKEN ADDR    after fork, a store to the text, or to a PROT_READ page at
//                          ADDR, still kills the child
//   copyout TOKEN          read() and get_time() into shared pages (the kernel's own
//                          stores) give the child copies; the parent's pages stay
//   big TOKEN MIB ROUNDS   fork, ROUNDS times, a process using MIB MiB: two copies would
//                          not fit in RAM, shared pages do (and their frames come back)
//   oom TOKEN MIB          a child storing to every page of MIB MiB runs out of memory:
//                          it alone is killed, and the parent's pages are intact
//   three TOKEN MIB        three generations share MIB MiB and each writes a part
//   readers TOKEN N        N children each read() from a pipe into the same shared
//                          buffer; nobody sees another's data
//   exec TOKEN PAGES       a child that execs lets go of its shares: the parent's store
//                          then copies nothing
//   mixed TOKEN PAGES      fork with half the heap not touched yet (lazy allocation,
//                          lab 11): touched pages are shared, the others stay unmapped
//   threads TOKEN PAGES    after fork, a thread of the parent stores to every page: the
//                          copies are the whole process's, the child keeps the old bytes
#include "user.h"

#define PAGE 4096

static int fail(const char *why) {
  printf("FAIL: %s\n", why);
  return 1;
}

static void checkpoint(void) { getppid(); }

static char *grow(long bytes) {
  long old = sbrk(bytes);
  return old == -1 ? 0 : (char *)old;
}

static char pattern(long page, int generation) { return (char)('a' + (page + generation) % 26); }

static void fill(char *heap, long pages, int generation) {
  for (long i = 0; i < pages; i++)
    memset(heap + i * PAGE, pattern(i, generation), PAGE);
}

// Does every byte of pages [from, to) of the heap still hold generation's pattern?
// (A word at a time: the big modes check megabytes, on RV32 too.)
static int holds(const char *heap, long from, long to, int generation) {
  for (long i = from; i < to; i++) {
    uintptr_t want = (uintptr_t)(uint8_t)pattern(i, generation) * ((uintptr_t)-1 / 0xff);
    const uintptr_t *w = (const uintptr_t *)(heap + i * PAGE);
    for (unsigned long j = 0; j < PAGE / sizeof(uintptr_t); j++)
      if (w[j] != want)
        return 0;
  }
  return 1;
}

static int waited(int pid) {
  int status = -100;
  if (pid < 0 || waitpid(pid, &status) != pid)
    return -100;
  return status;
}

static int share(long pages) {
  char *heap = grow(pages * PAGE);
  if (heap == 0)
    return fail("sbrk failed");
  fill(heap, pages, 0);
  int pid = fork();
  if (pid == 0) {
    checkpoint();      // 1: every page shared, none writable
    heap[0] = 'C';     // a store page fault: the child gets a copy of page 0
    checkpoint();      // 2: page 0 is the child's own
    int ok = heap[0] == 'C' && holds(heap, 1, pages, 0);
    for (long j = 1; j < PAGE; j++)
      ok = ok && heap[j] == pattern(0, 0);  // the copy kept the rest of the page
    exit(ok ? 0 : 1);
  }
  if (pid < 0)
    return fail("fork failed");
  if (waited(pid) != 0)
    return fail("the child did not see the parent's pages, or its copy lost their contents");
  if (!holds(heap, 0, pages, 0))
    return fail("the child's store reached the parent's page");
  heap[0] = 'P';       // the frame's last owner: PTE_W back, no copy
  checkpoint();        // 3
  return heap[0] == 'P' && holds(heap, 1, pages, 0) ? 0 : fail("the parent's store was lost");
}

static void store_to(volatile char *p) {
  *p = 1;
  exit(0);  // not reached: the store kills
}

static int readonly(char *addr) {
  char *heap = grow(PAGE);
  volatile char *text = (volatile char *)(uintptr_t)store_to;
  char first = *text;
  if (heap == 0 || mmap(addr, PAGE, PROT_READ) != 0)
    return fail("sbrk or mmap(ADDR, 4096, PROT_READ) failed");
  heap[0] = 1;
  int pid = fork();
  if (pid == 0) {
    checkpoint();      // 1: the text and the heap page shared
    heap[0] = 2;       // a COW page: copied, and the child goes on
    store_to(text);    // our own text: read-only, not COW
  }
  if (waited(pid) != EXIT_KILLED)
    return fail("a store to the text after fork did not kill the child");
  if ((pid = fork()) == 0)
    store_to(addr);    // a PROT_READ page
  if (waited(pid) != EXIT_KILLED)
    return fail("a store to a PROT_READ page after fork did not kill the child");
  if (*text != first || addr[0] != 0 || heap[0] != 1)
    return fail("the parent's pages changed");
  return munmap(addr, PAGE) == 0 ? 0 : fail("munmap failed");
}

static const char message[] = "copied out by the kernel";
#define MSG (sizeof(message) - 1)

static int copyout(void) {
  char *buf = grow(2 * PAGE);
  int fds[2];
  if (buf == 0 || pipe(fds) < 0)
    return fail("sbrk or pipe failed");
  memset(buf, 'p', 2 * PAGE);
  int pid = fork();
  if (pid == 0) {
    close(fds[1]);
    checkpoint();      // 1: both pages shared
    struct timeval *tv = (struct timeval *)(buf + PAGE);
    long n = read(fds[0], buf, MSG);
    int ok = n == (long)MSG && memcmp(buf, message, MSG) == 0 && buf[MSG] == 'p';
    ok = ok && get_time(tv, 0) == 0 && tv->usec < 1000000;
    checkpoint();      // 2: the kernel's stores gave the child both pages
    exit(ok ? 0 : 1);
  }
  if (pid < 0)
    return fail("fork failed");
  close(fds[0]);
  if (write(fds[1], message, MSG) != (long)MSG)
    return fail("write to the pipe failed");
  if (waited(pid) != 0)
    return fail("read() or get_time() into a shared page failed in the child");
  for (long i = 0; i < 2 * PAGE; i++)
    if (buf[i] != 'p')
      return fail("the kernel's store for the child reached the parent's page");
  return 0;
}

static int big(long mib, long rounds) {
  long pages = (mib << 20) / PAGE;
  for (long r = 0; r < rounds; r++) {
    char *heap = grow(pages * PAGE);
    if (heap == 0)
      return fail("sbrk failed");
    fill(heap, pages, (int)r);
    int pid = fork();
    if (pid == 0) {
      heap[0] = 'C';
      exit(heap[PAGE] == pattern(1, (int)r) && heap[(pages - 1) * PAGE] ==
           pattern(pages - 1, (int)r) ? 0 : 1);
    }
    if (pid < 0) {
      printf("FAIL: round %ld: fork of a process using %ld MiB failed (two copies do not "
             "fit in RAM)\n", r, mib);
      return 1;
    }
    if (waited(pid) != 0)
      return fail("the child did not see the parent's memory");
    if (!holds(heap, 0, pages, (int)r))
      return fail("the parent's memory changed");
    if (sbrk(-pages * PAGE) == -1)
      return fail("sbrk(-n) failed");
  }
  return 0;
}

static int oom(long mib) {
  long pages = (mib << 20) / PAGE;
  char *heap = grow(pages * PAGE);
  if (heap == 0)
    return fail("sbrk failed");
  fill(heap, pages, 0);
  int pid = fork();
  if (pid == 0) {
    for (long i = 0; i < pages; i++)
      heap[i * PAGE] = 'C';  // one copy per page, until no frame is left
    exit(0);
  }
  if (pid < 0)
    return fail("fork failed");
  int status = waited(pid);
  if (status == 0)
    return fail("the child copied every page: the test needs a bigger heap");
  if (status != EXIT_KILLED)
    return fail("the child that ran out of memory did not exit with EXIT_KILLED");
  if (!holds(heap, 0, pages, 0))
    return fail("the parent's pages changed");
  fill(heap, pages, 1);      // the last owner of every frame again: no copies needed
  checkpoint();              // 1
  return holds(heap, 0, pages, 1) ? 0 : fail("the parent's stores were lost");
}

static int three(long mib) {
  long pages = (mib << 20) / PAGE, quarter = pages / 4;
  char *heap = grow(pages * PAGE);
  if (heap == 0)
    return fail("sbrk failed");
  fill(heap, pages, 0);
  int pid = fork();
  if (pid == 0) {
    int grandchild = fork();
    if (grandchild == 0) {
      fill(heap, quarter, 2);  // its own copies of the first quarter
      exit(holds(heap, 0, quarter, 2) && holds(heap, quarter, pages, 0) ? 0 : 1);
    }
    if (waited(grandchild) != 0)
      exit(2);
    fill(heap + quarter * PAGE, quarter, 1);
    exit(holds(heap, 0, quarter, 0) && holds(heap + quarter * PAGE, 0, quarter, 1) &&
         holds(heap, 2 * quarter, pages, 0) ? 0 : 3);
  }
  int status = waited(pid);
  if (status != 0) {
    printf("FAIL: the child or the grandchild saw the wrong memory (status %d)\n", status);
    return 1;
  }
  if (!holds(heap, 0, pages, 0))
    return fail("a descendant's stores reached the parent");
  fill(heap, pages, 3);
  return holds(heap, 0, pages, 3) ? 0 : fail("the parent's stores were lost");
}

static int readers(long n) {
  char *buf = grow(PAGE);
  int fds[16][2], pids[16];
  if (buf == 0 || n < 1 || n > 16)
    return fail("sbrk failed, or N is not 1..16");
  memset(buf, '-', PAGE);
  for (long i = 0; i < n; i++) {
    if (pipe(fds[i]) < 0)
      return fail("pipe failed");
    if ((pids[i] = fork()) == 0) {
      char want[16];
      memset(want, 'A' + (int)i, sizeof(want));
      close(fds[i][1]);
      long got = 0;
      for (long r; got < (long)sizeof(want); got += r)
        if ((r = read(fds[i][0], buf + got, sizeof(want) - got)) <= 0)
          exit(1);
      exit(memcmp(buf, want, sizeof(want)) == 0 && buf[sizeof(want)] == '-' ? 0 : 2);
    }
    if (pids[i] < 0)
      return fail("fork failed");
    close(fds[i][0]);
  }
  for (long i = n - 1; i >= 0; i--) {  // the last child first: all are waiting by then
    char msg[16];
    memset(msg, 'A' + (int)i, sizeof(msg));
    if (write(fds[i][1], msg, sizeof(msg)) != (long)sizeof(msg))
      return fail("write to a pipe failed");
    close(fds[i][1]);
  }
  for (long i = 0; i < n; i++)
    if (waited(pids[i]) != 0)
      return fail("a child read another's data, or its read() into a shared page failed");
  for (long i = 0; i < PAGE; i++)
    if (buf[i] != '-')
      return fail("a child's read() reached the parent's page");
  return 0;
}

static int exec_child(long pages) {
  char *heap = grow(pages * PAGE);
  if (heap == 0)
    return fail("sbrk failed");
  fill(heap, pages, 0);
  int pid = fork();
  if (pid == 0) {
    char *argv[] = {"hello", "exec", NULL};
    exec("hello", argv);
    exit(99);
  }
  if (waited(pid) != 0)
    return fail("the child's exec of hello failed");
  fill(heap, pages, 1);  // the child's exec let go of every share: no copies
  checkpoint();          // 1
  return holds(heap, 0, pages, 1) ? 0 : fail("the parent's stores were lost");
}

static int mixed(long pages) {
  char *heap = grow(pages * PAGE);
  if (heap == 0)
    return fail("sbrk failed");
  for (long i = 0; i < pages; i += 2)
    memset(heap + i * PAGE, pattern(i, 0), PAGE);  // the even pages only
  int pid = fork();
  if (pid == 0) {
    checkpoint();        // 1: even pages shared, odd pages mapped in neither
    int ok = 1;
    for (long i = 0; i < pages; i++) {
      ok = ok && heap[i * PAGE + 1] == (i % 2 ? 0 : pattern(i, 0));
      heap[i * PAGE] = 'C';  // a copy of each even page, a fresh page for each odd one
    }
    checkpoint();        // 2
    exit(ok ? 0 : 1);
  }
  if (waited(pid) != 0)
    return fail("the child saw the wrong memory");
  for (long i = 0; i < pages; i++)
    if (heap[i * PAGE] != (i % 2 ? 0 : pattern(i, 0)))
      return fail("the child's stores reached the parent");
  return 0;
}

static char *thread_heap;
static long thread_pages;

static int store_all(void *arg) {
  (void)arg;
  fill(thread_heap, thread_pages, 1);
  return 0;
}

static int threads(long pages) {
  thread_pages = pages;
  int go[2], ready[2];
  char c;
  if ((thread_heap = grow(pages * PAGE)) == 0 || pipe(go) < 0 || pipe(ready) < 0)
    return fail("sbrk or pipe failed");
  fill(thread_heap, pages, 0);
  int pid = fork();
  if (pid == 0) {
    checkpoint();                  // 1: every page shared
    if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
      exit(1);                     // the parent's thread has stored by now
    exit(holds(thread_heap, 0, pages, 0) ? 0 : 2);
  }
  if (pid < 0 || read(ready[0], &c, 1) != 1)
    return fail("fork failed");
  int tid = thread_create(store_all, 0);
  if (tid < 0 || waittid(tid) != 0)
    return fail("thread_create or waittid failed");
  checkpoint();                    // 2: the parent's pages are its own
  if (!holds(thread_heap, 0, pages, 1))
    return fail("the main thread does not see its thread's stores");
  if (write(go[1], "g", 1) != 1 || waited(pid) != 0)
    return fail("the parent's thread's stores reached the child");
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return fail("usage: lab_cow MODE TOKEN ARGS...");
  const char *mode = argv[1];
  long a = argc > 3 ? atol(argv[3]) : 0, b = argc > 4 ? atol(argv[4]) : 0;
  int r;
  if (strcmp(mode, "share") == 0)
    r = share(a);
  else if (strcmp(mode, "readonly") == 0)
    r = readonly((char *)a);
  else if (strcmp(mode, "copyout") == 0)
    r = copyout();
  else if (strcmp(mode, "big") == 0)
    r = big(a, b);
  else if (strcmp(mode, "oom") == 0)
    r = oom(a);
  else if (strcmp(mode, "three") == 0)
    r = three(a);
  else if (strcmp(mode, "readers") == 0)
    r = readers(a);
  else if (strcmp(mode, "exec") == 0)
    r = exec_child(a);
  else if (strcmp(mode, "mixed") == 0)
    r = mixed(a);
  else if (strcmp(mode, "threads") == 0)
    r = threads(a);
  else
    return fail("unknown mode");
  if (r == 0)
    printf("PASS %s\n", argv[2]);
  return r;
}
