// spawn.c: spawn(path, argv) (lab 3, rCore-Tutorial chapter 5): start a program in a
// new child process directly, without copying the parent as fork + exec would.
// Returns the child's pid, or -1 (bad path or argv, no such program, no memory).
#include "defs.h"
#include "proc.h"
#include "trapframe.h"

long sys_spawn(uintptr_t upath, uintptr_t uargv) {
  // BEGIN SOLUTION
  char path[MAXPATH];
  struct args *a;
  struct proc *np;
  if (fetchargs(upath, uargv, path, &a) < 0)
    return -1;
  if ((np = allocproc()) == 0 || exec_load(np, path, a) < 0) {
    if (np)
      freeproc(np);
    args_free(a);
    return -1;
  }
  args_free(a);
  inherit_files(np, myprocess());
  np->parent = myprocess();
  np->state = RUNNABLE;
  return np->pid;
  // HANDOUT: return -1;
  // END SOLUTION
}
