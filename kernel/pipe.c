// pipe.c: pipes: a PIPESIZE-byte ring between a write end and a read end. A reader
// sleeps while the ring is empty and some write end is open (none open: end of
// file, 0); a writer sleeps while it is full and a read end is open (none open: -1).
#include "defs.h"
#include "fs.h"
#include "proc.h"

struct pipe {
  char data[PIPESIZE];
  uint32_t nread;   // bytes read so far; data[nread % PIPESIZE] is the next
  uint32_t nwrite;  // bytes written so far
  int readopen;
  int writeopen;
};

// A new pipe and its two open files (read end, write end); -1 if out of memory or
// files.
int pipealloc(struct file **r, struct file **w) {
  struct pipe *pi = 0;
  *r = *w = 0;
  if ((*r = filealloc()) == 0 || (*w = filealloc()) == 0 || (pi = kalloc()) == 0) {
    if (*r)
      fileclose(*r);
    if (*w)
      fileclose(*w);
    return -1;
  }
  pi->nread = pi->nwrite = 0;
  pi->readopen = pi->writeopen = 1;
  **r = (struct file){.type = FD_PIPE, .ref = 1, .readable = 1, .pipe = pi};
  **w = (struct file){.type = FD_PIPE, .ref = 1, .writable = 1, .pipe = pi};
  return 0;
}

void pipeclose(struct pipe *pi, int writable) {
  if (writable) {
    pi->writeopen = 0;
    wakeup(&pi->nread);   // readers see end of file
  } else {
    pi->readopen = 0;
    wakeup(&pi->nwrite);  // writers see the broken pipe
  }
  if (!pi->readopen && !pi->writeopen)
    kfree(pi);
}

// Which of pi's counters chan is ("nread", "nwrite"), or 0: for procdump.c.
const char *pipe_chan(struct pipe *pi, void *chan) {
  if (chan == &pi->nread)
    return "nread";
  if (chan == &pi->nwrite)
    return "nwrite";
  return 0;
}

// Lab (pipes): pipewrite and piperead, with sleep() and wakeup() (proc.c).
long pipewrite(struct pipe *pi, uintptr_t src, size_t n) {
  // BEGIN SOLUTION
  size_t done = 0;
  while (done < n) {
    if (!pi->readopen)
      return done > 0 ? (long)done : -1;
    if (pi->nwrite == pi->nread + PIPESIZE) {
      wakeup(&pi->nread);
      if (sleep_intr(&pi->nwrite) < 0)  // a signal came (signal.c)
        return done > 0 ? (long)done : -1;
      continue;
    }
    char ch;
    if (copyin(myproc()->pagetable, &ch, src + done, 1) < 0)
      return done > 0 ? (long)done : -1;
    pi->data[pi->nwrite++ % PIPESIZE] = ch;
    done++;
  }
  wakeup(&pi->nread);
  return (long)done;
  // HANDOUT: (void)pi, (void)src, (void)n;
  // HANDOUT: return -1;
  // END SOLUTION
}

long piperead(struct pipe *pi, uintptr_t dst, size_t n) {
  // BEGIN SOLUTION
  while (pi->nread == pi->nwrite && pi->writeopen)
    if (sleep_intr(&pi->nread) < 0)  // a signal came (signal.c)
      return -1;
  size_t done = 0;
  while (done < n && pi->nread != pi->nwrite) {
    char ch = pi->data[pi->nread % PIPESIZE];
    if (copyout(myproc()->pagetable, dst + done, &ch, 1) < 0)
      return done > 0 ? (long)done : -1;
    pi->nread++;
    done++;
  }
  wakeup(&pi->nwrite);
  return (long)done;
  // HANDOUT: (void)pi, (void)dst, (void)n;
  // HANDOUT: return -1;
  // END SOLUTION
}
