// exec.c: load a user program from the initrd into a fresh address space.
//
// exec_load(p, path, args) builds the new address space completely (ELF segments,
// user stack, argv) before touching p's old one, so a failed exec leaves the caller
// intact to receive -1. Used by sys_exec (sysproc.c), userinit (proc.c) and
// sys_spawn (spawn.c).
#include "defs.h"
#include "elf.h"
#include "fs.h"
#include "memlayout.h"
#include "proc.h"
#include "riscv.h"
#include "trapframe.h"

// Arguments in kernel memory, on their way into a new user stack. One page.
#define ARGBUF_SIZE 3072
struct args {
  int argc;
  char *argv[MAXARG + 1];
  size_t used;
  char buf[ARGBUF_SIZE];  // the strings argv points into
};
_Static_assert(sizeof(struct args) <= PGSIZE, "struct args must fit in a page");

struct args *args_alloc(void) { return kalloc(); }
void args_free(struct args *a) { kfree(a); }
const char *args_argv0(struct args *a) { return a->argc > 0 ? a->argv[0] : ""; }

// Append one argument; -1 if there are too many or they do not fit.
int args_add(struct args *a, const char *s) {
  size_t n = strlen(s) + 1;
  if (a->argc >= MAXARG || a->used + n > ARGBUF_SIZE)
    return -1;
  a->argv[a->argc++] = memmove(a->buf + a->used, s, n);
  a->used += n;
  return 0;
}

// Append the strings of a user argv array (NULL-terminated) at uargv.
int args_copyin(struct args *a, pagetable_t pt, uintptr_t uargv) {
  for (int i = 0;; i++) {
    uintptr_t uarg;
    if (i > MAXARG || copyin(pt, &uarg, uargv + i * sizeof(uarg), sizeof(uarg)) < 0)
      return -1;
    if (uarg == 0)
      return 0;
    int n = copyinstr(pt, a->buf + a->used, uarg, ARGBUF_SIZE - a->used);
    if (n < 0 || a->argc >= MAXARG)
      return -1;
    a->argv[a->argc++] = a->buf + a->used;
    a->used += n + 1;
  }
}

// Where a program's bytes come from: a file on the disk (ip, locked) or, without a
// file system, an initrd entry in memory.
struct image {
  struct inode *ip;
  const uint8_t *mem;
  size_t size;
};

// Copy n bytes at offset off of the image to kernel address dst: 0, or -1 if the
// image is shorter.
static int image_read(const struct image *im, void *dst, size_t off, size_t n) {
  if (off > im->size || n > im->size - off)
    return -1;
  if (im->ip)
    return readi(im->ip, 0, (uintptr_t)dst, (uint32_t)off, (uint32_t)n) == (long)n ? 0 : -1;
  memmove(dst, im->mem + off, n);
  return 0;
}

// Copy n bytes of the image at off to user address va of pt, whatever the pages'
// permissions (the loader fills read-only text pages). The pages are mapped already,
// and the kernel maps all RAM at its physical address, so a page's frame is a kernel
// address we can write to.
static int load_bytes(pagetable_t pt, uintptr_t va, const struct image *im, size_t off,
                      size_t n) {
  while (n > 0) {
    uintptr_t pa = PTE2PA(*walk(pt, va, 0)) + va % PGSIZE;
    size_t chunk = PGSIZE - va % PGSIZE;
    chunk = chunk < n ? chunk : n;
    if (image_read(im, (void *)pa, off, chunk) < 0)
      return -1;
    n -= chunk, off += chunk, va += chunk;
  }
  return 0;
}

// Map one PT_LOAD segment and fill it from the file. Pages shared with an earlier
// segment keep their frame and gain this segment's permissions.
static int load_segment(pagetable_t pt, const struct image *im, const struct proghdr *ph) {
  int perm = PTE_U | (ph->flags & PF_R ? PTE_R : 0) | (ph->flags & PF_W ? PTE_W | PTE_R : 0) |
             (ph->flags & PF_X ? PTE_X : 0);
  for (uintptr_t a = PGROUNDDOWN(ph->vaddr); a < ph->vaddr + ph->memsz; a += PGSIZE) {
    pte_t *pte = walk(pt, a, 0);
    if (pte && (*pte & PTE_V))
      *pte |= perm;
    else if (uvmmap_zeroed(pt, a, PGSIZE, perm) < 0)
      return -1;
  }
  return load_bytes(pt, ph->vaddr, im, ph->off, ph->filesz);
}

// Check the ELF header and load every PT_LOAD segment into pt. Sets *entry and
// *image_end (the highest segment end). Anything malformed gives -1. Headers are
// copied out first: initrd data is only 4-byte aligned.
static int load_elf(pagetable_t pt, const struct image *im, uintptr_t *entry,
                    uintptr_t *image_end) {
  struct elfhdr eh;
  struct proghdr ph;
  size_t size = im->size;
  if (image_read(im, &eh, 0, sizeof(eh)) < 0)
    return -1;
  if (eh.magic != ELF_MAGIC || eh.class != ELFCLASS || eh.data != ELFDATA2LSB ||
      eh.type != ET_EXEC || eh.machine != EM_RISCV || eh.phentsize != sizeof(ph) ||
      eh.phoff > size || eh.phnum > (size - eh.phoff) / sizeof(ph))
    return -1;
  *image_end = USER_BASE;
  for (int i = 0; i < eh.phnum; i++) {
    if (image_read(im, &ph, eh.phoff + i * sizeof(ph), sizeof(ph)) < 0)
      return -1;
    if (ph.type != PT_LOAD || ph.memsz == 0)
      continue;
    if (ph.filesz > ph.memsz || ph.off > size || ph.filesz > size - ph.off ||
        ph.vaddr < PGSIZE || ph.vaddr + ph.memsz < ph.vaddr ||
        ph.vaddr + ph.memsz > USER_MMAP_TOP || load_segment(pt, im, &ph) < 0)
      return -1;
    if (ph.vaddr + ph.memsz > *image_end)
      *image_end = ph.vaddr + ph.memsz;
  }
  *entry = eh.entry;
  return 0;
}

// Push the argument strings and the argv[] array onto the new user stack, leaving
// sp 16-byte aligned as the calling convention requires.
static int push_args(pagetable_t pt, struct args *a, uintptr_t *sp, uintptr_t *uargv) {
  uintptr_t ptrs[MAXARG + 1];
  for (int i = a->argc - 1; i >= 0; i--) {
    size_t n = strlen(a->argv[i]) + 1;
    *sp -= n;
    if (copyout(pt, *sp, a->argv[i], n) < 0)
      return -1;
    ptrs[i] = *sp;
  }
  ptrs[a->argc] = 0;
  *sp = (*sp - (a->argc + 1) * sizeof(uintptr_t)) & ~(uintptr_t)15;
  *uargv = *sp;
  return copyout(pt, *sp, ptrs, (a->argc + 1) * sizeof(uintptr_t));
}

// Without a file system, "/sh", "./sh" and "sh" all name the initrd entry "sh".
static const char *program_name(const char *path) {
  while (*path == '/' || (path[0] == '.' && path[1] == '/'))
    path += *path == '/' ? 1 : 2;
  return path;
}

// Done with the image: unlock and drop the file (in a log operation, since dropping a
// reference may free a file unlinked meanwhile).
static void exec_release(struct image *im) {
  if (im->ip == 0)
    return;
  iunlock(im->ip);
  begin_op();
  iput(im->ip);
  end_op();
  im->ip = 0;
}

// Replace p's address space with the program at path, called with args. Returns
// argc (which lands in a0 as main's first argument) or -1 with p unchanged.
// With a file system, path is looked up there (relative to p's current directory:
// the caller's, or for the first process the root); without one, in the initrd.
int exec_load(struct proc *p, const char *path, struct args *a) {
  struct image im = {0};
  uintptr_t entry, image_end, sp = USTACK_TOP, uargv;
  const char *name = program_name(path);
  if (fs_mounted()) {
    begin_op();  // namei() may drop the last reference to a directory unlinked meanwhile
    im.ip = namei(path);
    end_op();
    if (im.ip == 0)
      return -1;
    ilock(im.ip);
    if (im.ip->type != T_FILE) {
      exec_release(&im);
      return -1;
    }
    im.size = im.ip->size;
    for (const char *s = path; *s; s++)  // the program's name: the last element
      if (*s == '/' && s[1] != 0)
        name = s + 1;
  } else if (initrd_find(name, &im.mem, &im.size) < 0) {
    return -1;
  }
  pagetable_t pt = proc_pagetable(p);
  if (pt == 0) {
    exec_release(&im);
    return -1;
  }
  int bad = load_elf(pt, &im, &entry, &image_end) < 0;
  exec_release(&im);
  if (bad || uvmmap_zeroed(pt, USTACK_BOTTOM, USTACK_PAGES * PGSIZE, PTE_R | PTE_W) < 0 ||
      push_args(pt, a, &sp, &uargv) < 0) {
    proc_freepagetable(pt);
    return -1;
  }
  // Commit: from here on nothing can fail.
  if (p->pagetable)
    proc_freepagetable(p->pagetable);
  p->pagetable = pt;
  p->heap_bottom = p->brk = PGROUNDUP(image_end);
  safestrcpy(p->name, name, sizeof(p->name));
  signal_exec(p);  // handlers were addresses in the old image
  memset(&p->sync, 0, sizeof(p->sync));  // and the old program's sync objects go too
  alarm_exec(p);   // the alarm's handler was one too (alarm.c)
  struct trapframe *tf = p->trapframe;
  memset(&tf->ra, 0, sizeof(*tf) - offsetof(struct trapframe, ra));  // fresh registers
  tf->epc = entry;
  tf->sp = sp;
  tf->a0 = a->argc;  // main(argc, argv); sys_exec also returns argc into a0
  tf->a1 = uargv;
  return a->argc;
}
