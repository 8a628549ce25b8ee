// lab_kalloc MODE TOKEN PROCS ROUNDS PAGES: the graded checks of lab 14 (locks: the
// frame allocator on several harts, kalloc.c). Prints "PASS TOKEN" only if every check
// of MODE held (labs/locks/).
//   stress   PROCS children at once, on as many harts as there are, each ROUNDS times:
//            grow the heap by PAGES pages, touch every one (a page fault each, which
//            the kernel serves without its kernel lock: kalloc runs on every hart at
//            once), check each page came zeroed, fill it with the child's own mark,
//            check every mark is still there, and give the pages back. Then the free
//            memory must be what it was before: no frame lost, none handed out twice.
//   contend  the same, then print the kmem locks' statistics (lockstat):
//            "kmem: N locks, A acquires, S spins".
//   exhaust  PROCS children at once grow their heaps PAGES pages at a time, touching
//            every page, until memory runs out: each hart's own list and share run dry
//            and every hart takes frames from the others', several at once, until no
//            hart has any. A child ends when sbrk fails or the kernel kills it for want
//            of a frame; then the free memory must be what it was before. (An
//            allocator that holds its own lock while it takes another's deadlocks
//            here: two harts stealing at once each wait for the other's lock.)
//            ROUNDS: how many times the whole run is repeated.
#include "user.h"

#define PAGE 4096

static int fail(const char *why) {
  printf("FAIL: %s\n", why);
  return 1;
}

// One child's work; its exit status says what went wrong (0: nothing).
static int child(int rounds, int pages) {
  uint64_t mark = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull;
  for (int r = 0; r < rounds; r++) {
    long old = sbrk((long)pages * PAGE);
    if (old == -1)
      return 2;
    uint64_t *base = (uint64_t *)old;
    for (int p = 0; p < pages; p++) {
      uint64_t *page = base + p * (PAGE / 8);
      if (page[0] != 0 || page[PAGE / 8 - 1] != 0)
        return 3;                       // a frame not zeroed: freed twice, or shared
      page[0] = page[PAGE / 8 - 1] = mark + (uint64_t)p;
    }
    for (int p = 0; p < pages; p++) {
      uint64_t *page = base + p * (PAGE / 8);
      if (page[0] != mark + (uint64_t)p || page[PAGE / 8 - 1] != mark + (uint64_t)p)
        return 4;                       // someone else was handed our frame
    }
    if (sbrk(-(long)pages * PAGE) == -1)
      return 5;
  }
  return 0;
}

// Exhaust mode's child: grow and touch until sbrk fails (then exit 0) or the kernel
// kills it at a page fault it has no frame for.
static int glutton(int pages) {
  for (;;) {
    long old = sbrk((long)pages * PAGE);
    if (old == -1)
      return 0;
    for (int p = 0; p < pages; p++)
      ((volatile char *)old)[(long)p * PAGE] = 1;
  }
}

int main(int argc, char **argv) {
  if (argc != 6)
    return fail("usage: lab_kalloc stress|contend|exhaust TOKEN PROCS ROUNDS PAGES");
  const char *mode = argv[1], *token = argv[2];
  int procs = atoi(argv[3]), rounds = atoi(argv[4]), pages = atoi(argv[5]);
  int exhaust = strcmp(mode, "exhaust") == 0;
  if (strcmp(mode, "stress") != 0 && strcmp(mode, "contend") != 0 && !exhaust)
    return fail("unknown mode");
  long before = freemem();
  for (int n = 0; n < (exhaust ? rounds : 1); n++) {
    for (int i = 0; i < procs; i++) {
      int pid = fork();
      if (pid < 0)
        return fail("fork");
      if (pid == 0)
        exit(exhaust ? glutton(pages) : child(rounds, pages));
    }
    if (!exhaust)
      break;
    for (int i = 0; i < procs; i++) {
      int status = 0;
      if (wait(&status) < 0)
        return fail("wait");
    }
    printf("exhaust: round %d: %d children ran out of memory\n", n + 1, procs);
  }
  int bad = 0;
  for (int i = 0; i < (exhaust ? 0 : procs); i++) {
    int status = -1;
    if (wait(&status) < 0)
      return fail("wait");
    if (status != 0) {
      printf("FAIL: a child exited with %d\n", status);
      bad = 1;
    }
  }
  long after = freemem();
  if (after != before) {
    printf("FAIL: %ld bytes free before, %ld after\n", before, after);
    bad = 1;
  }
  if (strcmp(mode, "contend") == 0) {
    struct lockstat st;
    int n = lockstat("kmem", &st);
    printf("kmem: %d locks, %lu acquires, %lu spins\n", n, (unsigned long)st.acquires,
           (unsigned long)st.spins);
  }
  if (!bad)
    printf("PASS %s\n", token);
  return bad;
}
