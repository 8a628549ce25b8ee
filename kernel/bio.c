// bio.c: the buffer cache: NBUF blocks of the disk in memory, so that a block read
// again is not read from the disk again, and so that only one process at a time
// uses a given block (bread() hands it out "busy"; others sleep until brelse()).
// Recycles the least recently used buffer that nobody holds.
#include "buf.h"
#include "defs.h"

static struct {
  struct buf buf[NBUF];
  struct buf head;  // head.next: most recently used; head.prev: least
} bcache;

void binit(void) {
  bcache.head.prev = bcache.head.next = &bcache.head;
  for (struct buf *b = bcache.buf; b < bcache.buf + NBUF; b++) {
    b->next = bcache.head.next;
    b->prev = &bcache.head;
    bcache.head.next->prev = b;
    bcache.head.next = b;
  }
}

// The buffer for blockno, busy and owned by the caller; its data may not be valid.
static struct buf *bget(uint32_t blockno) {
  for (struct buf *b = bcache.head.next; b != &bcache.head; b = b->next)
    if (b->blockno == blockno && (b->valid || b->refcnt > 0)) {
      b->refcnt++;
      while (b->busy)
        sleep(b);
      b->busy = 1;
      return b;
    }
  for (struct buf *b = bcache.head.prev; b != &bcache.head; b = b->prev)
    if (b->refcnt == 0) {
      b->blockno = blockno;
      b->valid = 0;
      b->refcnt = 1;
      b->busy = 1;
      return b;
    }
  panic("bget: all %d buffers in use", NBUF);
}

// Block blockno's contents, busy: the caller must brelse() it.
struct buf *bread(uint32_t blockno) {
  struct buf *b = bget(blockno);
  if (!b->valid) {
    virtio_disk_rw(b, 0);
    b->valid = 1;
  }
  return b;
}

// Write a busy buffer to its block on disk now (the log calls this; file-system code
// calls log_write() instead).
void bwrite(struct buf *b) {
  if (!b->busy)
    panic("bwrite: buffer not held");
  virtio_disk_rw(b, 1);
}

// Done with a busy buffer: wake one waiting for it, and make it most recently used.
void brelse(struct buf *b) {
  if (!b->busy)
    panic("brelse: buffer not held");
  b->busy = 0;
  wakeup(b);
  if (--b->refcnt == 0) {
    b->next->prev = b->prev;
    b->prev->next = b->next;
    b->next = bcache.head.next;
    b->prev = &bcache.head;
    bcache.head.next->prev = b;
    bcache.head.next = b;
  }
}

// Keep b in the cache (refcnt > 0) until the log has written it home.
void bpin(struct buf *b) { b->refcnt++; }
void bunpin(struct buf *b) { b->refcnt--; }
