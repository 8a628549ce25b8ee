/*
 * grow.c: growable arrays for the trap flow's native helpers (shape.c, pairer.c).
 */
#include <stdlib.h>
#include <string.h>

#include "hart.h"

/* Make *p (of *cap elements of `size` bytes) hold at least `need`, doubling; new
 * elements are zero. Returns 0, or -1 when out of memory (*p is then unchanged). */
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
