// types.h: the kernel's basic types. Register-sized values are uintptr_t, so the same
// source builds for RV64 and RV32.
#ifndef TYPES_H
#define TYPES_H

#include <stddef.h>
#include <stdint.h>

typedef uintptr_t pte_t;
typedef pte_t *pagetable_t;  // a page-table page: PGSIZE / sizeof(pte_t) entries

#endif // TYPES_H
