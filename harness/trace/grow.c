/*
 * grow.c: growable arrays for the trace analysis in C (shape.c, pairer.c).
 */
#include <stdlib.h>
#include <string.h>

#include "grow.h"

int grow_array(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 8;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (!q)
        return -1;
    memset((char *)q + *cap * size, 0, (n - *cap) * size);
    *p = q;
    *cap = n;
    return 0;
}
