// main.c: the kernel's table of contents. Entered from entry.S in S-mode with paging
// off, a0 = hart id and a1 = the device tree (the boot protocol, docs/kernel/1-boot.md).
#include "defs.h"
#include "riscv.h"

struct bootinfo boot;

void main(uintptr_t hartid, uintptr_t dtb) {
  boot.hartid = hartid;
  initlock(&kernel_lock, "kernel");
  sbi_console_init();          // console output through SBI (DBCN or legacy)
  if (fdt_parse(dtb, &boot) < 0)  // RAM, timebase, bootargs, initrd from the device tree
    panic("no usable device tree at %p", (void *)dtb);
  bootargs_parse(boot.bootargs);  // init=PROG ARGS..., quiet, vmprint, backtrace
  if (!bootargs_flag("quiet"))
    printf("privlab kernel: %lu MiB RAM, timebase %lu Hz\n",
           (unsigned long)(boot.ram_size >> 20), (unsigned long)boot.timebase_hz);
  kinit();                     // physical page allocator
  kvminit();                   // kernel page table
  kvminithart();               // turn on paging
  procinit();                  // process table, kernel stacks
  trapinit();                  // stvec = kernelvec
  initrd_init(boot.initrd_start, boot.initrd_end);  // the user programs, without a disk
  binit();                     // buffer cache
  if (virtio_disk_init() == 0) // the disk, if the board has one
    fsinit();                  // its file system: superblock, log recovery
  if (bootargs_flag("backtrace"))
    backtrace();
  timerinit();                 // this hart's first timer interrupt in 10 ms
  userinit();                  // first user process: init, or bootargs' init=
  smp_start_harts();           // the other harts (smp.c): each runs its own scheduler
  scheduler();                 // never returns
}
