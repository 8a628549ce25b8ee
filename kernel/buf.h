// buf.h: one block of the disk held in memory (bio.c), and the device's view of it.
#ifndef BUF_H
#define BUF_H

#include "fs_gen.h"
#include "types.h"

struct buf {
  int valid;          // data holds the block's contents
  int disk;           // the disk owns it: a request is in flight (virtio_disk.c)
  int busy;           // a process holds it between bread() and brelse()
  uint32_t blockno;
  int refcnt;         // holders and waiters; 0 = may be recycled
  struct buf *prev;   // LRU list, most recently used first
  struct buf *next;
  uint8_t data[BSIZE];
};

#endif // BUF_H
