// log.c: the write-ahead log that makes every file-system system call all-or-nothing
// on the disk, whenever the machine stops.
//
// A system call brackets its disk writes with begin_op() / end_op() and writes
// blocks with log_write() instead of bwrite(): the blocks stay in the buffer cache
// (pinned) and are only noted in the in-memory header. When the last outstanding
// operation ends, commit():
//   1. copies each noted block into the log area (log blocks start+1 ...);
//   2. writes the header with n > 0: the commit point. Once this one block write has
//      completed the transaction counts, even if the machine stops now;
//   3. installs the blocks at their home locations;
//   4. writes the header with n = 0.
// At boot, recover() redoes step 3 when it finds n > 0 (installing twice is
// harmless), so a stop before step 2 loses the whole transaction, after it none of
// it. Several processes' operations can share one transaction (group commit);
// begin_op() waits while the log might not have room for one more.
#include "buf.h"
#include "defs.h"

static struct {
  uint32_t start;        // the header block
  int size;              // header + blocks
  int outstanding;       // operations between begin_op and end_op
  int committing;        // commit() is writing; no operation may begin
  struct logheader lh;   // the blocks of the current transaction
} log;

static void read_head(void) {
  struct buf *b = bread(log.start);
  memmove(&log.lh, b->data, sizeof(log.lh));
  brelse(b);
}

// The commit point when lh.n > 0; clears the log when 0.
static void write_head(void) {
  struct buf *b = bread(log.start);
  memmove(b->data, &log.lh, sizeof(log.lh));
  bwrite(b);
  brelse(b);
}

// Copy the logged blocks home: from the log area (recovery) or, in a commit, from
// the cache, where they are pinned.
static void install(int recovering) {
  for (uint32_t i = 0; i < log.lh.n; i++) {
    struct buf *from = bread(log.start + 1 + i);
    struct buf *to = bread(log.lh.block[i]);
    memmove(to->data, from->data, BSIZE);
    bwrite(to);
    if (!recovering)
      bunpin(to);
    brelse(from);
    brelse(to);
  }
}

void log_init(const struct superblock *sb) {
  log.start = sb->logstart;
  log.size = (int)sb->nlog;
  if (log.size < 2 || log.size - 1 < LOGBLOCKS)
    panic("log_init: log of %d blocks, need %d", log.size, LOGBLOCKS + 1);
  read_head();
  if (log.lh.n > LOGBLOCKS)
    panic("log_init: header lists %u blocks", log.lh.n);
  if (log.lh.n > 0)  // even when quiet: the disk was not left clean
    printf("[kernel] log: recovering a committed transaction of %u blocks\n", log.lh.n);
  install(1);
  log.lh.n = 0;
  write_head();
}

// Start a file-system operation; waits while a commit runs or the log could overflow.
void begin_op(void) {
  for (;;) {
    if (log.committing ||
        log.lh.n + (uint32_t)(log.outstanding + 1) * MAXOPBLOCKS > LOGBLOCKS)
      sleep(&log);
    else {
      log.outstanding++;
      return;
    }
  }
}

static void commit(void) {
  if (log.lh.n == 0)
    return;
  for (uint32_t i = 0; i < log.lh.n; i++) {   // 1: the blocks into the log area
    struct buf *to = bread(log.start + 1 + i);
    struct buf *from = bread(log.lh.block[i]);
    memmove(to->data, from->data, BSIZE);
    bwrite(to);
    brelse(from);
    brelse(to);
  }
  write_head();                               // 2: committed
  install(0);                                 // 3: home
  log.lh.n = 0;
  write_head();                               // 4: log empty
}

// End an operation; the last one out commits everyone's writes.
void end_op(void) {
  if (log.committing || log.outstanding < 1)
    panic("end_op: no operation");
  if (--log.outstanding == 0) {
    log.committing = 1;
    commit();
    log.committing = 0;
  }
  wakeup(&log);
}

// b (held by the caller) was modified: write it with this transaction. Writing the
// same block twice in one transaction logs it once (absorption).
void log_write(struct buf *b) {
  if (log.outstanding < 1)
    panic("log_write outside begin_op/end_op");
  uint32_t i = 0;
  while (i < log.lh.n && log.lh.block[i] != b->blockno)
    i++;
  if (i == log.lh.n) {
    if (log.lh.n >= LOGBLOCKS)
      panic("log_write: transaction too big");
    log.lh.block[log.lh.n++] = b->blockno;
    bpin(b);  // stays in the cache until installed
  }
}
