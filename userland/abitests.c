// abitests [PREFIX...]: the system-call ABI as the uCore-Tutorial (and rCore-Tutorial)
// course test programs use it, call by call: register-level argument forms, structure
// layouts, and the semantics those programs check. Each case runs in its own child
// process; prints "PASS name" or "FAIL name: why" per case and a total, and exits with
// the failure count. With arguments, runs only the cases whose names start with one of
// them. With "echo" as argv[1], it prints its argc and argv instead (an exec target).
//
// Cases named lab_* need a lab's solution (fstat, linkat/unlinkat, mmap, spawn,
// task_info). Where uCore's convention differs from ours by design, the case checks
// ours and says what uCore does.
#include "fs_gen.h"  // DIRSIZ
#include "user.h"

#define MMAP_AT 0x10000000UL
#define JUNK    0x5a5a5a5aUL  // what an unset argument register might hold

static const char *why;

static int fail(const char *what) {
  why = what;
  return 1;
}

// ---- pipes (uCore ch7b_pipetest) ----------------------------------------------------

// uCore's pipe(fds) makes the call with fds alone: a1 is whatever the caller left in
// it. Two register-sized descriptors come back, and nothing past them is written.
static int pipe_one_argument(void) {
  uintptr_t fds[3] = {JUNK, JUNK, JUNK};
  if (syscall(SYS_pipe2, (long)fds, (long)JUNK, (long)JUNK, 0, 0, 0) != 0)
    return fail("pipe2 with junk in a1 did not return 0");
  if (fds[0] != 3 || fds[1] != 4)
    return fail("fds are not the two lowest free descriptors 3, 4, each a full word");
  if (fds[2] != JUNK)
    return fail("pipe2 wrote past fds[1]");
  uintptr_t more[2];
  if (pipe2(more, 0) != 0 || more[0] != 5 || more[1] != 6)
    return fail("pipe2(fds, 0)");
  return 0;
}

// Parent writes, child reads, as ch7b_pipetest: each closes the end it does not use.
// The child's read of 32 gets the 11 bytes written, then end of file (0).
static int pipe_fork_rw(void) {
  static const char str[] = "hello pipe!";
  uintptr_t fds[2];
  if (pipe2(fds, 0) != 0)
    return fail("pipe2");
  int pid = fork(), status = -1;
  if (pid == 0) {
    char buf[33];
    close((int)fds[1]);
    long n = read((int)fds[0], buf, 32);
    if (n != (long)strlen(str) || memcmp(buf, str, (size_t)n) != 0)
      exit(1);
    exit(read((int)fds[0], buf, 32) == 0 ? 0 : 2);
  }
  close((int)fds[0]);
  if (write((int)fds[1], str, strlen(str)) != (long)strlen(str))
    return fail("write to the pipe");
  close((int)fds[1]);
  if (waitpid(pid, &status) != pid || status != 0)
    return fail(status == 2 ? "no end of file after the data" : "child read wrong bytes");
  return 0;
}

// ---- files (uCore ch6_file0, ch6_file3, the usertest runners) ------------------------

// uCore's open(path, flags) is openat(path, flags, O_RDWR): the mode word is O_RDWR
// (2), whatever flags says. The Linux form with a leading AT_FDCWD works too.
static int openat_forms(void) {
  static const char str[] = "Hello, world!";
  long fd = syscall(SYS_openat, (long)"abi-open", O_CREATE | O_WRONLY, O_RDWR, JUNK, 0, 0);
  if (fd != 3)
    return fail("openat(path, O_CREATE|O_WRONLY, O_RDWR) is not fd 3");
  if (write((int)fd, str, strlen(str)) != (long)strlen(str) || close((int)fd) != 0)
    return fail("write or close");
  fd = syscall(SYS_openat, (long)"abi-open", O_RDONLY, O_RDWR, 0, 0, 0);
  char buf[100] = {0};
  if (fd != 3 || read((int)fd, buf, sizeof(buf)) != (long)strlen(str) || strcmp(buf, str))
    return fail("read back through openat(path, O_RDONLY, O_RDWR)");
  if (write((int)fd, "x", 1) != -1)
    return fail("a file opened O_RDONLY (mode O_RDWR) took a write");
  close((int)fd);
  fd = syscall(SYS_openat, AT_FDCWD, (long)"abi-open", O_RDONLY, 0, 0, 0);
  if (fd != 3 || read((int)fd, buf, 5) != 5)
    return fail("openat(AT_FDCWD, path, O_RDONLY, 0)");
  close((int)fd);
  return unlinkat("abi-open", 0) == 0 ? 0 : fail("unlinkat");
}

// ch6_file3: create, fill and unlink ten files in turn; each unlinkat returns 0 and the
// name no longer opens. More data in all than the whole disk (8 MiB) holds, so the
// blocks of each unlinked file must be freed: 10 x 832 KiB.
static int lab_mass_unlink(void) {
  static char block[4096];
  char name[] = "abi-mass-0";
  memset(block, 'z', sizeof(block));
  for (int i = 0; i < 10; i++) {
    name[9] = (char)('0' + i);
    int fd = openat(name, O_CREATE | O_WRONLY, 0);
    if (fd < 3)
      return fail("openat O_CREATE");
    for (int j = 0; j < 208; j++)
      if (write(fd, block, sizeof(block)) != (long)sizeof(block))
        return fail("write (disk full: are unlinked files' blocks freed?)");
    close(fd);
    if (unlinkat(name, 0) != 0)
      return fail("unlinkat did not return 0");
    if (openat(name, O_RDONLY, 0) >= 0)
      return fail("the name opens after unlinkat");
  }
  return 0;
}

// A copy of hello named n bytes long ("abi-hello-" and x's): 0, or -1.
static int copy_hello(char *name, int n) {
  static char buf[4096];
  memset(name, 'x', (size_t)n);
  memmove(name, "abi-hello-", 10);
  name[n] = 0;
  int in = openat("hello", O_RDONLY, 0);
  int out = openat(name, O_CREATE | O_WRONLY, 0);
  long r = -1, total = 0;
  if (in >= 0 && out >= 0)
    while ((r = read(in, buf, sizeof(buf))) > 0 && write(out, buf, (size_t)r) == r)
      total += r;
  close(in);
  close(out);
  return r == 0 && total > 0 ? 0 : -1;
}

// Names are 1 to DIRSIZ bytes, and all of them count: a course's test programs are
// called ch6b_filetest_simple or ch8b_spin_mut_race, and usertests runners exec them
// by those names. A copy of hello under names of 15, 20, 32 and DIRSIZ bytes runs by
// its whole name (a kernel that compared a prefix would find the 15-byte one for the
// 20-byte name); a name of DIRSIZ + 1 bytes is refused, not cut.
static int long_names(void) {
  static const int lengths[] = {15, 20, 32, DIRSIZ};
  char name[DIRSIZ + 2];
  for (unsigned i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
    if (copy_hello(name, lengths[i]) != 0)
      return fail("copy hello to a long name");
    int pid = fork(), status = -1;
    if (pid == 0) {
      exec(name, NULL);
      exit(99);
    }
    if (waitpid(pid, &status) != pid || status != 0)
      return fail("exec of a long name");
  }
  for (unsigned i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
    copy_hello(name, lengths[i]);  // (re-opens the existing file)
    if (unlinkat(name, 0) != 0)
      return fail("unlinkat of a long name");
  }
  memset(name, 'x', DIRSIZ + 1);
  name[DIRSIZ + 1] = 0;
  if (exec(name, NULL) != -1)
    return fail("exec of a name of DIRSIZ + 1 bytes did not fail");
  if (openat(name, O_CREATE | O_WRONLY, 0) != -1)
    return fail("openat O_CREATE of a name of DIRSIZ + 1 bytes did not fail");
  name[DIRSIZ] = 0;
  if (openat(name, O_RDONLY, 0) != -1)
    return fail("the refused name was made, cut to DIRSIZ bytes");
  return 0;
}

// ---- fstat, linkat, unlinkat (uCore ch6_file1, ch6_file2) ---------------------------

// The layout of struct stat, uCore's Stat and rCore's: dev u64 at 0, ino u64 at 8,
// mode u32 at 16, nlink u32 at 20, then 7 words (ours: size in the first); 80 bytes.
_Static_assert(offsetof(struct stat, ino) == 8 && offsetof(struct stat, mode) == 16 &&
                   offsetof(struct stat, nlink) == 20 && sizeof(struct stat) == 80,
               "struct stat as uCore's and rCore's Stat");

static uint32_t u32_at(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t u64_at(const uint8_t *p) { return u32_at(p) | (uint64_t)u32_at(p + 4) << 32; }

// fstat writes exactly 80 bytes. mode of a file is S_IFREG, 0100000 (0x8000), as
// rCore's StatMode::FILE and Linux; uCore's header says FILE 0x100000 and DIR
// 0x040000 (the octal digits read as hex), so its ch6_file1 expects 0x100000.
static int lab_fstat_layout(void) {
  uint8_t raw[96];
  memset(raw, 0xAA, sizeof(raw));
  int fd = openat("abi-stat", O_CREATE | O_WRONLY, 0);
  if (fd < 3 || write(fd, "12345", 5) != 5)
    return fail("create");
  if (syscall(SYS_fstat, fd, (long)raw, 0, 0, 0, 0) != 0)
    return fail("fstat did not return 0");
  close(fd);
  if (u64_at(raw) != 1 || u64_at(raw + 8) == 0)  // the disk is device 1 (ROOTDEV)
    return fail("dev (word 0) or ino (word 1)");
  if (u32_at(raw + 16) != S_IFREG || u32_at(raw + 20) != 1 || u64_at(raw + 24) != 5)
    return fail("mode S_IFREG at 16, nlink 1 at 20, size 5 at 24");
  for (int i = 32; i < 80; i++)
    if (raw[i] != 0)
      return fail("padding words not zero");
  for (int i = 80; i < 96; i++)
    if (raw[i] != 0xAA)
      return fail("fstat wrote past 80 bytes");
  struct stat st;
  fd = openat("/", O_RDONLY, 0);
  if (fd < 0 || fstat(fd, &st) != 0 || st.mode != S_IFDIR)
    return fail("mode of a directory is not S_IFDIR (0040000)");
  close(fd);
  return unlinkat("abi-stat", 0) == 0 ? 0 : fail("unlinkat");
}

static long linkat5(const char *old, const char *new) {
  return syscall(SYS_linkat, AT_FDCWD, (long)old, AT_FDCWD, (long)new, 0, 0);
}

static long unlinkat3(const char *path) {
  return syscall(SYS_unlinkat, AT_FDCWD, (long)path, 0, 0, 0, 0);
}

// ch6_file2 in uCore's forms, linkat(AT_FDCWD, old, AT_FDCWD, new, 0) and
// unlinkat(AT_FDCWD, path, 0): nlink follows every link and unlink, seen through a
// descriptor opened before; the data outlives the original name.
static int lab_link_counts(void) {
  struct stat st, st2;
  int fd = openat("abi-f", O_CREATE | O_WRONLY, 0);
  if (fd < 3)
    return fail("create");
  if (linkat5("abi-f", "abi-l0") != 0 || fstat(fd, &st) != 0 || st.nlink != 2)
    return fail("nlink 2 after one linkat");
  if (linkat5("abi-f", "abi-l1") != 0 || linkat5("abi-f", "abi-l2") != 0 ||
      fstat(fd, &st) != 0 || st.nlink != 4)
    return fail("nlink 4 after three");
  if (write(fd, "Hello, world!", 13) != 13)
    return fail("write");
  close(fd);
  if (unlinkat3("abi-f") != 0)
    return fail("unlinkat of the first name");
  char buf[100] = {0};
  fd = openat("abi-l0", O_RDONLY, 0);
  if (fd < 3 || read(fd, buf, sizeof(buf)) != 13 || strcmp(buf, "Hello, world!") != 0)
    return fail("data through a link after unlinking the first name");
  if (fstat(fd, &st2) != 0 || st2.dev != st.dev || st2.ino != st.ino || st2.nlink != 3)
    return fail("same dev and ino, nlink 3");
  if (unlinkat3("abi-l1") != 0 || unlinkat3("abi-l2") != 0 || fstat(fd, &st2) != 0 ||
      st2.nlink != 1)
    return fail("nlink 1 through the open fd after two more unlinks");
  close(fd);
  if (unlinkat3("abi-l0") != 0 || openat("abi-l0", O_RDONLY, 0) != -1)
    return fail("last unlink");
  if (linkat5("abi-none", "abi-l3") != -1 || unlinkat3("abi-none") != -1)
    return fail("linkat or unlinkat of a missing name");
  return 0;
}

// ---- processes (uCore ch5b_exit, ch5_spawn1, ch6b_exec, the usertest runners) --------

// waitpid stores the whole int given to exit, not its low byte (uCore's 66778, -233).
static int exit_status_int(void) {
  static const int codes[] = {66778, -233, 0x1234};
  int pids[3], status;
  for (int i = 0; i < 3; i++)
    if ((pids[i] = fork()) == 0)
      exit(codes[i]);
  for (int i = 2; i >= 0; i--)  // youngest first
    if (waitpid(pids[i], &status) != pids[i] || status != codes[i])
      return fail("waitpid's status is not exit's int");
  if (waitpid(pids[0], &status) != -1 || wait(&status) != -1)
    return fail("waiting again did not fail");
  return 0;
}

// uCore's usertest runner calls exec(name, NULL): the program runs with argv[0] = name.
static int exec_null_argv(void) {
  int pid = fork(), status = -1;
  if (pid == 0) {
    exec("hello", NULL);
    exit(99);
  }
  return waitpid(pid, &status) == pid && status == 0 ? 0 : fail("exec(hello, NULL)");
}

// exec passes argv as given, argv[0] included (ch6b_exec: six strings, one UTF-8).
static int exec_argv(void) {
  char *argv[] = {"(*o*)", "echo", "(>.<)", "(O.O)", "(QwQ)", "orz", "没有了呀", NULL};
  int pid = fork(), status = -1;
  if (pid == 0) {
    exec("abitests", argv);
    exit(99);
  }
  return waitpid(pid, &status) == pid && status == 0 ? 0 : fail("exec(abitests, argv)");
}

// rCore's spawn(path) passes 0 for argv: the program runs with argv[0] = path. (uCore's
// spawn(path) leaves a1 unset; ours reads it as argv, so junk there fails the call.)
static int lab_spawn_null_argv(void) {
  int status = -1, pid = spawn("hello", NULL);
  if (pid <= 0 || waitpid(pid, &status) != pid || status != 0)
    return fail("spawn(hello, NULL)");
  return 0;
}

// mmap(start, len, prot) with uCore's two more arguments, MAP_ANONYMOUS (0) and fd -1,
// as ch4_mmap0 makes it: they are ignored.
static int lab_mmap_five_args(void) {
  if (syscall(SYS_mmap, (long)MMAP_AT, 4096, PROT_READ | PROT_WRITE, 0, -1, 0) != 0)
    return fail("mmap(start, 4096, 3, 0, -1)");
  volatile uint8_t *p = (volatile uint8_t *)MMAP_AT;
  for (int i = 0; i < 4096; i++)
    p[i] = (uint8_t)i;
  for (int i = 0; i < 4096; i++)
    if (p[i] != (uint8_t)i)
      return fail("read back");
  return munmap((void *)MMAP_AT, 4096) == 0 ? 0 : fail("munmap");
}

// task_info writes sizeof(struct task_info): time is register-sized after the 500
// counts (rCore's usize; on rv64 at 2008, the struct 2016 bytes). uCore's TaskInfo
// has an int time at 2004 and is 2008 bytes: on rv64 it would read 0 there (our
// padding), and the last 8 bytes we write fall past its end.
static int lab_task_info_layout(void) {
  static uint8_t raw[sizeof(struct task_info) + 16];
  memset(raw, 0xAA, sizeof(raw));
  sleep_ms(3);
  if (syscall(SYS_task_info, (long)raw, 0, 0, 0, 0, 0) != 0)
    return fail("task_info");
  size_t at = offsetof(struct task_info, time);
  if (at != 4 + 4 * MAX_SYSCALL_NUM + (sizeof(uintptr_t) == 8 ? 4 : 0))
    return fail("time is not the word after the counts");
  uint64_t t = sizeof(uintptr_t) == 8 ? u64_at(raw + at) : u32_at(raw + at);
  if (u32_at(raw) != TASK_RUNNING || t < 3 || t > 10000)
    return fail("status or time");
  for (size_t i = sizeof(struct task_info); i < sizeof(raw); i++)
    if (raw[i] != 0xAA)
      return fail("task_info wrote past its struct");
  return 0;
}

// ---- the table ----------------------------------------------------------------------

struct test {
  const char *name;
  int (*fn)(void);
};

static const struct test tests[] = {
    {"pipe_one_argument", pipe_one_argument},
    {"pipe_fork_rw", pipe_fork_rw},
    {"openat_forms", openat_forms},
    {"long_names", long_names},
    {"exit_status_int", exit_status_int},
    {"exec_null_argv", exec_null_argv},
    {"exec_argv", exec_argv},
    {"lab_mass_unlink", lab_mass_unlink},
    {"lab_fstat_layout", lab_fstat_layout},
    {"lab_link_counts", lab_link_counts},
    {"lab_spawn_null_argv", lab_spawn_null_argv},
    {"lab_mmap_five_args", lab_mmap_five_args},
    {"lab_task_info_layout", lab_task_info_layout},
};

// Run one case in a child, which has only fds 0-2 open (the cases check which
// descriptor comes next) and prints its own FAIL line with the reason.
static int run(const struct test *t) {
  int pid = fork(), status = -100;
  if (pid == 0) {
    int r = t->fn();
    if (r)
      printf("FAIL %s: %s\n", t->name, why ? why : "failed");
    exit(r ? 1 : 0);
  }
  if (pid < 0 || waitpid(pid, &status) != pid)
    status = -100;
  if (status == 0)
    printf("PASS %s\n", t->name);
  else if (status != 1)
    printf("FAIL %s: %s (status %d)\n", t->name,
           status == EXIT_KILLED ? "killed" : "crashed", status);
  return status == 0;
}

static const char *case_name(unsigned i) {
  return tests[i].name;
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "echo") == 0) {  // argv[0] is anything
    printf("argc = %d\n", argc);
    for (int i = 0; i < argc; i++)
      printf("argv[%d] = %s\n", i, argv[i]);
    return 0;
  }
  if (refuse_unknown_cases("abitests", argc, argv, case_name,
                           sizeof(tests) / sizeof(tests[0])))
    return 2;
  int passed = 0, failed = 0;
  for (unsigned i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
    if (!test_selected(tests[i].name, argc, argv))
      continue;
    run(&tests[i]) ? passed++ : failed++;
  }
  printf("abitests: %d passed, %d failed\n", passed, failed);
  return failed;
}
