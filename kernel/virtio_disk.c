// virtio_disk.c: the driver of the virtio-blk disk in virtio-mmio slot 0 (modern,
// version 2 transport; virtio 1.1 sections 2.7 and 4.2), interrupt-driven through
// the PLIC. One split virtqueue of NUM descriptors; a request is a chain of three:
// the header (type, sector), the block's data, and a status byte the device writes.
// A process that starts a request sleeps until virtio_disk_intr() sees it in the
// used ring, so other processes run while the disk works.
#include "buf.h"
#include "defs.h"
#include "platform.h"
#include "riscv.h"

#define NUM 8  // descriptors: two requests in flight, and a spare
#define REG(off) (*(volatile uint32_t *)(uintptr_t)(PLATFORM_VIRTIO0_BASE + (off)))
#define FEATURE(bit) (1u << ((bit) % 32))

struct virtq_desc {
  uint64_t addr;
  uint32_t len;
  uint16_t flags;
  uint16_t next;
};
struct virtq_avail {
  uint16_t flags;
  uint16_t idx;
  uint16_t ring[NUM];
  uint16_t used_event;
};
struct virtq_used_elem {
  uint32_t id;
  uint32_t len;
};
struct virtq_used {
  uint16_t flags;
  uint16_t idx;
  struct virtq_used_elem ring[NUM];
  uint16_t avail_event;
};
struct virtio_blk_req {
  uint32_t type;      // VIRTIO_BLK_T_IN or VIRTIO_BLK_T_OUT
  uint32_t reserved;
  uint64_t sector;    // in 512-byte sectors
};

static struct {
  // The queue's three parts, with the alignment the spec requires (2.7).
  struct virtq_desc desc[NUM] __attribute__((aligned(16)));
  struct virtq_avail avail __attribute__((aligned(2)));
  struct virtq_used used __attribute__((aligned(4)));
  char free[NUM];                  // descriptor i is unused
  uint16_t used_seen;              // used.idx as far as we have processed it
  struct {                         // per request, indexed by its first descriptor
    struct buf *b;
    volatile uint8_t status;
  } info[NUM];
  struct virtio_blk_req req[NUM];  // the header of the request starting at i
  uint64_t capacity;               // in sectors
  int present;
} disk;

// Find and initialise the disk (3.1.1's sequence). Returns 0, or -1 when slot 0 holds
// no virtio-blk device of the modern kind, which leaves the kernel without a disk.
int virtio_disk_init(void) {
  if (REG(VIRTIO_MMIO_MAGIC_VALUE) != VIRTIO_MMIO_MAGIC ||
      REG(VIRTIO_MMIO_DEVICE_ID) != VIRTIO_ID_BLOCK)
    return -1;
  if (REG(VIRTIO_MMIO_VERSION) != 2) {
    printf("[kernel] virtio disk: legacy (version 1) transport, not supported: no disk\n");
    return -1;
  }
  uint32_t status = 0;
  REG(VIRTIO_MMIO_STATUS) = status;  // reset
  status |= VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER;
  REG(VIRTIO_MMIO_STATUS) = status;

  // Only VERSION_1. Without FLUSH the device is write-through (5.2.6.2), so a
  // completed write is on the disk: what the log's ordering relies on.
  REG(VIRTIO_MMIO_DEVICE_FEATURES_SEL) = 1;
  if (!(REG(VIRTIO_MMIO_DEVICE_FEATURES) & FEATURE(VIRTIO_F_VERSION_1)))
    return -1;
  REG(VIRTIO_MMIO_DRIVER_FEATURES_SEL) = 0;
  REG(VIRTIO_MMIO_DRIVER_FEATURES) = 0;
  REG(VIRTIO_MMIO_DRIVER_FEATURES_SEL) = 1;
  REG(VIRTIO_MMIO_DRIVER_FEATURES) = FEATURE(VIRTIO_F_VERSION_1);
  status |= VIRTIO_STATUS_FEATURES_OK;
  REG(VIRTIO_MMIO_STATUS) = status;
  if (!(REG(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK))
    return -1;

  REG(VIRTIO_MMIO_QUEUE_SEL) = 0;
  if (REG(VIRTIO_MMIO_QUEUE_READY) != 0 || REG(VIRTIO_MMIO_QUEUE_NUM_MAX) < NUM)
    return -1;
  REG(VIRTIO_MMIO_QUEUE_NUM) = NUM;
  REG(VIRTIO_MMIO_QUEUE_DESC_LOW) = (uint32_t)(uintptr_t)disk.desc;
  REG(VIRTIO_MMIO_QUEUE_DESC_HIGH) = (uint32_t)((uint64_t)(uintptr_t)disk.desc >> 32);
  REG(VIRTIO_MMIO_QUEUE_DRIVER_LOW) = (uint32_t)(uintptr_t)&disk.avail;
  REG(VIRTIO_MMIO_QUEUE_DRIVER_HIGH) = (uint32_t)((uint64_t)(uintptr_t)&disk.avail >> 32);
  REG(VIRTIO_MMIO_QUEUE_DEVICE_LOW) = (uint32_t)(uintptr_t)&disk.used;
  REG(VIRTIO_MMIO_QUEUE_DEVICE_HIGH) = (uint32_t)((uint64_t)(uintptr_t)&disk.used >> 32);
  REG(VIRTIO_MMIO_QUEUE_READY) = 1;
  for (int i = 0; i < NUM; i++)
    disk.free[i] = 1;

  status |= VIRTIO_STATUS_DRIVER_OK;
  REG(VIRTIO_MMIO_STATUS) = status;
  disk.capacity = REG(VIRTIO_MMIO_CONFIG + VIRTIO_BLK_CFG_CAPACITY) |
                  (uint64_t)REG(VIRTIO_MMIO_CONFIG + VIRTIO_BLK_CFG_CAPACITY + 4) << 32;
  plic_enable(PLATFORM_VIRTIO0_IRQ);
  disk.present = 1;
  return 0;
}

// The disk's size in file-system blocks.
uint32_t virtio_disk_blocks(void) { return (uint32_t)(disk.capacity / SECTORS_PER_BLOCK); }

static int alloc_desc(void) {
  for (int i = 0; i < NUM; i++)
    if (disk.free[i]) {
      disk.free[i] = 0;
      return i;
    }
  return -1;
}

static void free_chain(int i) {
  for (;;) {
    int flags = disk.desc[i].flags, next = disk.desc[i].next;
    disk.desc[i] = (struct virtq_desc){0};
    disk.free[i] = 1;
    if (!(flags & VIRTQ_DESC_F_NEXT))
      break;
    i = next;
  }
  wakeup(&disk.free);
}

// Three free descriptors in idx[], waiting for a request to finish if need be.
static void alloc3(int idx[3]) {
  for (;;) {
    int got = 0;
    while (got < 3 && (idx[got] = alloc_desc()) >= 0)
      got++;
    if (got == 3)
      return;
    while (got > 0)
      disk.free[idx[--got]] = 1;
    sleep(&disk.free);
  }
}

// Read (write = 0) or write block b->blockno through b->data; returns when done.
void virtio_disk_rw(struct buf *b, int write) {
  if (!disk.present)
    panic("virtio disk: no disk");
  int idx[3];
  alloc3(idx);
  struct virtio_blk_req *req = &disk.req[idx[0]];
  req->type = write ? VIRTIO_BLK_T_OUT : VIRTIO_BLK_T_IN;
  req->reserved = 0;
  req->sector = (uint64_t)b->blockno * SECTORS_PER_BLOCK;
  disk.desc[idx[0]] = (struct virtq_desc){(uintptr_t)req, sizeof(*req), VIRTQ_DESC_F_NEXT,
                                          (uint16_t)idx[1]};
  disk.desc[idx[1]] = (struct virtq_desc){
      (uintptr_t)b->data, BSIZE,
      (uint16_t)(VIRTQ_DESC_F_NEXT | (write ? 0 : VIRTQ_DESC_F_WRITE)), (uint16_t)idx[2]};
  disk.info[idx[0]].status = 0xff;  // the device writes 0 on success
  disk.desc[idx[2]] = (struct virtq_desc){(uintptr_t)&disk.info[idx[0]].status, 1,
                                          VIRTQ_DESC_F_WRITE, 0};
  b->disk = 1;
  disk.info[idx[0]].b = b;

  disk.avail.ring[disk.avail.idx % NUM] = (uint16_t)idx[0];
  __sync_synchronize();  // the ring entry before the index that publishes it
  disk.avail.idx++;
  __sync_synchronize();
  REG(VIRTIO_MMIO_QUEUE_NOTIFY) = 0;

  while (b->disk)
    sleep(b);
  if (disk.info[idx[0]].status != VIRTIO_BLK_S_OK)
    panic("virtio disk: %s of block %u failed (status %d)", write ? "write" : "read",
          b->blockno, disk.info[idx[0]].status);
  disk.info[idx[0]].b = 0;
  free_chain(idx[0]);
}

// The disk's interrupt: acknowledge it, then finish every request the device has
// put in the used ring since last time.
void virtio_disk_intr(void) {
  REG(VIRTIO_MMIO_INTERRUPT_ACK) = REG(VIRTIO_MMIO_INTERRUPT_STATUS) & 0x3;
  __sync_synchronize();
  while (disk.used_seen != disk.used.idx) {
    __sync_synchronize();
    int id = (int)disk.used.ring[disk.used_seen % NUM].id;
    struct buf *b = disk.info[id].b;
    if (b == 0)
      panic("virtio disk: completion of unknown chain %d", id);
    b->disk = 0;
    wakeup(b);
    disk.used_seen++;
  }
}
