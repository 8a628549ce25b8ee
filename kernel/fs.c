// fs.c: the file system: blocks (bitmap allocation), inodes (allocation, the inode
// cache, the block map), directories and path names. The on-disk layout is in
// fs_gen.h (generated from privlab/abi/fs_layout.py, which the harness's mkfs and
// fsck read too). Every function that writes the disk runs inside a log operation
// (begin_op/end_op, log.c) and writes through log_write().
#include "abi.h"
#include "buf.h"
#include "defs.h"
#include "fs.h"
#include "proc.h"

static struct superblock sb;
static int mounted;

// ---- blocks -------------------------------------------------------------------------

#define BBLOCK(b) ((b) / BITS_PER_BLOCK + sb.bmapstart)  // bitmap block holding b's bit
#define IBLOCK(i) ((i) / INODES_PER_BLOCK + sb.inodestart)

static void bzero(uint32_t blockno) {
  struct buf *b = bread(blockno);
  memset(b->data, 0, BSIZE);
  log_write(b);
  brelse(b);
}

// A zeroed free data block, now marked in use; 0 if the disk is full.
static uint32_t balloc(void) {
  for (uint32_t base = 0; base < sb.size; base += BITS_PER_BLOCK) {
    struct buf *bp = bread(BBLOCK(base));
    for (uint32_t bi = 0; bi < BITS_PER_BLOCK && base + bi < sb.size; bi++) {
      uint8_t m = (uint8_t)(1 << (bi % 8));
      if (!(bp->data[bi / 8] & m)) {
        bp->data[bi / 8] |= m;
        log_write(bp);
        brelse(bp);
        bzero(base + bi);
        return base + bi;
      }
    }
    brelse(bp);
  }
  return 0;
}

static void bfree(uint32_t b) {
  struct buf *bp = bread(BBLOCK(b));
  uint8_t m = (uint8_t)(1 << (b % BITS_PER_BLOCK % 8));
  if (!(bp->data[b % BITS_PER_BLOCK / 8] & m))
    panic("bfree: block %u is free already", b);
  bp->data[b % BITS_PER_BLOCK / 8] &= (uint8_t)~m;
  log_write(bp);
  brelse(bp);
}

// ---- mounting -----------------------------------------------------------------------

// Read the superblock of the disk, check it, and replay the log. Returns 0, or -1
// (with a line saying why) when the disk holds no file system of ours.
int fsinit(void) {
  struct buf *b = bread(1);
  memmove(&sb, b->data, sizeof(sb));
  brelse(b);
  if (sb.magic != FSMAGIC) {
    printf("[kernel] disk: no file system (magic %x): running from the initrd\n", sb.magic);
    return -1;
  }
  if (sb.size > virtio_disk_blocks() || sb.bmapstart >= sb.size || sb.ninodes == 0 ||
      sb.logstart + sb.nlog > sb.inodestart) {
    printf("[kernel] disk: bad superblock (size %u, disk %u blocks): running from the initrd\n",
           sb.size, virtio_disk_blocks());
    return -1;
  }
  log_init(&sb);
  mounted = 1;
  return 0;
}

int fs_mounted(void) { return mounted; }

// ---- inodes -------------------------------------------------------------------------

static struct inode itable[NINODE];

// The in-memory inode for inum, referenced (not locked, maybe not read yet).
struct inode *iget(uint32_t inum) {
  struct inode *empty = 0;
  for (struct inode *ip = itable; ip < &itable[NINODE]; ip++) {
    if (ip->ref > 0 && ip->inum == inum) {
      ip->ref++;
      return ip;
    }
    if (empty == 0 && ip->ref == 0)
      empty = ip;
  }
  if (empty == 0)
    return 0;  // table full: callers fail the system call
  empty->inum = inum;
  empty->ref = 1;
  empty->valid = 0;
  empty->busy = 0;
  return empty;
}

struct inode *idup(struct inode *ip) {
  ip->ref++;
  return ip;
}

// Allocate a free inode of the given type (nlink 0), referenced but not locked. 0 if
// every inode on the disk is in use or the in-memory table is full.
struct inode *ialloc(int16_t type) {
  for (uint32_t inum = 1; inum < sb.ninodes; inum++) {
    struct buf *bp = bread(IBLOCK(inum));
    struct dinode *dip = (struct dinode *)bp->data + inum % INODES_PER_BLOCK;
    if (dip->type == 0) {
      // The in-memory slot first: claimed on disk without one, the inode would stay
      // allocated with no name and no reference, lost for good.
      struct inode *ip = iget(inum);
      if (ip != 0) {
        memset(dip, 0, sizeof(*dip));
        dip->type = type;
        log_write(bp);  // claimed on disk, in this transaction
      }
      brelse(bp);
      return ip;
    }
    brelse(bp);
  }
  return 0;
}

// Write ip's fields to its disk inode (after every change; caller holds the lock).
void iupdate(struct inode *ip) {
  struct buf *bp = bread(IBLOCK(ip->inum));
  struct dinode *dip = (struct dinode *)bp->data + ip->inum % INODES_PER_BLOCK;
  dip->type = ip->type;
  dip->major = ip->major;
  dip->minor = ip->minor;
  dip->nlink = ip->nlink;
  dip->size = ip->size;
  memmove(dip->addrs, ip->addrs, sizeof(ip->addrs));
  log_write(bp);
  brelse(bp);
}

// Lock ip (sleeping while another process has it), reading it from disk if needed.
void ilock(struct inode *ip) {
  if (ip == 0 || ip->ref < 1)
    panic("ilock");
  while (ip->busy)
    sleep(ip);
  ip->busy = 1;
  if (!ip->valid) {
    struct buf *bp = bread(IBLOCK(ip->inum));
    struct dinode *dip = (struct dinode *)bp->data + ip->inum % INODES_PER_BLOCK;
    ip->type = dip->type;
    ip->major = dip->major;
    ip->minor = dip->minor;
    ip->nlink = dip->nlink;
    ip->size = dip->size;
    memmove(ip->addrs, dip->addrs, sizeof(ip->addrs));
    brelse(bp);
    ip->valid = 1;
    if (ip->type == 0)
      panic("ilock: inode %u is free", ip->inum);
  }
}

void iunlock(struct inode *ip) {
  if (ip == 0 || !ip->busy || ip->ref < 1)
    panic("iunlock");
  ip->busy = 0;
  wakeup(ip);
}

static void itrunc(struct inode *ip);

// Drop a reference. The last reference to an inode no directory names any more
// frees it and its blocks, so must run inside a log operation.
void iput(struct inode *ip) {
  if (ip->ref == 1 && ip->valid && ip->nlink == 0) {
    ilock(ip);  // nobody else can hold it: ref is 1
    itrunc(ip);
    ip->type = 0;
    iupdate(ip);
    ip->valid = 0;
    iunlock(ip);
  }
  ip->ref--;
}

void iunlockput(struct inode *ip) {
  iunlock(ip);
  iput(ip);
}

// ---- the block map ------------------------------------------------------------------

// Entry i of the indirect block numbered *slot; when alloc, allocate what is missing:
// the indirect block itself (its number goes into *slot, which the caller writes
// back) and the entry's block. 0 if absent or the disk is full.
static uint32_t indirect(uint32_t *slot, uint32_t i, int alloc) {
  if (*slot == 0 && (!alloc || (*slot = balloc()) == 0))
    return 0;
  struct buf *bp = bread(*slot);
  uint32_t *a = (uint32_t *)bp->data, b = a[i];
  if (b == 0 && alloc && (b = balloc()) != 0) {
    a[i] = b;
    log_write(bp);
  }
  brelse(bp);
  return b;
}

// The disk block holding block bn of ip's data; allocated when alloc (the caller
// then iupdate()s ip, whose addrs may have changed). 0 if absent or the disk is full.
static uint32_t bmap(struct inode *ip, uint32_t bn, int alloc) {
  if (bn < NDIRECT) {
    if (ip->addrs[bn] == 0 && alloc)
      ip->addrs[bn] = balloc();
    return ip->addrs[bn];
  }
  bn -= NDIRECT;
  if (bn < NINDIRECT)
    return indirect(&ip->addrs[NDIRECT], bn, alloc);
  bn -= NINDIRECT;
  // Lab (large files, MIT 6.1810's "bigfile"): a doubly-indirect block, whose
  // NINDIRECT entries are indirect blocks, takes files past NDIRECT + NINDIRECT blocks.
  // BEGIN SOLUTION
  if (bn >= NINDIRECT * NINDIRECT)
    return 0;
  uint32_t mid = indirect(&ip->addrs[NDIRECT + 1], bn / NINDIRECT, alloc);
  return mid == 0 ? 0 : indirect(&mid, bn % NINDIRECT, alloc);
  // HANDOUT: return 0;
  // END SOLUTION
}

// Largest file, in blocks, that bmap() can map.
uint32_t max_file_blocks(void) {
  // BEGIN SOLUTION
  return MAXFILE;
  // HANDOUT: return NDIRECT + NINDIRECT;
  // END SOLUTION
}

static void free_indirect(uint32_t blockno, int depth) {
  struct buf *bp = bread(blockno);
  uint32_t a[NINDIRECT];
  memmove(a, bp->data, sizeof(a));
  brelse(bp);
  for (int i = 0; i < NINDIRECT; i++)
    if (a[i])
      depth > 1 ? free_indirect(a[i], depth - 1) : bfree(a[i]);
  bfree(blockno);
}

// Free all of ip's blocks (caller holds the lock, inside a log operation).
static void itrunc(struct inode *ip) {
  for (int i = 0; i < NDIRECT; i++)
    if (ip->addrs[i]) {
      bfree(ip->addrs[i]);
      ip->addrs[i] = 0;
    }
  for (int depth = 1; depth <= 2; depth++)
    if (ip->addrs[NDIRECT + depth - 1]) {
      free_indirect(ip->addrs[NDIRECT + depth - 1], depth);
      ip->addrs[NDIRECT + depth - 1] = 0;
    }
  ip->size = 0;
  iupdate(ip);
}

// Truncate to length 0 (O_TRUNC).
void itruncate(struct inode *ip) { itrunc(ip); }

// ---- reading and writing ------------------------------------------------------------

// Copy n bytes to dst, a user address when user (in the current process), else a
// kernel one. -1 if a user address is bad.
static int either_copyout(int user, uintptr_t dst, const void *src, size_t n) {
  if (user)
    return copyout(myproc()->pagetable, dst, src, n);
  memmove((void *)dst, src, n);
  return 0;
}

static int either_copyin(int user, void *dst, uintptr_t src, size_t n) {
  if (user)
    return copyin(myproc()->pagetable, dst, src, n);
  memmove(dst, (const void *)src, n);
  return 0;
}

// Read up to n bytes at off into dst (see either_copyout). Returns the bytes read
// (0 at or past the end), or -1 if dst is bad. Caller holds the lock.
long readi(struct inode *ip, int user, uintptr_t dst, uint32_t off, uint32_t n) {
  if (off >= ip->size)
    return 0;
  if (n > ip->size - off)
    n = ip->size - off;
  uint32_t done = 0;
  while (done < n) {
    uint32_t bn = bmap(ip, off / BSIZE, 0), m = BSIZE - off % BSIZE;
    if (m > n - done)
      m = n - done;
    if (bn == 0) {  // a hole (never written): reads as zeros
      static const uint8_t zeros[BSIZE];
      if (either_copyout(user, dst, zeros, m) < 0)
        return -1;
    } else {
      struct buf *bp = bread(bn);
      int bad = either_copyout(user, dst, bp->data + off % BSIZE, m);
      brelse(bp);
      if (bad < 0)
        return -1;
    }
    done += m, off += m, dst += m;
  }
  return done;
}

// Write n bytes from src at off, growing the file. Returns the bytes written, which
// is less than n if the disk fills up or the file reaches its largest size; -1 if
// nothing could be written because src is bad. Caller holds the lock, inside a log
// operation that has room for the blocks (sys_write splits large writes).
long writei(struct inode *ip, int user, uintptr_t src, uint32_t off, uint32_t n) {
  if (off > ip->size || off + n < off)
    return -1;
  uint64_t limit = (uint64_t)max_file_blocks() * BSIZE;
  if (off + (uint64_t)n > limit)
    n = off >= limit ? 0 : (uint32_t)(limit - off);
  uint32_t done = 0;
  int bad = 0;
  while (done < n) {
    uint32_t bn = bmap(ip, off / BSIZE, 1), m = BSIZE - off % BSIZE;
    if (bn == 0)
      break;  // disk full
    if (m > n - done)
      m = n - done;
    struct buf *bp = bread(bn);
    bad = either_copyin(user, bp->data + off % BSIZE, src, m) < 0;
    if (!bad)
      log_write(bp);
    brelse(bp);
    if (bad)
      break;
    done += m, off += m, src += m;
  }
  if (off > ip->size)
    ip->size = off;
  iupdate(ip);  // size, and addrs bmap() may have filled in
  return bad && done == 0 ? -1 : (long)done;
}

void stati(struct inode *ip, struct stat *st) {
  memset(st, 0, sizeof(*st));
  st->dev = ROOTDEV;
  st->ino = ip->inum;
  st->mode = ip->type == T_DIR ? S_IFDIR : ip->type == T_FILE ? S_IFREG : S_IFCHR;
  st->nlink = (uint32_t)ip->nlink;
  st->size = ip->size;
}

// ---- directories --------------------------------------------------------------------

static int namecmp(const char *a, const char *b) { return strncmp(a, b, DIRSIZ); }

// The inode named name in directory dp (locked), referenced; *poff = its entry's
// offset. 0 if absent.
struct inode *dirlookup(struct inode *dp, const char *name, uint32_t *poff) {
  if (dp->type != T_DIR)
    panic("dirlookup: not a directory");
  struct dirent de;
  for (uint32_t off = 0; off + sizeof(de) <= dp->size; off += sizeof(de)) {
    if (readi(dp, 0, (uintptr_t)&de, off, sizeof(de)) != sizeof(de))
      panic("dirlookup: read");
    if (de.inum != 0 && namecmp(name, de.name) == 0) {
      if (poff)
        *poff = off;
      return iget(de.inum);
    }
  }
  return 0;
}

// Add the entry (name, inum) to directory dp (locked): 0, or -1 if the name exists,
// the directory cannot grow, or it has been removed (nlink 0; a process may still
// have it as its cwd): its blocks go when its last reference does, and a name added
// now would leave that file allocated with no directory naming it.
int dirlink(struct inode *dp, const char *name, uint32_t inum) {
  if (dp->nlink == 0)
    return -1;
  struct inode *ip = dirlookup(dp, name, 0);
  if (ip) {
    iput(ip);
    return -1;
  }
  struct dirent de;
  uint32_t off;
  for (off = 0; off + sizeof(de) <= dp->size; off += sizeof(de)) {
    if (readi(dp, 0, (uintptr_t)&de, off, sizeof(de)) != sizeof(de))
      panic("dirlink: read");
    if (de.inum == 0)
      break;
  }
  memset(&de, 0, sizeof(de));
  strncpy_pad(de.name, name, DIRSIZ);
  de.inum = (uint16_t)inum;
  return writei(dp, 0, (uintptr_t)&de, off, sizeof(de)) == sizeof(de) ? 0 : -1;
}

// Is directory dp (locked) empty but for "." and ".."?
int dir_is_empty(struct inode *dp) {
  struct dirent de;
  for (uint32_t off = 2 * sizeof(de); off + sizeof(de) <= dp->size; off += sizeof(de)) {
    if (readi(dp, 0, (uintptr_t)&de, off, sizeof(de)) != sizeof(de))
      panic("dir_is_empty: read");
    if (de.inum != 0)
      return 0;
  }
  return 1;
}

// ---- path names ---------------------------------------------------------------------

// Copy the next element of path into name (DIRSIZ + 1 bytes, NUL-terminated) and
// return what follows it; 0 when no element is left. *too_long is set for an
// element longer than DIRSIZ: no directory entry can hold such a name.
static const char *skipelem(const char *path, char *name, int *too_long) {
  while (*path == '/')
    path++;
  if (*path == 0)
    return 0;
  const char *s = path;
  while (*path != '/' && *path != 0)
    path++;
  size_t len = (size_t)(path - s);
  *too_long = len > DIRSIZ;
  memset(name, 0, DIRSIZ + 1);
  memmove(name, s, len > DIRSIZ ? DIRSIZ : len);
  while (*path == '/')
    path++;
  return path;
}

// Look up path; with parent, stop one element early and return that directory,
// copying the last element into name. Referenced, not locked; 0 if not found.
static struct inode *namex(const char *path, int parent, char *name) {
  struct inode *ip, *next;
  int too_long = 0;
  if (*path == '/')
    ip = iget(ROOTINO);
  else if (myprocess() && myprocess()->cwd)
    ip = idup(myprocess()->cwd);
  else
    ip = iget(ROOTINO);
  if (ip == 0)
    return 0;
  while ((path = skipelem(path, name, &too_long)) != 0) {
    ilock(ip);
    if (ip->type != T_DIR || too_long) {
      iunlockput(ip);
      return 0;
    }
    if (parent && *path == 0) {
      iunlock(ip);  // the caller wants the parent
      return ip;
    }
    if ((next = dirlookup(ip, name, 0)) == 0) {
      iunlockput(ip);
      return 0;
    }
    iunlockput(ip);
    ip = next;
  }
  if (parent) {  // the path had no last element ("/", "")
    iput(ip);
    return 0;
  }
  return ip;
}

struct inode *namei(const char *path) {
  char name[DIRSIZ + 1];
  return namex(path, 0, name);
}

// name must hold DIRSIZ + 1 bytes.
struct inode *nameiparent(const char *path, char *name) { return namex(path, 1, name); }

// The root directory, referenced (for the first process's cwd).
struct inode *fs_root(void) { return iget(ROOTINO); }
