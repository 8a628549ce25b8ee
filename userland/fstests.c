// fstests [PREFIX...]: the file system's test suite, run from user space like
// usertests: each case runs in its own child process, in the current directory, and
// removes the names it makes (first too, in case an earlier run was cut short).
// Prints one "PASS name" or "FAIL name" line per case (a failing case says which
// check failed: the number it returned) and a total; exits with the failure count.
// With arguments, runs only the cases whose names start with one of them.
#include "fs_gen.h"  // BSIZE, NDIRECT, NINDIRECT, DIRSIZ, ROOTINO: the disk's layout
#include "user.h"

#define NOFILE 16             // kernel/param.h: open files per process
#define NINODE 50             // kernel/param.h: inodes in memory at once
#define PIPESIZE 512          // kernel/param.h
#define PAGE 4096

// ---- helpers ------------------------------------------------------------------------

// Make name hold exactly data: 0, or -1.
static int put(const char *name, const char *data) {
  int fd = open(name, O_WRONLY | O_CREATE | O_TRUNC);
  if (fd < 0)
    return -1;
  long n = (long)strlen(data), w = write(fd, data, (size_t)n);
  close(fd);
  return w == n ? 0 : -1;
}

// Read all of fd into buf (at most max-1 bytes, NUL-terminated): the length, or -1.
static long slurp_fd(int fd, char *buf, long max) {
  long got = 0, n;
  while (got < max - 1 && (n = read(fd, buf + got, (size_t)(max - 1 - got))) > 0)
    got += n;
  buf[got] = 0;
  return n < 0 ? -1 : got;
}

// Does the file name hold exactly expect?
static int holds(const char *name, const char *expect) {
  char buf[256];
  int fd = open(name, O_RDONLY);
  if (fd < 0)
    return 0;
  long n = slurp_fd(fd, buf, sizeof(buf));
  close(fd);
  return n == (long)strlen(expect) && strcmp(buf, expect) == 0;
}

static long size_of_fd(int fd) {
  struct stat st;
  return fstat(fd, &st) < 0 ? -1 : (long)st.size;
}

static int nlink_of(const char *name) {
  struct stat st;
  return stat(name, &st) < 0 ? -1 : (int)st.nlink;
}

// Run fn in a child; its exit status (or -100 if the child could not be made).
static int in_child(int (*fn)(void)) {
  int pid = fork(), status = -100;
  if (pid == 0)
    exit(fn());
  if (pid < 0 || waitpid(pid, &status) != pid)
    return -100;
  return status;
}

// Fill a block-sized buffer with a pattern that differs for every block number.
static void pattern(char *buf, long blockno) {
  for (int i = 0; i < BSIZE; i++)
    buf[i] = (char)(blockno * 7 + i * 13 + (i >> 8));
}

// ---- files --------------------------------------------------------------------------

static int create_write_read(void) {
  char buf[32];
  unlink("cwr");
  int fd = open("cwr", O_CREATE | O_WRONLY);
  if (fd < 0)
    return 1;
  if (write(fd, "hello, disk", 11) != 11 || close(fd) != 0)
    return 2;
  if ((fd = open("cwr", O_RDONLY)) < 0)
    return 3;
  if (read(fd, buf, sizeof(buf)) != 11 || memcmp(buf, "hello, disk", 11) != 0)
    return 4;
  if (size_of_fd(fd) != 11 || close(fd) != 0 || close(fd) != -1)  // closed: a bad fd now
    return 5;
  return unlink("cwr") == 0 && open("cwr", O_RDONLY) == -1 ? 0 : 6;
}

// O_CREATE of an existing file opens it as it is (no O_TRUNC: the data stays).
static int create_existing(void) {
  unlink("cex");
  if (put("cex", "keep me") < 0)
    return 1;
  int fd = open("cex", O_CREATE | O_RDWR);
  if (fd < 0 || size_of_fd(fd) != 7)
    return 2;
  close(fd);
  return holds("cex", "keep me") && unlink("cex") == 0 ? 0 : 3;
}

static int o_trunc(void) {
  unlink("trunc");
  if (put("trunc", "a long first version") < 0)
    return 1;
  int fd = open("trunc", O_WRONLY | O_TRUNC);
  if (fd < 0 || size_of_fd(fd) != 0)
    return 2;
  if (write(fd, "new", 3) != 3 || close(fd) != 0 || !holds("trunc", "new"))
    return 3;
  // O_TRUNC with O_RDONLY leaves the file alone (nothing may be written through it).
  if ((fd = open("trunc", O_RDONLY | O_TRUNC)) < 0 || size_of_fd(fd) != 3)
    return 4;
  close(fd);
  return unlink("trunc") == 0 ? 0 : 5;
}

static int o_append(void) {
  unlink("app");
  if (put("app", "ab") < 0)
    return 1;
  int a = open("app", O_WRONLY | O_APPEND), b = open("app", O_WRONLY | O_APPEND);
  if (a < 0 || b < 0)
    return 2;
  // Each write goes to the end as it is then, whatever the descriptor's own offset.
  if (write(a, "cd", 2) != 2 || write(b, "ef", 2) != 2 || write(a, "gh", 2) != 2)
    return 3;
  close(a);
  close(b);
  return holds("app", "abcdefgh") && unlink("app") == 0 ? 0 : 4;
}

// Four processes append 50 short lines each at once: none is lost or overwritten.
static int append_concurrent(void) {
  unlink("appc");
  if (put("appc", "") < 0)
    return 1;
  int pids[4];
  for (int i = 0; i < 4; i++) {
    if ((pids[i] = fork()) == 0) {
      int fd = open("appc", O_WRONLY | O_APPEND);
      char line[3] = {(char)('a' + i), '.', '\n'};
      for (int j = 0; j < 50; j++)
        if (fd < 0 || write(fd, line, 3) != 3)
          exit(1);
      exit(0);
    }
  }
  int bad = 0, status;
  for (int i = 0; i < 4; i++)
    bad += pids[i] < 0 || waitpid(pids[i], &status) != pids[i] || status != 0;
  int fd = open("appc", O_RDONLY);
  static char buf[700];
  long n = slurp_fd(fd, buf, sizeof(buf));
  close(fd);
  int count[4] = {0, 0, 0, 0};
  for (long i = 0; i + 2 < n; i += 3)
    if (buf[i] >= 'a' && buf[i] <= 'd' && buf[i + 1] == '.' && buf[i + 2] == '\n')
      count[buf[i] - 'a']++;
  if (bad || n != 600)
    return 2;
  for (int i = 0; i < 4; i++)
    if (count[i] != 50)
      return 3;
  return unlink("appc") == 0 ? 0 : 4;
}

static int read_at_eof(void) {
  char buf[8];
  unlink("eof");
  if (put("eof", "xyz") < 0)
    return 1;
  int fd = open("eof", O_RDONLY);
  if (read(fd, buf, sizeof(buf)) != 3)
    return 2;
  if (read(fd, buf, sizeof(buf)) != 0 || read(fd, buf, sizeof(buf)) != 0)
    return 3;
  if (read(fd, buf, 0) != 0)
    return 4;
  close(fd);
  return unlink("eof") == 0 ? 0 : 5;
}

// ---- shared offsets -----------------------------------------------------------------

// fork() shares the open file, so parent and child write one after the other.
static int offset_shared_fork(void) {
  unlink("shf");
  int fd = open("shf", O_CREATE | O_RDWR);
  if (fd < 0 || write(fd, "ab", 2) != 2)
    return 1;
  int pid = fork(), status = -1;
  if (pid == 0)
    exit(write(fd, "cd", 2) == 2 ? 0 : 1);
  if (pid < 0 || waitpid(pid, &status) != pid || status != 0)
    return 2;
  if (write(fd, "ef", 2) != 2)
    return 3;
  close(fd);
  return holds("shf", "abcdef") && unlink("shf") == 0 ? 0 : 4;
}

// Two open() calls are two open files, each with its own offset.
static int offset_separate_opens(void) {
  unlink("sep");
  int a = open("sep", O_CREATE | O_WRONLY), b = open("sep", O_WRONLY);
  if (a < 0 || b < 0 || write(a, "xx", 2) != 2 || write(b, "y", 1) != 1)
    return 1;
  close(a);
  close(b);
  return holds("sep", "yx") && unlink("sep") == 0 ? 0 : 2;
}

static int dup_shares_offset(void) {
  char buf[8];
  unlink("dup");
  int fd = open("dup", O_CREATE | O_RDWR), d = dup(fd);
  if (fd < 0 || d < 0 || d == fd)
    return 1;
  if (write(fd, "ab", 2) != 2 || write(d, "cd", 2) != 2)
    return 2;
  close(fd);  // the open file lives on through d
  if (write(d, "e", 1) != 1 || close(d) != 0)
    return 3;
  if (!holds("dup", "abcde"))
    return 4;
  fd = open("dup", O_RDONLY);
  d = dup(fd);
  if (read(fd, buf, 2) != 2 || read(d, buf + 2, 3) != 3 || memcmp(buf, "abcde", 5) != 0)
    return 5;
  close(fd);
  close(d);
  return unlink("dup") == 0 ? 0 : 6;
}

// dup() returns the lowest free descriptor (the shell's redirections rely on it).
static int dup_lowest_fd(void) {
  int fd = dup(STDOUT);  // 0, 1, 2 are open and nothing else
  if (fd != 3)
    return 1;
  if (dup(STDOUT) != 4 || close(3) != 0 || dup(STDOUT) != 3)
    return 2;
  close(STDIN);
  if (dup(4) != 0)
    return 3;
  return dup(-1) == -1 && dup(NOFILE) == -1 && dup(9) == -1 ? 0 : 4;
}

// ---- names --------------------------------------------------------------------------

static int link_nlink(void) {
  char buf[16];
  struct stat st;
  unlink("lka");
  unlink("lkb");
  if (put("lka", "shared") < 0 || nlink_of("lka") != 1)
    return 1;
  if (link("lka", "lkb") != 0)
    return 2;
  int fd = open("lkb", O_RDONLY);
  if (fd < 0 || fstat(fd, &st) != 0 || st.nlink != 2)
    return 3;
  struct stat sa;
  if (stat("lka", &sa) != 0 || sa.ino != st.ino)
    return 4;  // one inode, two names
  close(fd);
  if (unlink("lka") != 0 || nlink_of("lkb") != 1)
    return 5;
  if (open("lka", O_RDONLY) != -1)
    return 6;
  fd = open("lkb", O_RDONLY);
  if (read(fd, buf, sizeof(buf)) != 6 || memcmp(buf, "shared", 6) != 0)
    return 7;
  close(fd);
  return unlink("lkb") == 0 && open("lkb", O_RDONLY) == -1 ? 0 : 8;
}

static int link_errors(void) {
  unlink("lke");
  unlink("lke2");
  if (put("lke", "x") < 0 || put("lke2", "y") < 0)
    return 1;
  if (link("lke", "lke2") != -1 || !holds("lke2", "y"))
    return 2;  // the new name exists
  if (link("no-such", "lke3") != -1 || link(".", "lkdot") != -1)
    return 3;  // old missing; old a directory
  // A failed link leaves the count as it was.
  if (link("lke", "no-such-dir/x") != -1 || nlink_of("lke") != 1)
    return 4;
  return unlink("lke") == 0 && unlink("lke2") == 0 ? 0 : 5;
}

// An unlinked file lives on while a descriptor has it open.
static int unlink_open_file(void) {
  char buf[32];
  unlink("uof");
  if (put("uof", "still here") < 0)
    return 1;
  int r = open("uof", O_RDONLY), w = open("uof", O_WRONLY | O_APPEND);
  if (r < 0 || w < 0 || unlink("uof") != 0)
    return 2;
  if (open("uof", O_RDONLY) != -1)
    return 3;
  if (write(w, "!", 1) != 1)
    return 4;
  struct stat st;
  if (fstat(r, &st) != 0 || st.nlink != 0 || st.size != 11)
    return 5;
  if (read(r, buf, sizeof(buf)) != 11 || memcmp(buf, "still here!", 11) != 0)
    return 6;
  close(r);
  close(w);
  return open("uof", O_RDONLY) == -1 ? 0 : 7;
}

// ---- directories --------------------------------------------------------------------

static void remove_mkdir_chdir(void) {
  unlink("mcd/sub/f");
  unlink("mcd/sub");
  unlink("mcd/x");
  unlink("mcd");
}

static int mkdir_chdir(void) {
  remove_mkdir_chdir();
  if (mkdir("mcd") != 0 || mkdir("mcd") != -1)
    return 1;
  if (chdir("mcd") != 0 || put("x", "in mcd") < 0 || mkdir("sub") != 0)
    return 2;
  if (chdir("sub") != 0 || put("f", "deep") < 0)
    return 3;
  if (!holds("../x", "in mcd") || !holds("./f", "deep") || !holds("../sub/f", "deep"))
    return 4;
  if (chdir("../..") != 0 || !holds("mcd/x", "in mcd") || !holds("mcd//sub/./f", "deep"))
    return 5;
  struct stat st;
  if (stat("mcd", &st) != 0 || (st.mode & S_IFMT) != S_IFDIR)
    return 6;
  if (chdir("mcd/x") != -1 || chdir("no-such") != -1)
    return 7;  // a file; nothing
  if (mkdir("no-such/d") != -1 || mkdir("mcd/x/d") != -1)
    return 8;  // no parent; a file as parent
  remove_mkdir_chdir();
  return open("mcd", O_RDONLY) == -1 ? 0 : 9;
}

// A removed directory that is still the cwd takes no new names (else the names'
// files would outlive it, allocated with no directory naming them); ".." still works.
static int create_in_removed_dir(void) {
  unlink("rmcwd");
  if (mkdir("rmcwd") != 0 || chdir("rmcwd") != 0 || unlink("../rmcwd") != 0)
    return 1;
  if (open("f", O_CREATE | O_RDWR) != -1 || mkdir("sub") != -1 || link("/hello", "h") != -1)
    return 2;
  struct stat st;
  if (stat(".", &st) != 0 || st.nlink != 0 || stat("f", &st) != -1)
    return 3;
  return chdir("..") == 0 && stat("rmcwd", &st) == -1 ? 0 : 4;
}

// ".." of the root is the root; "/" works from anywhere.
static int chdir_dotdot_root(void) {
  struct stat a, b;
  if (chdir("/") != 0 || chdir("..") != 0 || stat(".", &a) != 0 || a.ino != ROOTINO)
    return 1;
  if (stat("/..", &b) != 0 || b.ino != ROOTINO || stat("/hello", &a) != 0)
    return 2;
  if (chdir("/../../") != 0 || stat("hello", &b) != 0 || a.ino != b.ino)
    return 3;
  return 0;
}

// The names in directory fd, as "name/type " pairs appended to out, read with a
// buffer of len bytes: the count of entries, or -1.
static int list(int fd, size_t len, char *out, size_t outmax) {
  static char buf[512];
  int count = 0;
  long n;
  out[0] = 0;
  while ((n = getdents64(fd, buf, len)) > 0) {
    for (long off = 0; off < n;) {
      struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
      size_t used = strlen(out);
      if (d->d_reclen % 8 != 0 || d->d_reclen == 0 || d->d_ino == 0)
        return -1;
      snprintf(out + used, outmax - used, "%s/%d ", d->d_name, d->d_type);
      off += d->d_reclen;
      count++;
    }
  }
  return n < 0 ? -1 : count;
}

static void remove_getdents(void) {
  unlink("gd/a");
  unlink("gd/bb");
  unlink("gd/sub");
  unlink("gd/fourteen-chars");
  unlink("gd");
}

static int getdents_lists(void) {
  char names[256];
  remove_getdents();
  if (mkdir("gd") != 0 || put("gd/a", "") < 0 || put("gd/bb", "") < 0 ||
      mkdir("gd/sub") != 0 || put("gd/fourteen-chars", "") < 0)
    return 1;
  const char *expect = "./4 ../4 a/8 bb/8 sub/4 fourteen-chars/8 ";
  int fd = open("gd", O_RDONLY);
  if (fd < 0 || list(fd, 512, names, sizeof(names)) != 6 || strcmp(names, expect) != 0)
    return 2;
  if (getdents64(fd, names, sizeof(names)) != 0)
    return 3;  // at the end
  close(fd);
  // A buffer that holds one record at a time gets the same names, one per call; one
  // too small for the next record is an error.
  fd = open("gd", O_RDONLY);
  if (list(fd, 40, names, sizeof(names)) != 6 || strcmp(names, expect) != 0)
    return 4;
  close(fd);
  fd = open("gd", O_RDONLY);
  if (getdents64(fd, names, 8) != -1)
    return 5;
  close(fd);
  // An unlinked name is gone from the listing.
  unlink("gd/bb");
  fd = open("gd", O_RDONLY);
  if (list(fd, 512, names, sizeof(names)) != 5 ||
      strcmp(names, "./4 ../4 a/8 sub/4 fourteen-chars/8 ") != 0)
    return 6;
  close(fd);
  // getdents64 of a file is an error.
  fd = open("gd/a", O_RDONLY);
  if (getdents64(fd, names, sizeof(names)) != -1)
    return 7;
  close(fd);
  remove_getdents();
  return open("gd", O_RDONLY) == -1 ? 0 : 8;
}

static int rmdir_nonempty(void) {
  unlink("rmd/f");
  unlink("rmd");
  if (mkdir("rmd") != 0 || put("rmd/f", "x") < 0)
    return 1;
  if (unlink("rmd") != -1 || open("rmd/f", O_RDONLY) < 0)
    return 2;  // not empty: nothing removed
  if (unlink("rmd/.") != -1 || unlink("rmd/..") != -1 || unlink(".") != -1)
    return 3;
  if (unlink("rmd/f") != 0 || unlink("rmd") != 0)
    return 4;
  return open("rmd", O_RDONLY) == -1 && unlink("rmd") == -1 ? 0 : 5;
}

// A directory of 150 files grows past a few blocks; every name is found, then gone.
static int big_directory(void) {
  char name[16];
  int bad = 0;
  for (int i = 0; i < 150; i++) {
    snprintf(name, sizeof(name), "bigd/f%d", i);
    unlink(name);
  }
  unlink("bigd");
  if (mkdir("bigd") != 0)
    return 1;
  for (int i = 0; i < 150; i++) {
    snprintf(name, sizeof(name), "bigd/f%d", i);
    bad += put(name, name) < 0;
  }
  for (int i = 0; i < 150; i++) {
    snprintf(name, sizeof(name), "bigd/f%d", i);
    bad += !holds(name, name) || unlink(name) != 0;
  }
  if (bad)
    return 2;
  return unlink("bigd") == 0 ? 0 : 3;
}

// Two processes create and remove names in one directory at once.
static int concurrent_create(void) {
  unlink("conc");
  if (mkdir("conc") != 0)
    return 1;
  int pids[2];
  for (int c = 0; c < 2; c++) {
    if ((pids[c] = fork()) == 0) {
      char name[16];
      int bad = 0;
      for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "conc/%c%d", 'a' + c, i % 8);
        bad += put(name, name) < 0;
        if (i % 2)
          bad += unlink(name) != 0;
      }
      for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof(name), "conc/%c%d", 'a' + c, i);
        unlink(name);
      }
      exit(bad);
    }
  }
  int bad = 0, status;
  for (int c = 0; c < 2; c++)
    bad += pids[c] < 0 || waitpid(pids[c], &status) != pids[c] || status != 0;
  if (bad)
    return 2;
  return unlink("conc") == 0 ? 0 : 3;  // empty again
}

// ---- pipes --------------------------------------------------------------------------

// 5000 bytes, ten times the pipe's buffer, go through from a child.
static int pipe_data(void) {
  int p[2];
  if (pipe(p) != 0 || p[0] < 3 || p[1] < 3 || p[0] == p[1])
    return 1;
  int pid = fork();
  if (pid == 0) {
    close(p[0]);
    char buf[100];
    for (int i = 0; i < 50; i++) {
      for (int j = 0; j < 100; j++)
        buf[j] = (char)(i + j);
      if (write(p[1], buf, 100) != 100)
        exit(1);
    }
    exit(0);
  }
  close(p[1]);
  static char buf[6000];
  long got = slurp_fd(p[0], buf, sizeof(buf));
  close(p[0]);
  int status = -1;
  if (waitpid(pid, &status) != pid || status != 0 || got != 5000)
    return 2;
  for (int i = 0; i < 5000; i++)
    if (buf[i] != (char)(i / 100 + i % 100))
      return 3;
  return 0;
}

// A reader sees end of file (0) once every write end is closed, and not before.
static int pipe_eof(void) {
  char c;
  int p[2];
  if (pipe(p) != 0)
    return 1;
  int w2 = dup(p[1]);
  if (write(p[1], "z", 1) != 1 || close(p[1]) != 0)
    return 2;
  if (read(p[0], &c, 1) != 1 || c != 'z')
    return 3;
  // w2 is still open: a child writes through it later, so this read must wait.
  int pid = fork();
  if (pid == 0) {
    sleep_ms(20);
    exit(write(w2, "q", 1) == 1 ? 0 : 1);
  }
  if (read(p[0], &c, 1) != 1 || c != 'q')
    return 4;
  close(w2);
  int status = -1;
  waitpid(pid, &status);
  if (status != 0 || read(p[0], &c, 1) != 0 || read(p[0], &c, 1) != 0)
    return 5;
  return close(p[0]) == 0 ? 0 : 6;
}

// Writing with no read end open is an error (there is no SIGPIPE here).
static int pipe_no_reader(void) {
  int p[2];
  if (pipe(p) != 0 || close(p[0]) != 0)
    return 1;
  if (write(p[1], "x", 1) != -1)
    return 2;
  close(p[1]);
  // A pipe's ends are one-way.
  char c;
  if (pipe(p) != 0 || read(p[1], &c, 1) != -1 || write(p[0], "x", 1) != -1)
    return 3;
  close(p[0]);
  close(p[1]);
  // flags are ignored: uCore's pipe(fds) leaves a1 unset (abitests checks it).
  uintptr_t q[2];
  return pipe2(q, 1) == 0 && close((int)q[0]) == 0 && close((int)q[1]) == 0 ? 0 : 4;
}

// A writer blocked on a full pipe whose reader goes away gets a short count, then -1.
static int pipe_reader_gone(void) {
  int p[2];
  if (pipe(p) != 0)
    return 1;
  int pid = fork();
  if (pid == 0) {
    static char buf[2000];
    close(p[0]);
    long n = write(p[1], buf, sizeof(buf));
    exit(n > 0 && n < (long)sizeof(buf) && write(p[1], buf, 1) == -1 ? 0 : 1);
  }
  close(p[1]);
  char buf[100];
  if (read(p[0], buf, sizeof(buf)) <= 0)
    return 2;
  close(p[0]);
  int status = -1;
  return waitpid(pid, &status) == pid && status == 0 ? 0 : 3;
}

static int fstat_types(void) {
  struct stat st;
  int p[2];
  unlink("fst");
  if (fstat(STDOUT, &st) != 0 || (st.mode & S_IFMT) != S_IFCHR)
    return 1;
  if (pipe(p) != 0 || fstat(p[0], &st) != 0 || (st.mode & S_IFMT) != S_IFIFO)
    return 2;
  close(p[0]);
  close(p[1]);
  if (put("fst", "12345") < 0 || stat("fst", &st) != 0 || (st.mode & S_IFMT) != S_IFREG ||
      st.size != 5 || st.nlink != 1 || st.ino == 0)
    return 3;
  if (stat(".", &st) != 0 || (st.mode & S_IFMT) != S_IFDIR || st.size % 16 != 0)
    return 4;
  return unlink("fst") == 0 ? 0 : 5;
}

// ---- exec ---------------------------------------------------------------------------

// Run argv[0] in a child with its standard output in the file out; its status.
static int run_to_file(char **argv, const char *out) {
  int pid = fork(), status = -100;
  if (pid == 0) {
    close(STDOUT);
    if (open(out, O_CREATE | O_WRONLY | O_TRUNC) != STDOUT)
      exit(98);
    exec(argv[0], argv);  // keeps the open files, as Unix does
    exit(99);
  }
  if (pid < 0 || waitpid(pid, &status) != pid)
    return -101;
  return status;
}

static int exec_path(void) {
  char *hello[] = {"/hello", "fstests", NULL};
  char *echo[] = {"myecho", "from", "a", "directory", NULL};
  unlink("exo");
  unlink("exd/myecho");
  unlink("exd/o");
  unlink("exd");
  if (run_to_file(hello, "exo") != 0 || !holds("exo", "Hello, world!\nargv[1] = fstests\n"))
    return 1;
  // A relative path is looked up from the current directory.
  if (mkdir("exd") != 0 || link("/echo", "exd/myecho") != 0 || chdir("exd") != 0)
    return 2;
  if (run_to_file(echo, "o") != 0 || !holds("o", "from a directory\n"))
    return 3;
  if (chdir("..") != 0 || unlink("exd/myecho") != 0 || unlink("exd/o") != 0)
    return 4;
  return unlink("exd") == 0 && unlink("exo") == 0 ? 0 : 5;
}

static int exec_errors(void) {
  char *argv[] = {"x", NULL};
  unlink("notelf");
  if (put("notelf", "#!/bin/sh\necho this is no ELF file\n") < 0)
    return 1;
  if (exec("notelf", argv) != -1 || exec("/", argv) != -1 || exec("no-such-program", argv) != -1)
    return 2;
  // fstests (this very program) sees the failures and carries on
  return unlink("notelf") == 0 ? 0 : 3;
}

// ---- a large file -------------------------------------------------------------------

// Past the direct and singly-indirect blocks: NDIRECT + NINDIRECT + 13 blocks.
#define LARGE_BLOCKS (NDIRECT + NINDIRECT + 13)

static int large_file(void) {
  static char buf[BSIZE], want[BSIZE];
  unlink("large");
  int fd = open("large", O_CREATE | O_WRONLY);
  if (fd < 0)
    return 1;
  for (long b = 0; b < LARGE_BLOCKS; b++) {
    pattern(buf, b);
    if (write(fd, buf, BSIZE) != BSIZE)
      return 2;
  }
  if (size_of_fd(fd) != (long)LARGE_BLOCKS * BSIZE || close(fd) != 0)
    return 3;
  if ((fd = open("large", O_RDONLY)) < 0)
    return 4;
  for (long b = 0; b < LARGE_BLOCKS; b++) {
    pattern(want, b);
    if (read(fd, buf, BSIZE) != BSIZE || memcmp(buf, want, BSIZE) != 0)
      return 5;
  }
  if (read(fd, buf, BSIZE) != 0)
    return 6;
  close(fd);
  return unlink("large") == 0 ? 0 : 7;
}

// ---- errors -------------------------------------------------------------------------

static int bad_fd(void) {
  char c;
  struct stat st;
  int bads[] = {-1, 3, 9, NOFILE, 1000};  // 3 and 9: in range but not open
  for (unsigned i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
    int fd = bads[i];
    if (read(fd, &c, 1) != -1 || write(fd, "x", 1) != -1 || close(fd) != -1 ||
        fstat(fd, &st) != -1 || dup(fd) != -1 || getdents64(fd, &c, 1) != -1)
      return 1 + (int)i;
  }
  return 0;
}

static int bad_buffer(void) {
  unlink("bbuf");
  if (put("bbuf", "0123456789") < 0)
    return 1;
  int fd = open("bbuf", O_RDWR), dir = open(".", O_RDONLY);
  if (fd < 0 || dir < 0)
    return 2;
  if (read(fd, (char *)KERNEL_ADDR, 10) != -1 || write(fd, (char *)KERNEL_ADDR, 10) != -1)
    return 3;
  if (read(fd, NULL, 10) != -1 || read(fd, (char *)TRAPFRAME_ADDR, 10) != -1)
    return 4;
  if (read(fd, (char *)(uintptr_t)put, 10) != -1)
    return 5;  // our text is not writable
  // A buffer whose last bytes run past the end of the heap into an unmapped page.
  uintptr_t top = ((uintptr_t)sbrk(0) + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
  if (read(fd, (char *)(top - 5), 10) != -1 || write(fd, (char *)(top - 5), 10) != -1)
    return 6;
  if (fstat(fd, (struct stat *)KERNEL_ADDR) != -1 || pipe2((uintptr_t *)KERNEL_ADDR, 0) != -1)
    return 7;
  if (getdents64(dir, (void *)KERNEL_ADDR, 512) != -1)
    return 8;
  // Nothing happened: the offset is still 0 and the file unchanged.
  char buf[16];
  if (read(fd, buf, sizeof(buf)) != 10 || memcmp(buf, "0123456789", 10) != 0)
    return 9;
  close(fd);
  close(dir);
  return unlink("bbuf") == 0 ? 0 : 10;
}

static int bad_path_pointer(void) {
  const char *bad[] = {NULL, (char *)KERNEL_ADDR, (char *)TRAPFRAME_ADDR, (char *)-1L};
  struct stat st;
  for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    const char *p = bad[i];
    if (open(p, O_RDONLY) != -1 || open(p, O_CREATE | O_RDWR) != -1 || mkdir(p) != -1 ||
        unlink(p) != -1 || chdir(p) != -1 || link(p, "x") != -1 || link("/hello", p) != -1 ||
        stat(p, &st) != -1)
      return 1 + (int)i;
  }
  // A name whose NUL would be past the heap's last mapped byte.
  char *top = (char *)(((uintptr_t)sbrk(0) + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
  memcpy(top - 3, "abc", 3);
  if (open(top - 3, O_CREATE | O_RDWR) != -1 || open("abc", O_RDONLY) != -1)
    return 10;
  return 0;
}

// A path of MAXPATH bytes or more (abi.h; the NUL included) is refused whole, even
// when every name in it is short; a name longer than DIRSIZ (fs_gen.h) is refused
// anywhere in a path, never cut.
static int path_too_long(void) {
  char path[MAXPATH + 32];
  unlink("fourteen-chars");
  int n = 0;
  while (n < MAXPATH - 4)
    path[n++] = '.', path[n++] = '/';
  strcpy(path + n, "fourteen-chars");  // MAXPATH + 10 bytes
  if (open(path, O_CREATE | O_RDWR) != -1 || mkdir(path) != -1)
    return 1;
  strcpy(path + MAXPATH - 24, "fourteen-chars");  // MAXPATH - 10 bytes: fine
  int fd = open(path, O_CREATE | O_RDWR);
  if (fd < 0)
    return 2;
  close(fd);
  return unlink("fourteen-chars") == 0 ? 0 : 3;
}

static int name_too_long(void) {
  char name[DIRSIZ + 2], cut[DIRSIZ + 1], sub[DIRSIZ + 8];
  memset(name, 'n', DIRSIZ + 1);
  name[DIRSIZ + 1] = 0;
  memmove(cut, name, DIRSIZ);  // what a kernel that cut the name would have made
  cut[DIRSIZ] = 0;
  strcpy(sub, name);
  strcpy(sub + DIRSIZ + 1, "/f");
  unlink(name);
  unlink(cut);
  if (open(name, O_CREATE | O_RDWR) != -1 || mkdir(name) != -1)
    return 1;
  if (open(cut, O_RDONLY) != -1)
    return 2;
  if (open(sub, O_RDONLY) != -1 || chdir(name) != -1)
    return 3;
  // A name of exactly DIRSIZ bytes is whole, and found by all of it.
  int fd = open(cut, O_CREATE | O_RDWR);
  if (fd < 0)
    return 4;
  close(fd);
  cut[DIRSIZ - 1] = 'm';
  if (open(cut, O_RDONLY) != -1)
    return 5;
  cut[DIRSIZ - 1] = 'n';
  return unlink(cut) == 0 ? 0 : 6;
}

static int open_dir_for_writing(void) {
  if (open(".", O_WRONLY) != -1 || open(".", O_RDWR) != -1 || open("/", O_RDWR) != -1)
    return 1;
  if (open(".", O_CREATE | O_RDWR) != -1 || open("/", O_CREATE | O_WRONLY | O_TRUNC) != -1)
    return 2;
  int fd = open(".", O_RDONLY);
  if (fd < 0 || write(fd, "x", 1) != -1)
    return 3;
  close(fd);
  // O_CREATE of a name that is a directory does not make it a file.
  unlink("odw");
  if (mkdir("odw") != 0 || open("odw", O_CREATE | O_RDWR) != -1)
    return 4;
  struct stat st;
  if (stat("odw", &st) != 0 || (st.mode & S_IFMT) != S_IFDIR)
    return 5;
  return unlink("odw") == 0 ? 0 : 6;
}

static int access_modes(void) {
  char c;
  unlink("acc");
  if (put("acc", "r") < 0)
    return 1;
  int r = open("acc", O_RDONLY), w = open("acc", O_WRONLY);
  if (r < 0 || w < 0 || write(r, "x", 1) != -1 || read(w, &c, 1) != -1)
    return 2;
  if (open("acc", O_ACCMODE) != -1 || open("acc", 0x100) != -1)
    return 3;  // both access bits; an unknown flag
  if (open("no-such", O_RDONLY) != -1 || open("no-such-dir/f", O_CREATE | O_RDWR) != -1)
    return 4;
  close(r);
  close(w);
  return holds("acc", "r") && unlink("acc") == 0 ? 0 : 5;
}

// With 0, 1 and 2 closed too, 16 opens succeed and the 17th fails; so do dup() and
// pipe() then, and a pipe() that finds only one free slot leaves it free.
static int too_many_files(void) {
  int fds[NOFILE + 1], n = 0;
  close(STDIN);
  close(STDOUT);
  close(STDERR);
  while (n <= NOFILE && (fds[n] = open("/hello", O_RDONLY)) >= 0)
    n++;
  if (n != NOFILE)
    return 1;
  int p[2];
  if (dup(fds[0]) != -1 || pipe(p) != -1)
    return 2;
  close(fds[5]);
  if (pipe(p) != -1)
    return 3;
  if (open("/hello", O_RDONLY) != fds[5])
    return 4;  // the free slot is still free, and the lowest
  for (int i = 0; i < n; i++)
    close(fds[i]);
  if (pipe(p) != 0 || p[0] != 0 || p[1] != 1)
    return 5;
  return 0;
}

// Five children hold 11 files open each (with 0, 1, 2 and two pipe ends, all their
// NOFILE), more distinct inodes than the kernel keeps in memory: the opens past that fail, and so does a create (-1, not a panic); once they
// have exited everything works again. (That the create left no inode allocated on the
// disk is for fsck to see afterwards: tests/kernel/test_files.py.)
#define HOLDERS 5
#define HELD (NOFILE - 5)
_Static_assert(HOLDERS * HELD > NINODE, "the holders must fill the inode table");

static void held_name(char *name, int child, int i) {
  snprintf(name, 16, "itf%d", child * HELD + i);
}

static int inode_table_full(void) {
  char name[16];
  for (int i = 0; i < HOLDERS * HELD; i++) {
    held_name(name, 0, i);
    if (put(name, "") < 0)
      return 1;
  }
  int ready[2], done[2], pids[HOLDERS];
  if (pipe(ready) != 0 || pipe(done) != 0)
    return 2;
  for (int c = 0; c < HOLDERS; c++) {
    if ((pids[c] = fork()) == 0) {
      close(ready[0]);
      close(done[1]);
      for (int i = 0; i < HELD; i++) {
        held_name(name, c, i);
        open(name, O_RDONLY);  // past the table's end: -1
      }
      char byte = 'r';
      write(ready[1], &byte, 1);
      read(done[0], &byte, 1);  // end of file once the parent closes its write end
      exit(0);
    }
  }
  close(ready[1]);
  close(done[0]);
  char byte;
  for (int i = 0; i < HOLDERS; i++)
    if (read(ready[0], &byte, 1) != 1)
      return 3;
  int full = open("itf-new", O_CREATE | O_RDWR) == -1 && mkdir("itf-dir") == -1;
  close(done[1]);
  int status;
  for (int i = 0; i < HOLDERS; i++)
    waitpid(pids[i], &status);
  if (!full)
    return 4;
  int fd = open("itf-new", O_CREATE | O_RDWR);
  if (fd < 0 || close(fd) != 0 || unlink("itf-new") != 0)
    return 5;
  for (int i = 0; i < HOLDERS * HELD; i++) {
    held_name(name, 0, i);
    if (unlink(name) != 0)
      return 6;
  }
  return 0;
}

// Write until the disk is full: the write comes back short (or -1), not a panic, and
// then -1; after the file is removed its blocks are free again: the same amount fits.
static long fill(const char *name) {
  static char buf[4 * BSIZE];
  long total = 0, n;
  int fd = open(name, O_CREATE | O_WRONLY | O_TRUNC);
  if (fd < 0)
    return -1;
  memset(buf, 'f', sizeof(buf));
  while ((n = write(fd, buf, sizeof(buf))) == (long)sizeof(buf))
    total += n;
  if (n > 0)
    total += n;
  // Full: nothing more goes in.
  if (write(fd, buf, sizeof(buf)) != -1 || size_of_fd(fd) != total)
    total = -2;
  close(fd);
  return total;
}

static int disk_full(void) {
  unlink("full");
  long first = fill("full");
  if (first <= 0)
    return 1;
  // Another file cannot grow either (it may get an inode: no data block).
  int fd = open("full2", O_CREATE | O_WRONLY);
  if (fd >= 0 && write(fd, "x", 1) != -1)
    return 2;
  if (fd >= 0)
    close(fd);
  unlink("full2");
  if (unlink("full") != 0)
    return 3;
  long again = fill("full");
  if (again != first)
    return 4;
  return unlink("full") == 0 ? 0 : 5;
}

// ---- the table ----------------------------------------------------------------------

struct test {
  const char *name;
  int (*fn)(void);  // returns 0 for pass
};

static const struct test tests[] = {
    {"create_write_read", create_write_read},
    {"create_existing", create_existing},
    {"o_trunc", o_trunc},
    {"o_append", o_append},
    {"append_concurrent", append_concurrent},
    {"read_at_eof", read_at_eof},
    {"offset_shared_fork", offset_shared_fork},
    {"offset_separate_opens", offset_separate_opens},
    {"dup_shares_offset", dup_shares_offset},
    {"dup_lowest_fd", dup_lowest_fd},
    {"link_nlink", link_nlink},
    {"link_errors", link_errors},
    {"unlink_open_file", unlink_open_file},
    {"mkdir_chdir", mkdir_chdir},
    {"create_in_removed_dir", create_in_removed_dir},
    {"chdir_dotdot_root", chdir_dotdot_root},
    {"getdents_lists", getdents_lists},
    {"rmdir_nonempty", rmdir_nonempty},
    {"big_directory", big_directory},
    {"concurrent_create", concurrent_create},
    {"pipe_data", pipe_data},
    {"pipe_eof", pipe_eof},
    {"pipe_no_reader", pipe_no_reader},
    {"pipe_reader_gone", pipe_reader_gone},
    {"fstat_types", fstat_types},
    {"exec_path", exec_path},
    {"exec_errors", exec_errors},
    {"large_file", large_file},
    {"bad_fd", bad_fd},
    {"bad_buffer", bad_buffer},
    {"bad_path_pointer", bad_path_pointer},
    {"path_too_long", path_too_long},
    {"name_too_long", name_too_long},
    {"open_dir_for_writing", open_dir_for_writing},
    {"access_modes", access_modes},
    {"too_many_files", too_many_files},
    {"inode_table_full", inode_table_full},
    {"disk_full", disk_full},
};

static const char *case_name(unsigned i) {
  return tests[i].name;
}

int main(int argc, char **argv) {
  if (refuse_unknown_cases("fstests", argc, argv, case_name,
                           sizeof(tests) / sizeof(tests[0])))
    return 2;
  int passed = 0, failed = 0;
  for (unsigned i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
    if (!test_selected(tests[i].name, argc, argv))
      continue;
    int status = in_child(tests[i].fn);
    if (status == 0)
      printf("PASS %s\n", tests[i].name);
    else
      printf("FAIL %s (%d)\n", tests[i].name, status);
    status == 0 ? passed++ : failed++;
  }
  printf("fstests: %d passed, %d failed\n", passed, failed);
  return failed;
}
