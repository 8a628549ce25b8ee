// lab_lazy MODE TOKEN ARGS...: the graded checks of lab 11 (lazy heap allocation,
// lazy.c). Prints "PASS TOKEN" only if every check of MODE held (labs/lazy/). Each
// getppid() call is a checkpoint, where the grader stops the machine and reads the
// page tables itself (the program needs getppid for nothing else).
//   touch TOKEN PAGES LOAD STORE  sbrk(PAGES pages) maps nothing; a load from page LOAD
//                                 and a store to page STORE map those two, zeroed
//   outside TOKEN PAGES           loads and stores outside [heap start, brk) still kill:
//                                 past the heap's last page, further up, the stack's
//                                 guard page, a page sbrk(-n) gave back
//   shrink TOKEN PAGES ROUNDS     sbrk(-n) unmaps the pages touched (every other one),
//                                 skipping the others; the frames come back and the
//                                 heap grows again, lazily and zeroed
//   fork TOKEN PAGES              fork gives the child the pages touched, and only those;
//                                 the child's untouched pages are lazy too
//   syscalls TOKEN                pipe2(), read(), write() and get_time() given heap
//                                 memory nobody has touched yet
//   oom TOKEN MIB RAM_MIB         sbrk of more than RAM fails; touching MIB MiB of heap,
//                                 more than is free, kills the child, saying so
//   sparse TOKEN MIB              a heap bigger than the free memory, touched once a MiB
//   forkfirst TOKEN PAGES         fork before touching anything: each process's stores
//                                 map its own pages (with copy-on-write, lab 10, too)
//   threads TOKEN PAGES           two threads touch the process's heap, one of them
//                                 through read(): the heap is the process's, not a thread's
#include "user.h"

#define PAGE 4096
#define PAGE_UP(a) (((uintptr_t)(a) + PAGE - 1) & ~(uintptr_t)(PAGE - 1))

static int fail(const char *why) {
  printf("FAIL: %s\n", why);
  return 1;
}

static void checkpoint(void) { getppid(); }

static char *grow(long bytes) {
  long old = sbrk(bytes);
  return old == -1 ? 0 : (char *)old;
}

static int zeroed(const char *p, long n) {
  for (long i = 0; i < n; i++)
    if (p[i] != 0)
      return 0;
  return 1;
}

static int waited(int pid) {
  int status = -100;
  if (pid < 0 || waitpid(pid, &status) != pid)
    return -100;
  return status;
}

static int touch(long pages, long load, long store) {
  char *heap = grow(pages * PAGE);
  if (heap == 0)
    return fail("sbrk failed");
  checkpoint();                                   // 1: nothing of the heap mapped
  if (sbrk(0) != (long)heap + pages * PAGE)
    return fail("sbrk(0) after sbrk(n) is not the old end + n");
  char seen = *(volatile char *)(heap + load * PAGE + 5);  // a load page fault
  heap[store * PAGE + 7] = 42;                    // a store page fault
  checkpoint();                                   // 2: those two pages only
  if (seen != 0 || !zeroed(heap + load * PAGE, load == store ? 7 : PAGE))
    return fail("a page mapped on demand is not zeroed");
  if (heap[store * PAGE + 7] != 42 || !zeroed(heap + store * PAGE + 8, PAGE - 8))
    return fail("a store to a page mapped on demand was lost");
  return 0;
}

static int load_from(volatile char *p) { exit(*p == 0 ? 0 : 1); }
static int store_to(volatile char *p) {
  *p = 1;
  exit(0);
}

static int recurse(int n) {
  volatile char frame[512];
  frame[0] = (char)n;
  if (n > 1000000)  // never reached: the stack is 32 KiB
    return 0;
  return recurse(n + 1) + frame[0];
}

static int killed(int pid) { return waited(pid) == EXIT_KILLED; }

static int outside(long pages) {
  long size = pages * PAGE + 100;  // the heap ends inside a page
  char *heap = grow(size);
  if (heap == 0)
    return fail("sbrk failed");
  char *past = (char *)PAGE_UP(heap + size);  // the first page that is not the heap's
  checkpoint();                               // 1: nothing mapped
  int pid = fork();
  if (pid == 0)
    load_from(heap + size - 1);               // the heap's last byte: fine
  if (waited(pid) != 0)
    return fail("a load from the heap's last byte did not work");
  if ((pid = fork()) == 0)
    load_from(past);
  if (!killed(pid))
    return fail("a load from the page just past the heap did not kill the child");
  if ((pid = fork()) == 0)
    store_to(past + 5 * PAGE);
  if (!killed(pid))
    return fail("a store above the heap did not kill the child");
  if ((pid = fork()) == 0)
    exit(recurse(0));
  if (!killed(pid))
    return fail("running into the stack's guard page did not kill the child");
  if ((pid = fork()) == 0) {
    heap[0] = 1;
    if (sbrk(-size) != (long)heap + size)
      exit(2);
    load_from(heap);                          // given back: no longer the heap's
  }
  if (!killed(pid))
    return fail("a load from a page sbrk(-n) gave back did not kill the child");
  return 0;
}

static int shrink(long pages, long rounds) {
  for (long r = 0; r < rounds; r++) {
    char *heap = grow(pages * PAGE);
    if (heap == 0) {
      printf("FAIL: round %ld: sbrk failed\n", r);
      return 1;
    }
    checkpoint();                             // 2r + 1: nothing mapped yet
    for (long i = 0; i < pages; i++) {
      if (heap[i * PAGE + 3] != 0) {
        printf("FAIL: round %ld: a page the heap grew again into is not zeroed\n", r);
        return 1;
      }
      if (i % 2 == 0)
        memset(heap + i * PAGE, (int)r + 1, PAGE);  // map and fill every other page
    }
    if (sbrk(-pages * PAGE) != (long)heap + pages * PAGE)
      return fail("sbrk(-n) did not return the old end");
    checkpoint();                             // 2r + 2: nothing mapped any more
  }
  return 0;
}

static int forked(long pages) {
  char *heap = grow(pages * PAGE);
  if (heap == 0)
    return fail("sbrk failed");
  for (long i = 0; i < pages; i += 2)
    heap[i * PAGE] = (char)(i + 1);           // the even pages only
  int pid = fork();
  if (pid == 0) {
    checkpoint();                             // 1: the parent's even pages, no others
    int ok = 1;
    for (long i = 0; i < pages; i += 2)
      ok = ok && heap[i * PAGE] == (char)(i + 1);
    ok = ok && heap[PAGE + 9] == 0;           // an odd page: mapped now, zeroed
    heap[PAGE] = 'c';
    checkpoint();                             // 2: page 1 is the child's alone
    exit(ok ? 0 : 1);
  }
  if (waited(pid) != 0)
    return fail("the child did not see the parent's heap");
  return heap[PAGE] == 0 ? 0 : fail("the child's store reached the parent");
}

static const char message[] = "through a pipe";
#define MSG (sizeof(message) - 1)

static int syscalls(void) {
  char *heap = grow(4 * PAGE + 64);
  if (heap == 0)
    return fail("sbrk failed");
  char *past = (char *)PAGE_UP(heap + 4 * PAGE + 64);
  char got[16];
  uintptr_t *pair = (uintptr_t *)heap;
  checkpoint();                               // 1: nothing mapped
  if (pipe2(pair, 0) != 0)                    // copyout into page 0
    return fail("pipe2() into heap memory not touched yet did not return 0");
  if (write((int)pair[1], message, MSG) != (long)MSG)
    return fail("write to the pipe failed");
  if (read((int)pair[0], heap + PAGE, MSG) != (long)MSG ||  // copyout into page 1
      memcmp(heap + PAGE, message, MSG) != 0)
    return fail("read() into heap memory not touched yet did not work");
  if (write((int)pair[1], heap + 2 * PAGE, sizeof(got)) != (long)sizeof(got))  // copyin
    return fail("write() from heap memory not touched yet did not work");
  if (read((int)pair[0], got, sizeof(got)) != (long)sizeof(got) || !zeroed(got, sizeof(got)))
    return fail("heap memory not touched yet did not read as zeros");
  struct timeval *tv = (struct timeval *)(heap + 3 * PAGE + 8);
  if (get_time(tv, 0) != 0 || tv->usec >= 1000000)
    return fail("get_time() into heap memory not touched yet did not work");
  if (write(STDOUT, past, 8) != -1 || read(STDIN, past, 8) != -1 || get_time(
      (struct timeval *)past, 0) != -1)
    return fail("a system call given an address past the heap did not return -1");
  checkpoint();                               // 2: the four pages, not past
  return 0;
}

static int oom(long mib, long ram_mib) {
  if (sbrk((ram_mib + 1) << 20) != -1)
    return fail("sbrk of more than the machine's RAM did not return -1");
  long pages = (mib << 20) / PAGE;
  char *heap = grow(pages * PAGE);
  if (heap == 0)
    return fail("sbrk of less than the machine's RAM failed");
  checkpoint();                               // 1: nothing mapped
  int pid = fork();
  if (pid == 0) {
    for (long i = 0; i < pages; i++)
      heap[i * PAGE] = 1;                     // one frame a page, until none is left
    exit(0);
  }
  int status = waited(pid);
  if (status == 0)
    return fail("the child touched every page: the test needs a bigger heap");
  if (status != EXIT_KILLED)
    return fail("the child that ran out of memory did not exit with EXIT_KILLED");
  heap[pages * PAGE - 1] = 1;                 // the frames came back
  return sbrk(-pages * PAGE) == (long)heap + pages * PAGE ? 0 : fail("sbrk(-n) failed");
}

static int sparse(long mib) {
  char *heap = grow(mib << 20);
  if (heap == 0)
    return fail("sbrk of a heap larger than the free memory failed");
  for (long m = 0; m < mib; m++)
    heap[(m << 20) + m] = (char)(m + 1);
  for (long m = 0; m < mib; m++)
    if (heap[(m << 20) + m] != (char)(m + 1) || heap[(m << 20) + PAGE - 1] != 0)
      return fail("a sparse heap lost a store");
  return 0;
}

static int forkfirst(long pages) {
  char *heap = grow(pages * PAGE);
  if (heap == 0)
    return fail("sbrk failed");
  int pid = fork();
  if (pid == 0) {
    checkpoint();                             // 1: nothing mapped in either
    for (long i = 0; i < pages / 2; i++)
      heap[i * PAGE] = 'c';
    checkpoint();                             // 2: the first half, in the child only
    exit(0);
  }
  if (waited(pid) != 0)
    return fail("the child failed");
  for (long i = 0; i < pages; i++)
    if (heap[i * PAGE] != 0)
      return fail("the child's stores reached the parent");
  for (long i = 0; i < pages; i++)
    heap[i * PAGE] = 'p';
  if ((pid = fork()) == 0) {                  // now shared (copy-on-write) or copied
    heap[0] = 'd';
    exit(heap[PAGE] == 'p' ? 0 : 1);
  }
  if (waited(pid) != 0 || heap[0] != 'p')
    return fail("a second child saw the wrong heap");
  return 0;
}

static char *thread_heap;
static long thread_pages;

// Thread 1 stores to the first half of the heap; thread 2 reads the pipe into the
// first page of the second half and stores to the rest of it.
static int heap_worker(void *arg) {
  long half = thread_pages / 2, which = (long)(uintptr_t)arg;
  if (which == 1) {
    for (long i = 0; i < half; i++)
      thread_heap[i * PAGE] = (char)(i + 1);
    return 0;
  }
  int fds[2];
  if (pipe(fds) < 0 || write(fds[1], message, MSG) != (long)MSG ||
      read(fds[0], thread_heap + half * PAGE, MSG) != (long)MSG)
    return 1;
  for (long i = half + 1; i < thread_pages; i++)
    thread_heap[i * PAGE] = (char)(i + 1);
  return 0;
}

static int threads(long pages) {
  thread_pages = pages;
  if (pages < 4 || (thread_heap = grow(pages * PAGE)) == 0)
    return fail("sbrk failed, or PAGES < 4");
  checkpoint();                               // 1: nothing mapped
  int one = thread_create(heap_worker, (void *)1), two = thread_create(heap_worker, (void *)2);
  if (one < 0 || two < 0)
    return fail("thread_create failed");
  if (waittid(one) != 0 || waittid(two) != 0)
    return fail("a thread could not touch the heap, or read() into it failed");
  checkpoint();                               // 2: every page mapped
  long half = pages / 2;
  for (long i = 0; i < pages; i++)
    if (i != half && thread_heap[i * PAGE] != (char)(i + 1))
      return fail("a thread's store to the heap was lost");
  return memcmp(thread_heap + half * PAGE, message, MSG) == 0 ? 0
                                                              : fail("a thread's read was lost");
}

int main(int argc, char **argv) {
  if (argc < 3)
    return fail("usage: lab_lazy MODE TOKEN ARGS...");
  const char *mode = argv[1];
  long a = argc > 3 ? atol(argv[3]) : 0, b = argc > 4 ? atol(argv[4]) : 0;
  long c = argc > 5 ? atol(argv[5]) : 0;
  int r;
  if (strcmp(mode, "touch") == 0)
    r = touch(a, b, c);
  else if (strcmp(mode, "outside") == 0)
    r = outside(a);
  else if (strcmp(mode, "shrink") == 0)
    r = shrink(a, b);
  else if (strcmp(mode, "fork") == 0)
    r = forked(a);
  else if (strcmp(mode, "syscalls") == 0)
    r = syscalls();
  else if (strcmp(mode, "oom") == 0)
    r = oom(a, b);
  else if (strcmp(mode, "sparse") == 0)
    r = sparse(a);
  else if (strcmp(mode, "forkfirst") == 0)
    r = forkfirst(a);
  else if (strcmp(mode, "threads") == 0)
    r = threads(a);
  else
    return fail("unknown mode");
  if (r == 0)
    printf("PASS %s\n", argv[2]);
  return r;
}
