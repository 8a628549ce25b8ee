/*
 * grow.h: growable arrays for the trace analysis in C (shape.c, pairer.c).
 */
#ifndef GROW_H
#define GROW_H

#include <stddef.h>

/* Make *p (of *cap elements of `size` bytes) hold at least `need`, doubling; new
 * elements are zero. Returns 0, or -1 when out of memory (*p is then unchanged). */
int grow_array(void **p, size_t *cap, size_t need, size_t size);

#endif
