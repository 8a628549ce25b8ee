// foreign_kernel.c: a kernel with DWARF but none of privlab's kernel structures (no
// `cpu`, `cpus`, `proc`, `struct trapframe`), as xv6's or uCore's differ: the views
// must degrade on it, not stop. Its process table is uCore's shape: `pool[]`.
struct task {
  int pid;
  int state;
};

struct task pool[4];
int running = -1;

void _start(void) {
  pool[0].pid = 1;
  for (;;)
    running = 0;
}
