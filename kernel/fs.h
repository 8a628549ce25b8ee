// fs.h: inodes in memory (fs.c) and open files (file.c).
#ifndef FS_H
#define FS_H

#include "fs_gen.h"
#include "types.h"

// An inode in memory: a copy of the disk inode plus bookkeeping. ilock() makes the
// copy valid and gives the caller sole use of it until iunlock().
struct inode {
  uint32_t inum;
  int ref;            // pointers to this entry (open files, cwds, lookups in progress)
  int busy;           // locked by a process (ilock .. iunlock)
  int valid;          // the fields below were read from disk
  int16_t type;       // copy of struct dinode
  int16_t major;
  int16_t minor;
  int16_t nlink;
  uint32_t size;
  uint32_t addrs[NDIRECT + 2];
};

// One open file: what a file descriptor refers to. fork() and dup() share them.
enum filetype { FD_NONE, FD_CONSOLE, FD_PIPE, FD_INODE };
struct file {
  enum filetype type;
  int ref;
  char readable;
  char writable;
  char append;        // O_APPEND: every write goes to the end
  struct pipe *pipe;  // FD_PIPE
  struct inode *ip;   // FD_INODE
  uint32_t off;       // FD_INODE: the read/write offset
};

#endif // FS_H
