// files.c: the classic Unix forms of the file-system calls, over the rCore-style
// ones in syscall.tbl (which take flags, a mode or a descriptor array the classic
// forms do not).
#include "user.h"

int open(const char *path, int flags) { return openat(path, flags, 0); }

int mkdir(const char *path) { return mkdirat(path, 0); }

// unlinkat removes an empty directory too, so rm and rmdir are both this.
int unlink(const char *path) { return unlinkat(path, 0); }

int link(const char *oldpath, const char *newpath) { return linkat(oldpath, newpath); }

// pipe2 stores two register-sized descriptors (rCore's usize pair); callers want ints.
int pipe(int fds[2]) {
  uintptr_t pair[2];
  if (pipe2(pair, 0) < 0)
    return -1;
  fds[0] = (int)pair[0];
  fds[1] = (int)pair[1];
  return 0;
}

// There is no stat system call: open the path read-only (which works for a
// directory too), fstat it, close it.
int stat(const char *path, struct stat *st) {
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return -1;
  int r = fstat(fd, st);
  close(fd);
  return r;
}

// Open path for a tool that reads files (cat, wc, grep): the descriptor, or -1 after
// one line on stderr naming prog and path. A directory is refused: read() would hand
// out its raw entries.
int open_for_reading(const char *prog, const char *path) {
  struct stat st;
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    fprintf(STDERR, "%s: %s: cannot open\n", prog, path);
    return -1;
  }
  if (fstat(fd, &st) == 0 && (st.mode & S_IFMT) == S_IFDIR) {
    fprintf(STDERR, "%s: %s: is a directory\n", prog, path);
    close(fd);
    return -1;
  }
  return fd;
}
