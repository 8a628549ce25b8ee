// file.c: open files: the table of them, and reading, writing and closing whatever
// kind each one is (the console, a pipe, an inode).
#include "abi.h"
#include "defs.h"
#include "fs.h"
#include "proc.h"

static struct file ftable[NFILE];

// A free entry with ref 1, or 0 if all NFILE are open.
struct file *filealloc(void) {
  for (struct file *f = ftable; f < &ftable[NFILE]; f++)
    if (f->ref == 0) {
      memset(f, 0, sizeof(*f));
      f->ref = 1;
      return f;
    }
  return 0;
}

struct file *filedup(struct file *f) {
  if (f->ref < 1)
    panic("filedup");
  f->ref++;
  return f;
}

// Drop a reference; the last one closes the pipe end or releases the inode.
void fileclose(struct file *f) {
  if (f->ref < 1)
    panic("fileclose");
  if (--f->ref > 0)
    return;
  struct file copy = *f;
  f->type = FD_NONE;
  if (copy.type == FD_PIPE) {
    pipeclose(copy.pipe, copy.writable);
  } else if (copy.type == FD_INODE) {
    begin_op();  // the last reference to an unlinked file frees it
    iput(copy.ip);
    end_op();
  }
}

// fstat: an inode's fields; the console and pipes get a character-device or FIFO
// mode and inode number 0.
int filestat(struct file *f, struct stat *st) {
  if (f->type == FD_INODE) {
    ilock(f->ip);
    stati(f->ip, st);
    iunlock(f->ip);
  } else {
    memset(st, 0, sizeof(*st));
    st->mode = f->type == FD_PIPE ? S_IFIFO : S_IFCHR;
    st->nlink = 1;
  }
  return 0;
}

// Console input: wait for at least one byte, then return what has arrived (up to n,
// stopping after a newline). Waiting is a yield() loop: the console (SBI) raises no
// interrupt we could sleep on.
static long console_read(uintptr_t dst, size_t n) {
  pagetable_t pt = myproc()->pagetable;
  size_t got = 0;
  while (got < n) {
    int c = console_getc();
    if (c < 0) {
      if (got > 0)
        break;
      if (wait_interrupted())  // as sleep_intr() would (proc.c)
        return -1;
      yield();
      continue;
    }
    char ch = (char)c;
    if (copyout(pt, dst + got, &ch, 1) < 0)
      return got > 0 ? (long)got : -1;
    got++;
    if (ch == '\n')
      break;
  }
  return (long)got;
}

static long console_write_user(uintptr_t src, size_t n) {
  char chunk[128];
  for (size_t done = 0; done < n;) {
    size_t m = n - done < sizeof(chunk) ? n - done : sizeof(chunk);
    if (copyin(myproc()->pagetable, chunk, src + done, m) < 0)
      return done > 0 ? (long)done : -1;
    console_write(chunk, m);
    done += m;
  }
  return (long)n;
}

// Read up to n bytes into user address dst: bytes read, 0 at end of file, -1.
long fileread(struct file *f, uintptr_t dst, size_t n) {
  if (!f->readable)
    return -1;
  switch (f->type) {
  case FD_CONSOLE:
    return console_read(dst, n);
  case FD_PIPE:
    return piperead(f->pipe, dst, n);
  case FD_INODE: {
    ilock(f->ip);
    long r = readi(f->ip, 1, dst, f->off, n > UINT32_MAX ? UINT32_MAX : (uint32_t)n);
    if (r > 0)
      f->off += (uint32_t)r;
    iunlock(f->ip);
    return r;
  }
  default:
    panic("fileread");
  }
}

// Write n bytes from user address src: bytes written (short when the disk fills up),
// or -1. A file write is split into log operations of at most WRITE_CHUNK bytes, each
// of which fits in the log; so a large write is not all-or-nothing, only each chunk.
long filewrite(struct file *f, uintptr_t src, size_t n) {
  if (!f->writable)
    return -1;
  switch (f->type) {
  case FD_CONSOLE:
    return console_write_user(src, n);
  case FD_PIPE:
    return pipewrite(f->pipe, src, n);
  case FD_INODE: {
    size_t done = 0;
    while (done < n) {
      uint32_t m = n - done < WRITE_CHUNK ? (uint32_t)(n - done) : WRITE_CHUNK;
      begin_op();
      ilock(f->ip);
      if (f->append)
        f->off = f->ip->size;
      long r = writei(f->ip, 1, src + done, f->off, m);
      if (r > 0)
        f->off += (uint32_t)r;
      iunlock(f->ip);
      end_op();
      if (r < 0)
        return done > 0 ? (long)done : -1;
      done += (size_t)r;
      if ((uint32_t)r != m)
        break;  // the disk is full, or the file at its largest
    }
    return done > 0 || n == 0 ? (long)done : -1;
  }
  default:
    panic("filewrite");
  }
}

// The first process's descriptors 0 (console input), 1 and 2 (console output, one
// shared file); everyone else inherits them through fork. -1 if out of files.
int console_files(struct proc *p) {
  struct file *in = filealloc(), *out = in ? filealloc() : 0;
  if (out == 0) {
    if (in)
      fileclose(in);
    return -1;
  }
  *in = (struct file){.type = FD_CONSOLE, .ref = 1, .readable = 1};
  *out = (struct file){.type = FD_CONSOLE, .ref = 2, .writable = 1};
  p->ofile[0] = in;
  p->ofile[1] = p->ofile[2] = out;
  return 0;
}
