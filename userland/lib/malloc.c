// malloc.c: a first-fit allocator on top of sbrk().
//
// Free blocks sit on a list sorted by address; free() merges a block with free
// neighbours. Each block starts with a header holding its size (header included),
// so free() knows how much came back. The heap grows by at least HEAP_CHUNK bytes.
#include "user.h"

#define ALIGN      16
#define HEAP_CHUNK 4096

struct block {
  size_t size;         // bytes in this block, header included
  struct block *next;  // next free block (only while free)
};
#define HEADER ((sizeof(struct block) + ALIGN - 1) & ~(size_t)(ALIGN - 1))

static struct block *free_list;

// Insert b into the free list in address order, merging it with touching neighbours.
static void insert_free(struct block *b) {
  struct block **link = &free_list;
  while (*link && *link < b)
    link = &(*link)->next;
  b->next = *link;
  *link = b;
  if (b->next && (char *)b + b->size == (char *)b->next) {
    b->size += b->next->size;
    b->next = b->next->next;
  }
  if (link != &free_list) {
    struct block *prev = (struct block *)((char *)link - offsetof(struct block, next));
    if ((char *)prev + prev->size == (char *)b) {
      prev->size += b->size;
      prev->next = b->next;
    }
  }
}

static int grow(size_t need) {
  size_t n = need > HEAP_CHUNK ? need : HEAP_CHUNK;
  long old = sbrk((long)n);
  if (old == -1)
    return -1;
  struct block *b = (struct block *)old;
  b->size = n;
  insert_free(b);
  return 0;
}

void *malloc(size_t n) {
  if (n == 0 || n > ((size_t)-1) / 2)
    return NULL;
  size_t need = (n + HEADER + ALIGN - 1) & ~(size_t)(ALIGN - 1);
  for (int tries = 0; tries < 2; tries++) {
    for (struct block **link = &free_list; *link; link = &(*link)->next) {
      struct block *b = *link;
      if (b->size < need)
        continue;
      if (b->size - need >= HEADER + ALIGN) {  // split: keep the tail free
        struct block *rest = (struct block *)((char *)b + need);
        rest->size = b->size - need;
        rest->next = b->next;
        *link = rest;
        b->size = need;
      } else {
        *link = b->next;
      }
      return (char *)b + HEADER;
    }
    if (grow(need) < 0)
      return NULL;
  }
  return NULL;
}

void free(void *p) {
  if (p)
    insert_free((struct block *)((char *)p - HEADER));
}
