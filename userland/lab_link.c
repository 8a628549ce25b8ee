// lab_link MODE TOKEN: the hard-links lab's test program (labs/link). Prints
// "PASS TOKEN" only if every check of MODE held; otherwise a FAIL line saying which.
//
//   link      a second name for a file: same inode, nlink 2, the same bytes; unlink
//             one name (nlink 1), then the other (the file is gone)
//   errors    what must return -1: linking onto an existing name, a directory, a
//             missing file; unlinking a missing name, "." or ".."; fstat of a bad fd
//             or into a bad pointer
//   unlinked  a file unlinked while open stays readable through its fd (nlink 0)
//             until closed; the grader then checks the disk has no orphan inode
//   subdir    links between directories: d/x and e/y name one file
#include "user.h"

static int failed(const char *what) {
  printf("FAIL %s\n", what);
  return 1;
}

static int make(const char *path, const char *text) {
  int fd = openat(path, O_CREATE | O_WRONLY | O_TRUNC, 0);
  if (fd < 0)
    return -1;
  long n = (long)strlen(text);
  int ok = write(fd, text, (size_t)n) == n;
  close(fd);
  return ok ? 0 : -1;
}

static int stat_path(const char *path, struct stat *st) {
  int fd = openat(path, O_RDONLY, 0);
  if (fd < 0)
    return -1;
  int r = fstat(fd, st);
  close(fd);
  return r;
}

static int same_text(const char *path, const char *text) {
  char buf[64] = {0};
  int fd = openat(path, O_RDONLY, 0);
  if (fd < 0)
    return 0;
  long n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  return n == (long)strlen(text) && strcmp(buf, text) == 0;
}

static int links(const char *token) {
  struct stat a, b;
  if (make("a", token) < 0)
    return failed("cannot create a");
  if (linkat("a", "b") != 0)
    return failed("linkat(a, b) did not return 0");
  if (stat_path("a", &a) < 0 || stat_path("b", &b) < 0)
    return failed("fstat of a or b");
  if (a.ino != b.ino || a.nlink != 2 || b.nlink != 2)
    return failed("a and b are not one inode with nlink 2");
  if ((a.mode & S_IFMT) != S_IFREG || a.size != strlen(token))
    return failed("fstat mode or size");
  if (!same_text("b", token))
    return failed("b does not read as a");
  if (unlinkat("a", 0) != 0)
    return failed("unlinkat(a)");
  if (openat("a", O_RDONLY, 0) >= 0)
    return failed("a opens after unlink");
  if (stat_path("b", &b) < 0 || b.nlink != 1)
    return failed("b's nlink is not 1 after unlinking a");
  if (unlinkat("b", 0) != 0 || openat("b", O_RDONLY, 0) >= 0)
    return failed("b still there after unlinking it");
  return 0;
}

static int errors(const char *token) {
  struct stat st;
  if (make("x", token) < 0 || make("y", token) < 0 || mkdirat("dir", 0) < 0)
    return failed("set-up");
  if (linkat("x", "y") != -1)
    return failed("linkat onto an existing name");
  if (linkat("dir", "dir2") != -1)
    return failed("linkat of a directory");
  if (linkat("missing", "z") != -1)
    return failed("linkat of a missing file");
  if (linkat("x", "nodir/z") != -1)
    return failed("linkat into a missing directory");
  if (unlinkat("missing", 0) != -1 || unlinkat(".", 0) != -1 || unlinkat("..", 0) != -1)
    return failed("unlinkat of missing, . or ..");
  if (fstat(99, &st) != -1 || fstat(-1, &st) != -1)
    return failed("fstat of a bad fd");
  int fd = openat("x", O_RDONLY, 0);
  if (fd < 0 || fstat(fd, (struct stat *)KERNEL_ADDR) != -1)
    return failed("fstat into a kernel address");
  close(fd);
  if (stat_path("x", &st) < 0 || st.nlink != 1)
    return failed("a failed linkat changed nlink");
  return 0;
}

static int unlinked(const char *token) {
  struct stat st;
  char buf[64] = {0};
  if (make("u", token) < 0)
    return failed("set-up");
  int fd = openat("u", O_RDONLY, 0);
  if (fd < 0 || unlinkat("u", 0) != 0)
    return failed("open or unlink");
  if (fstat(fd, &st) != 0 || st.nlink != 0)
    return failed("an open, unlinked file's nlink is not 0");
  if (read(fd, buf, sizeof(buf) - 1) != (long)strlen(token) || strcmp(buf, token) != 0)
    return failed("an open, unlinked file's data is gone");
  close(fd);
  return 0;
}

static int subdir(const char *token) {
  struct stat a, b;
  if (mkdirat("d", 0) < 0 || mkdirat("e", 0) < 0 || make("d/x", token) < 0)
    return failed("set-up");
  if (linkat("d/x", "e/y") != 0)
    return failed("linkat(d/x, e/y)");
  if (stat_path("d/x", &a) < 0 || stat_path("e/y", &b) < 0 || a.ino != b.ino ||
      b.nlink != 2 || !same_text("e/y", token))
    return failed("d/x and e/y are not one file");
  if (unlinkat("d/x", 0) != 0 || !same_text("e/y", token))
    return failed("e/y after unlinking d/x");
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    printf("usage: lab_link link|errors|unlinked|subdir TOKEN\n");
    return 2;
  }
  const char *mode = argv[1], *token = argv[2];
  int r = strcmp(mode, "link") == 0       ? links(token)
          : strcmp(mode, "errors") == 0   ? errors(token)
          : strcmp(mode, "unlinked") == 0 ? unlinked(token)
          : strcmp(mode, "subdir") == 0   ? subdir(token)
                                          : failed("unknown mode");
  if (r == 0)
    printf("PASS %s\n", token);
  return r;
}
