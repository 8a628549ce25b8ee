// vmprint.c: print a page table as a tree (lab 4, after xv6's vmprint lab).
// Called for the first process when bootargs contain "vmprint" (userinit, proc.c).
//
// Output: a header line, then one line per valid PTE, indented by level with " ..".
// %p (printf.c) prints 0x and hex without leading zeros, as labs/vmprint/README.md says:
//   page table 0x81f66000
//    ..0: pte 0x207d8801 pa 0x81f62000
//    .. ..0: pte ...
//    .. .. ..16: pte 0x207d8cdb pa 0x81f63000 va 0x10000 r-xu
// Leaves also show their virtual address and permissions (r w x u).
#include "defs.h"
#include "riscv.h"

// BEGIN SOLUTION
static void vmprint_level(pagetable_t pt, int level, uintptr_t base) {
  for (int i = 0; i < PT_ENTRIES; i++) {
    pte_t pte = pt[i];
    if ((pte & PTE_V) == 0)
      continue;
    uintptr_t va = base + ((uintptr_t)i << PXSHIFT(level));
    for (int d = PT_LEVELS - 1; d >= level; d--)
      printf(" ..");
    printf("%d: pte %p pa %p", i, (void *)pte, (void *)PTE2PA(pte));
    if (PTE_LEAF(pte)) {
      printf(" va %p %c%c%c%c\n", (void *)va, pte & PTE_R ? 'r' : '-', pte & PTE_W ? 'w' : '-',
             pte & PTE_X ? 'x' : '-', pte & PTE_U ? 'u' : '-');
    } else {
      printf("\n");
      vmprint_level((pagetable_t)PTE2PA(pte), level - 1, va);
    }
  }
}
// END SOLUTION

void vmprint(pagetable_t pt) {
  // BEGIN SOLUTION
  printf("page table %p\n", (void *)pt);
  vmprint_level(pt, PT_LEVELS - 1, 0);
  // END SOLUTION
}
