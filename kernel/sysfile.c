// sysfile.c: the file system calls. Each checks its arguments (-1 for a bad
// descriptor, pointer, path or length, never a kernel fault) and calls file.c, fs.c
// or pipe.c. Numbers and argument order follow rCore-Tutorial / uCore-Tutorial, whose
// calls take a path first (openat(path, flags, mode), linkat(old, new), ...); the
// Linux order with a leading dirfd is accepted too when that dirfd is AT_FDCWD, the
// only directory fd either course passes.
#include "abi.h"
#include "defs.h"
#include "fs.h"
#include "memlayout.h"
#include "proc.h"
#include "riscv.h"
#include "trapframe.h"

// ---- file descriptors ---------------------------------------------------------------

// The open file behind fd, or 0.
static struct file *fd_file(long fd) {
  if (fd < 0 || fd >= NOFILE)
    return 0;
  return myprocess()->ofile[fd];
}

// The lowest free descriptor, now naming f; -1 if all NOFILE are in use.
static int fdalloc(struct file *f) {
  struct proc *p = myprocess();
  for (int fd = 0; fd < NOFILE; fd++)
    if (p->ofile[fd] == 0) {
      p->ofile[fd] = f;
      return fd;
    }
  return -1;
}

// Is every byte of [va, va+len) in mapped user pages with perm? read() and write()
// check their whole buffer first, so a bad one fails at once with nothing done (and
// a read of the console does not wait for input it could not store).
static int user_range_ok(uintptr_t va, size_t len, int perm) {
  pagetable_t pt = myproc()->pagetable;
  if (va + len < va)
    return 0;
  for (uintptr_t a = PGROUNDDOWN(va); len > 0 && a < va + len; a += PGSIZE)
    if (walkaddr(pt, a, perm) == 0)
      return 0;
  return 1;
}

long sys_read(int fd, uintptr_t buf, size_t len) {
  struct file *f = fd_file(fd);
  if (f == 0 || !user_range_ok(buf, len, PTE_W))
    return -1;
  return fileread(f, buf, len);
}

long sys_write(int fd, uintptr_t buf, size_t len) {
  struct file *f = fd_file(fd);
  if (f == 0 || !user_range_ok(buf, len, PTE_R))
    return -1;
  return filewrite(f, buf, len);
}

long sys_close(int fd) {
  struct file *f = fd_file(fd);
  if (f == 0)
    return -1;
  myprocess()->ofile[fd] = 0;
  fileclose(f);
  return 0;
}

long sys_dup(int fd) {
  struct file *f = fd_file(fd);
  int nfd;
  if (f == 0 || (nfd = fdalloc(f)) < 0)
    return -1;
  filedup(f);
  return nfd;
}

// fstat is the base system's (ls needs it); the nlink it reports counts the names
// linkat and unlinkat (lab 8, hard links, rCore-Tutorial chapter 6) give an inode.
long sys_fstat(int fd, uintptr_t st) {
  struct file *f = fd_file(fd);
  struct stat s;
  if (f == 0 || filestat(f, &s) < 0)
    return -1;
  return copyout(myproc()->pagetable, st, &s, sizeof(s));
}

// pipe2(fds, flags): fds[0] the read end, fds[1] the write end. As rCore's and
// uCore's user libraries, the two descriptors are register-sized words (usize,
// uint64). flags is ignored: uCore's pipe(fds) makes the call with fds alone, so a1
// holds whatever the caller left there, and uCore's own kernel reads only fds.
long sys_pipe2(uintptr_t fds, int flags) {
  (void)flags;
  struct file *r, *w;
  int fd0 = -1, fd1 = -1;
  if (pipealloc(&r, &w) < 0)
    return -1;
  uintptr_t out[2];
  if ((fd0 = fdalloc(r)) < 0 || (fd1 = fdalloc(w)) < 0 ||
      (out[0] = (uintptr_t)fd0, out[1] = (uintptr_t)fd1,
       copyout(myproc()->pagetable, fds, out, sizeof(out)) < 0)) {
    if (fd0 >= 0)
      myprocess()->ofile[fd0] = 0;
    if (fd1 >= 0)
      myprocess()->ofile[fd1] = 0;
    fileclose(r);
    fileclose(w);
    return -1;
  }
  return 0;
}

// ---- paths --------------------------------------------------------------------------

// Argument n of the current system call, shifted past a leading AT_FDCWD (see the
// top of this file): the calls below read their arguments through this.
static uintptr_t arg(int n) {
  struct trapframe *tf = myproc()->trapframe;
  uintptr_t a[6] = {tf->a0, tf->a1, tf->a2, tf->a3, tf->a4, tf->a5};
  return (intptr_t)a[0] == AT_FDCWD ? a[n + 1] : a[n];
}

// For linkat: its Linux form is (AT_FDCWD, old, AT_FDCWD, new, flags). (Unused in
// the hard-links lab's handout, until the student's linkat calls it.)
__attribute__((unused)) static uintptr_t arg_linkat(int n) {
  struct trapframe *tf = myproc()->trapframe;
  if ((intptr_t)tf->a0 == AT_FDCWD)
    return n == 0 ? tf->a1 : tf->a3;
  return n == 0 ? tf->a0 : tf->a1;
}

static int fetchpath(uintptr_t upath, char *path) {
  return copyinstr(myproc()->pagetable, path, upath, MAXPATH);
}

// Make a new inode of type at path, linked into its parent directory: locked and
// referenced. 0 if the parent does not exist, the name is taken (except that
// O_CREATE of an existing file opens it: the existing file is returned when
// type == T_FILE and it is a file), or the disk or inode table is full.
static struct inode *create(const char *path, int16_t type) {
  char name[DIRSIZ + 1];
  struct inode *dp = nameiparent(path, name), *ip;
  if (dp == 0)
    return 0;
  ilock(dp);
  if ((ip = dirlookup(dp, name, 0)) != 0) {
    iunlockput(dp);
    ilock(ip);
    if (type == T_FILE && ip->type == T_FILE)
      return ip;
    iunlockput(ip);
    return 0;
  }
  if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || (ip = ialloc(type)) == 0) {
    iunlockput(dp);
    return 0;
  }
  ilock(ip);
  ip->nlink = 1;
  iupdate(ip);
  if (type == T_DIR &&  // "." and "..", which do not count as links (docs/kernel/6-files.md)
      (dirlink(ip, ".", ip->inum) < 0 || dirlink(ip, "..", dp->inum) < 0))
    goto undo;
  if (dirlink(dp, name, ip->inum) < 0)
    goto undo;
  iunlockput(dp);
  return ip;
undo:
  ip->nlink = 0;  // iput frees it and whatever blocks it got
  iupdate(ip);
  iunlockput(ip);
  iunlockput(dp);
  return 0;
}

// openat(path, flags, mode): flags O_RDONLY/O_WRONLY/O_RDWR, plus O_CREATE, O_TRUNC,
// O_APPEND; mode is ignored (no permissions). A directory opens read-only (for
// getdents64). Returns the descriptor or -1.
long sys_openat(uintptr_t upath, int flags, int mode) {
  (void)mode;
  char path[MAXPATH];
  upath = arg(0), flags = (int)arg(1);
  int acc = flags & O_ACCMODE;
  if (fetchpath(upath, path) < 0 || acc == O_ACCMODE ||
      (flags & ~(O_ACCMODE | O_CREATE | O_TRUNC | O_APPEND)) != 0 || !fs_mounted())
    return -1;
  begin_op();
  struct inode *ip;
  if (flags & O_CREATE) {
    ip = create(path, T_FILE);
  } else if ((ip = namei(path)) != 0) {
    ilock(ip);
  }
  if (ip == 0 || (ip->type == T_DIR && acc != O_RDONLY)) {
    if (ip)
      iunlockput(ip);
    end_op();
    return -1;
  }
  struct file *f = filealloc();
  int fd = f ? fdalloc(f) : -1;
  if (fd < 0) {
    if (f)
      fileclose(f);
    iunlockput(ip);
    end_op();
    return -1;
  }
  if ((flags & O_TRUNC) && ip->type == T_FILE && acc != O_RDONLY)
    itruncate(ip);
  *f = (struct file){.type = FD_INODE, .ref = 1, .ip = ip, .readable = acc != O_WRONLY,
                     .writable = acc != O_RDONLY, .append = (flags & O_APPEND) != 0};
  iunlock(ip);
  end_op();
  return fd;
}

long sys_mkdirat(uintptr_t upath, int mode) {
  (void)mode;
  char path[MAXPATH];
  upath = arg(0);
  if (fetchpath(upath, path) < 0 || !fs_mounted())
    return -1;
  begin_op();
  struct inode *ip = create(path, T_DIR);
  if (ip)
    iunlockput(ip);
  end_op();
  return ip ? 0 : -1;
}

long sys_chdir(uintptr_t upath) {
  char path[MAXPATH];
  struct proc *p = myprocess();
  struct inode *ip;
  if (fetchpath(upath, path) < 0 || !fs_mounted())
    return -1;
  begin_op();
  if ((ip = namei(path)) == 0) {
    end_op();
    return -1;
  }
  ilock(ip);
  if (ip->type != T_DIR) {
    iunlockput(ip);
    end_op();
    return -1;
  }
  iunlock(ip);
  if (p->cwd)
    iput(p->cwd);
  p->cwd = ip;
  end_op();
  return 0;
}

// linkat(old, new): a second name for the file old (not a directory). 0 or -1 (new
// exists, old does not, or old is a directory).
long sys_linkat(uintptr_t uold, uintptr_t unew) {
  // BEGIN SOLUTION
  char old[MAXPATH], new[MAXPATH], name[DIRSIZ + 1];
  uold = arg_linkat(0), unew = arg_linkat(1);
  if (fetchpath(uold, old) < 0 || fetchpath(unew, new) < 0 || !fs_mounted())
    return -1;
  begin_op();
  struct inode *ip = namei(old), *dp = 0;
  if (ip == 0) {
    end_op();
    return -1;
  }
  ilock(ip);
  if (ip->type == T_DIR) {
    iunlockput(ip);
    end_op();
    return -1;
  }
  ip->nlink++;
  iupdate(ip);
  iunlock(ip);
  if ((dp = nameiparent(new, name)) == 0)
    goto bad;
  ilock(dp);
  if (dirlink(dp, name, ip->inum) < 0) {
    iunlockput(dp);
    goto bad;
  }
  iunlockput(dp);
  iput(ip);
  end_op();
  return 0;
bad:
  ilock(ip);
  ip->nlink--;
  iupdate(ip);
  iunlockput(ip);
  end_op();
  return -1;
  // HANDOUT: (void)uold, (void)unew;
  // HANDOUT: return -1;
  // END SOLUTION
}

// unlinkat(path, flags): remove a name; the file goes when its last name and last
// open descriptor are gone. An empty directory is removed too (flags ignored, as
// rCore does); "." and ".." cannot be. 0 or -1.
long sys_unlinkat(uintptr_t upath, int flags) {
  (void)flags;
  // BEGIN SOLUTION
  char path[MAXPATH], name[DIRSIZ + 1];
  upath = arg(0);
  if (fetchpath(upath, path) < 0 || !fs_mounted())
    return -1;
  begin_op();
  struct inode *dp = nameiparent(path, name), *ip = 0;
  uint32_t off;
  if (dp == 0) {
    end_op();
    return -1;
  }
  ilock(dp);
  if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
      (ip = dirlookup(dp, name, &off)) == 0)
    goto bad;
  ilock(ip);
  if (ip->type == T_DIR && !dir_is_empty(ip)) {
    iunlockput(ip);
    goto bad;
  }
  struct dirent de;
  memset(&de, 0, sizeof(de));
  if (writei(dp, 0, (uintptr_t)&de, off, sizeof(de)) != sizeof(de))
    panic("unlinkat: writei");
  iunlockput(dp);
  ip->nlink--;
  iupdate(ip);
  iunlockput(ip);
  end_op();
  return 0;
bad:
  iunlockput(dp);
  end_op();
  return -1;
  // HANDOUT: (void)upath;
  // HANDOUT: return -1;
  // END SOLUTION
}

// getdents64(fd, buf, len): the next entries of the directory open at fd, as Linux's
// struct linux_dirent64 records (abi.h), as many as fit in len. Returns the bytes
// filled, 0 at the end, -1 (not a directory, bad buffer, or len too small for the
// next entry).
long sys_getdents64(int fd, uintptr_t buf, size_t len) {
  struct file *f = fd_file(fd);
  if (f == 0 || f->type != FD_INODE || buf + len < buf)
    return -1;
  struct inode *ip = f->ip;
  ilock(ip);
  if (ip->type != T_DIR) {
    iunlock(ip);
    return -1;
  }
  size_t filled = 0;
  struct dirent de;
  while (f->off + sizeof(de) <= ip->size) {
    if (readi(ip, 0, (uintptr_t)&de, f->off, sizeof(de)) != sizeof(de))
      panic("getdents64: readi");
    if (de.inum == 0) {
      f->off += sizeof(de);
      continue;
    }
    char name[DIRSIZ + 1];
    memset(name, 0, sizeof(name));
    memmove(name, de.name, DIRSIZ);
    size_t nlen = strlen(name);
    size_t reclen = (DIRENT64_NAME_OFFSET + nlen + 1 + 7) & ~(size_t)7;
    if (filled + reclen > len) {
      if (filled == 0)
        filled = (size_t)-1;
      break;
    }
    // "." and ".." are directories; for them we must not lock the inode: ".." is
    // the parent, and locking a parent while holding a child could deadlock with
    // unlinkat, which locks parent then child.
    int type = T_DIR;
    if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0) {
      struct inode *child = iget(de.inum);
      if (child == 0) {
        iunlock(ip);
        return filled ? (long)filled : -1;
      }
      ilock(child);
      type = child->type;
      iunlockput(child);  // never the last reference: a directory entry names it
    }
    uint8_t rec[DIRENT64_NAME_OFFSET + DIRSIZ + 1 + 8];
    memset(rec, 0, sizeof(rec));
    struct linux_dirent64 *d = (struct linux_dirent64 *)rec;
    d->d_ino = de.inum;
    d->d_off = (int64_t)(f->off + sizeof(de));
    d->d_reclen = (uint16_t)reclen;
    d->d_type = type == T_DIR ? DT_DIR : type == T_FILE ? DT_REG : DT_CHR;
    memmove(rec + DIRENT64_NAME_OFFSET, name, nlen + 1);
    if (copyout(myproc()->pagetable, buf + filled, rec, reclen) < 0) {
      filled = filled ? filled : (size_t)-1;
      break;
    }
    filled += reclen;
    f->off += sizeof(de);
  }
  iunlock(ip);
  return (long)filled;
}
