// param.h: tunable limits of the kernel.
#ifndef PARAM_H
#define PARAM_H

#ifndef __ASSEMBLER__
#include "abi.h"       // MAXPATH, shared with user programs
#endif
#include "platform.h"

#define NPROC        64    // process table size
#define NCPU         PLATFORM_MAX_HARTS // harts the kernel can run on (hart ids 0..NCPU-1)
#define KSTACK_PAGES 2     // kernel stack per process, below a guard page
#define USTACK_PAGES 8     // user stack, below TRAPFRAME (memlayout.h)
#define TIMER_HZ     100   // scheduler ticks per second: a 10 ms time slice
#define MAXARG       32    // most argv entries exec accepts
#define BOOTARGS_MAX 256   // longest /chosen bootargs kept
#define INIT_PROGRAM "init" // the first process when bootargs has no init=
#define PROC_NAME    32    // kept of a program's name for messages (cut if longer)
#define EXIT_NOT_FOUND 127 // power-off status when init= names no program (as a shell's)

// Files (fs.c, log.c, bio.c, file.c, pipe.c).
#define NOFILE       16    // open files per process
#define NFILE        100   // open files in the system
#define NINODE       50    // inodes in memory at once
#define NBUF         30    // blocks in the buffer cache (more than a transaction needs)
#define MAXOPBLOCKS  10    // most blocks one file-system operation writes
#define WRITE_CHUNK  (3 * BSIZE) // bytes of a write() per operation: 3 data blocks,
                                 // inode, up to 3 indirect and 2 bitmap blocks <= 10
#define PIPESIZE     512   // bytes a pipe buffers
#define ROOTDEV      1     // device number fstat reports for the disk

#endif // PARAM_H
