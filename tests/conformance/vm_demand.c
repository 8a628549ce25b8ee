// vm_demand.c: S's demand paging for vm_demand.S (what riscv-tests' v env does in
// env/v/vm.c handle_fault): map the faulting page of the U image to a fresh page,
// flush it, copy its contents in through the user mapping with SUM, fence.i.
#include "conformance.h"

typedef unsigned long reg_t;
struct frame;

void vm_map(reg_t va, reg_t pa, reg_t flags);

extern char u_image[];
#define U_PAGES 3
static char pool[U_PAGES][PAGE_SIZE] __attribute__((aligned(PAGE_SIZE)));

void hook_demand_map(struct frame *f)
{
    (void)f;
    reg_t tval;
    __asm__ volatile("csrr %0, stval" : "=r"(tval));
    reg_t va = tval & ~(reg_t)(PAGE_SIZE - 1);
    reg_t page = (va - TEST_VA) / PAGE_SIZE;
    if (page >= U_PAGES)
        return;   // not the U image: the trap's own checks have failed it already
    vm_map(va, (reg_t)pool[page], PTE_U | PTE_R | PTE_W | PTE_X | PTE_A | PTE_D);
    __asm__ volatile("sfence.vma %0" : : "r"(va) : "memory");
    __asm__ volatile("csrs sstatus, %0" : : "r"((reg_t)SSTATUS_SUM));
    volatile unsigned *to = (volatile unsigned *)va;
    const unsigned *from = (const unsigned *)(u_image + page * PAGE_SIZE);
    for (unsigned i = 0; i < PAGE_SIZE / 4; i++)
        to[i] = from[i];
    __asm__ volatile("csrc sstatus, %0" : : "r"((reg_t)SSTATUS_SUM));
    __asm__ volatile("fence.i" : : : "memory");
}
