// ls [PATH...]: for each directory (the current one when none is named), one line per
// entry: name, type, inode number and size in bytes; a path that is not a directory
// lists itself. With several paths each directory's lines follow a "PATH:" line. Exit
// status 1 if a path could not be listed.
#include "user.h"


static const char *type_name(uint32_t mode) {
  switch (mode & S_IFMT) {
  case S_IFDIR: return "dir";
  case S_IFREG: return "file";
  case S_IFCHR: return "dev";
  case S_IFIFO: return "fifo";
  default: return "?";
  }
}

// The name is padded to 14 columns, as xv6's ls pads it; a longer name pushes the
// columns after it right.
static void show(const char *name, const struct stat *st) {
  printf("%-14s %-4s %3llu %llu\n", name, type_name(st->mode),
         (unsigned long long)st->ino, (unsigned long long)st->size);
}

// One line per entry of the directory open at fd, whose path is dir. 0, or -1 if an
// entry could not be examined.
static int list_dir(int fd, const char *dir) {
  static char buf[512];  // whole linux_dirent64 records (abi.h)
  char path[MAXPATH];
  int status = 0;
  long n;
  while ((n = getdents64(fd, buf, sizeof(buf))) > 0) {
    for (long off = 0; off < n;) {
      struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
      struct stat st;
      off += d->d_reclen;
      if (snprintf(path, sizeof(path), "%s/%s", dir, d->d_name) >= (int)sizeof(path) ||
          stat(path, &st) < 0) {
        fprintf(STDERR, "ls: %s/%s: cannot stat\n", dir, d->d_name);
        status = -1;
        continue;
      }
      show(d->d_name, &st);
    }
  }
  if (n < 0) {
    fprintf(STDERR, "ls: %s: cannot read directory\n", dir);
    return -1;
  }
  return status;
}

static int ls(const char *path, int header) {
  struct stat st;
  int fd = open(path, O_RDONLY), status = 0;
  if (fd < 0) {
    fprintf(STDERR, "ls: %s: cannot open\n", path);
    return -1;
  }
  if (fstat(fd, &st) < 0) {
    fprintf(STDERR, "ls: %s: cannot stat\n", path);
    status = -1;
  } else if ((st.mode & S_IFMT) == S_IFDIR) {
    if (header)
      printf("%s:\n", path);
    status = list_dir(fd, path);
  } else {
    show(path, &st);
  }
  close(fd);
  return status;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return ls(".", 0) < 0;
  int status = 0;
  for (int i = 1; i < argc; i++)
    if (ls(argv[i], argc > 2) < 0)
      status = 1;
  return status;
}
