// virtio_blk.c: the C half of virtio_blk.S (which says what is checked). Every wait is
// bounded; each check returns its own step number on failure. virtio_blk_legacy.c
// builds it with VIRTIO_LEGACY for the version 1 transport.
#include "conformance.h"

typedef unsigned long reg_t;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

#define NUM 8                   // descriptors in queue 0
#define SPIN 10000000           // polls before a wait gives up
#define REG(off) (*(volatile u32 *)(reg_t)(PLATFORM_VIRTIO0_BASE + (off)))
#define FEATURE(bit) (1u << ((bit) % 32))

struct desc {
    u64 addr;
    u32 len;
    u16 flags, next;
};
struct avail {
    u16 flags, idx, ring[NUM], used_event;
};
struct used_elem {
    u32 id, len;
};
struct used {
    u16 flags, idx;
    struct used_elem ring[NUM];
    u16 avail_event;
};
struct req {
    u32 type, reserved;
    u64 sector;
};

#ifdef VIRTIO_LEGACY
// Version 1 places the queue itself: descriptors at QueuePFN * GuestPageSize, the
// available ring right after them, the used ring at the next QueueAlign boundary.
#define LEGACY_PAGE 4096
static u8 ring_mem[2 * LEGACY_PAGE] __attribute__((aligned(LEGACY_PAGE)));
#define descs ((struct desc *)ring_mem)
#define avail (*(struct avail *)(ring_mem + NUM * sizeof(struct desc)))
#define used (*(struct used *)(ring_mem + LEGACY_PAGE))
#else
static struct desc descs[NUM] __attribute__((aligned(16)));
static struct avail avail __attribute__((aligned(4)));
static struct used used __attribute__((aligned(4)));
#endif
static struct req hdr;
static u8 out_buf[VIRTIO_BLK_SECTOR_SIZE], in_buf[VIRTIO_BLK_SECTOR_SIZE];
static volatile u8 status;
static u16 seen_used;

#define fence() __asm__ volatile("fence" ::: "memory")

static reg_t addr_of(const volatile void *p) {
    return (reg_t)p;
}

// Post one request: header, optional data (device-readable for OUT, device-writable
// otherwise), status; and notify the device.
static void post(u32 type, u64 sector, void *data, u32 size) {
    hdr.type = type;
    hdr.reserved = 0;
    hdr.sector = sector;
    status = 0xff;
    int n = 0;
    descs[n] = (struct desc){addr_of(&hdr), sizeof hdr, VIRTQ_DESC_F_NEXT, 1};
    n++;
    if (size) {
        u16 w = type == VIRTIO_BLK_T_OUT ? 0 : VIRTQ_DESC_F_WRITE;
        descs[n] = (struct desc){addr_of(data), size, (u16)(VIRTQ_DESC_F_NEXT | w), 2};
        n++;
    }
    descs[n - 1].next = (u16)n;
    descs[n] = (struct desc){addr_of(&status), 1, VIRTQ_DESC_F_WRITE, 0};
    avail.ring[avail.idx % NUM] = 0;
    fence();
    avail.idx++;
    fence();
    REG(VIRTIO_MMIO_QUEUE_NOTIFY) = 0;
}

// The used-ring entry of the posted request: 0 with *st and *len set, or `step` when
// it never comes or names another chain.
static int reap(int step, int *st, u32 *len) {
    for (long i = 0; i < SPIN; i++) {
        fence();
        if (*(volatile u16 *)&used.idx != seen_used) {
            fence();
            struct used_elem e = used.ring[seen_used % NUM];
            seen_used++;
            if (e.id != 0)
                return step;
            *st = status;
            *len = e.len;
            return 0;
        }
    }
    return step;
}

// One request, waited for by polling; the interrupt the device raised is polled and
// acknowledged too.
static int request(int step, u32 type, u64 sector, void *data, u32 size, int *st, u32 *len) {
    post(type, sector, data, size);
    if (reap(step, st, len))
        return step;
    for (long j = 0; j < SPIN; j++)
        if (REG(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_INT_USED_BUFFER)
            break;
    if (!(REG(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_INT_USED_BUFFER))
        return step;
    REG(VIRTIO_MMIO_INTERRUPT_ACK) = VIRTIO_INT_USED_BUFFER;
    if (REG(VIRTIO_MMIO_INTERRUPT_STATUS) != 0)
        return step;
    return 0;
}

#define CHECK(step, cond) do { if (!(cond)) return (step); } while (0)
#define DO(step, call) do { int r_ = (call); if (r_) return r_; } while (0)

static u64 disk_capacity;

// The identity registers and the initialisation sequence; 0, or the failed step.
static int virtio_blk_init(void) {
    CHECK(2, REG(VIRTIO_MMIO_MAGIC_VALUE) == VIRTIO_MMIO_MAGIC);
#ifdef VIRTIO_LEGACY
    CHECK(3, REG(VIRTIO_MMIO_VERSION) == 1);
#else
    CHECK(3, REG(VIRTIO_MMIO_VERSION) == 2);
#endif
    CHECK(4, REG(VIRTIO_MMIO_DEVICE_ID) == VIRTIO_ID_BLOCK);
    CHECK(5, REG(VIRTIO_MMIO_VENDOR_ID) == VIRTIO_MMIO_VENDOR_QEMU);

    u32 st = 0;
    REG(VIRTIO_MMIO_STATUS) = st;
    CHECK(6, REG(VIRTIO_MMIO_STATUS) == 0);
    st |= VIRTIO_STATUS_ACKNOWLEDGE;
    REG(VIRTIO_MMIO_STATUS) = st;
    st |= VIRTIO_STATUS_DRIVER;
    REG(VIRTIO_MMIO_STATUS) = st;

    u32 want = FEATURE(VIRTIO_BLK_F_BLK_SIZE) | FEATURE(VIRTIO_BLK_F_FLUSH);
    REG(VIRTIO_MMIO_DEVICE_FEATURES_SEL) = 0;
    CHECK(7, (REG(VIRTIO_MMIO_DEVICE_FEATURES) & want) == want);
    REG(VIRTIO_MMIO_DRIVER_FEATURES_SEL) = 0;
    REG(VIRTIO_MMIO_DRIVER_FEATURES) = want;
#ifdef VIRTIO_LEGACY
    // No VERSION_1, no FEATURES_OK: the high feature word reads 0.
    REG(VIRTIO_MMIO_DEVICE_FEATURES_SEL) = 1;
    CHECK(8, REG(VIRTIO_MMIO_DEVICE_FEATURES) == 0);
    REG(VIRTIO_MMIO_GUEST_PAGE_SIZE) = LEGACY_PAGE;
#else
    REG(VIRTIO_MMIO_DEVICE_FEATURES_SEL) = 1;
    CHECK(8, REG(VIRTIO_MMIO_DEVICE_FEATURES) & FEATURE(VIRTIO_F_VERSION_1));
    REG(VIRTIO_MMIO_DRIVER_FEATURES_SEL) = 1;
    REG(VIRTIO_MMIO_DRIVER_FEATURES) = FEATURE(VIRTIO_F_VERSION_1);
    st |= VIRTIO_STATUS_FEATURES_OK;
    REG(VIRTIO_MMIO_STATUS) = st;
    CHECK(9, REG(VIRTIO_MMIO_STATUS) & VIRTIO_STATUS_FEATURES_OK);
#endif

    REG(VIRTIO_MMIO_QUEUE_SEL) = 0;
#ifdef VIRTIO_LEGACY
    CHECK(10, REG(VIRTIO_MMIO_QUEUE_PFN) == 0);
    CHECK(11, REG(VIRTIO_MMIO_QUEUE_NUM_MAX) >= NUM);
    REG(VIRTIO_MMIO_QUEUE_NUM) = NUM;
    REG(VIRTIO_MMIO_QUEUE_ALIGN) = LEGACY_PAGE;
    REG(VIRTIO_MMIO_QUEUE_PFN) = (u32)(addr_of(ring_mem) / LEGACY_PAGE);
    CHECK(12, REG(VIRTIO_MMIO_QUEUE_PFN) == (u32)(addr_of(ring_mem) / LEGACY_PAGE));
#else
    CHECK(10, REG(VIRTIO_MMIO_QUEUE_READY) == 0);
    CHECK(11, REG(VIRTIO_MMIO_QUEUE_NUM_MAX) >= NUM);
    REG(VIRTIO_MMIO_QUEUE_NUM) = NUM;
    REG(VIRTIO_MMIO_QUEUE_DESC_LOW) = (u32)addr_of(descs);
    REG(VIRTIO_MMIO_QUEUE_DESC_HIGH) = (u32)((u64)addr_of(descs) >> 32);
    REG(VIRTIO_MMIO_QUEUE_DRIVER_LOW) = (u32)addr_of(&avail);
    REG(VIRTIO_MMIO_QUEUE_DRIVER_HIGH) = (u32)((u64)addr_of(&avail) >> 32);
    REG(VIRTIO_MMIO_QUEUE_DEVICE_LOW) = (u32)addr_of(&used);
    REG(VIRTIO_MMIO_QUEUE_DEVICE_HIGH) = (u32)((u64)addr_of(&used) >> 32);
    REG(VIRTIO_MMIO_QUEUE_READY) = 1;
    CHECK(12, REG(VIRTIO_MMIO_QUEUE_READY) == 1);
#endif
    st |= VIRTIO_STATUS_DRIVER_OK;
    REG(VIRTIO_MMIO_STATUS) = st;
    CHECK(13, REG(VIRTIO_MMIO_STATUS) == st);

    u64 capacity = REG(VIRTIO_MMIO_CONFIG + VIRTIO_BLK_CFG_CAPACITY) |
                   (u64)REG(VIRTIO_MMIO_CONFIG + VIRTIO_BLK_CFG_CAPACITY + 4) << 32;
    CHECK(14, capacity >= 2);
    CHECK(15, REG(VIRTIO_MMIO_CONFIG + VIRTIO_BLK_CFG_BLK_SIZE) == VIRTIO_BLK_SECTOR_SIZE);
    disk_capacity = capacity;
    return 0;
}

int virtio_blk_test(void) {
    DO(2, virtio_blk_init());
    u64 capacity = disk_capacity;
    int rs;
    u32 len;
    for (int i = 0; i < VIRTIO_BLK_SECTOR_SIZE; i++)
        out_buf[i] = (u8)(i * 7 + 3);
    DO(16, request(16, VIRTIO_BLK_T_OUT, 1, out_buf, sizeof out_buf, &rs, &len));
    CHECK(17, rs == VIRTIO_BLK_S_OK && len == 1);

    DO(18, request(18, VIRTIO_BLK_T_IN, 1, in_buf, sizeof in_buf, &rs, &len));
    CHECK(19, rs == VIRTIO_BLK_S_OK && len == sizeof in_buf + 1);
    for (int i = 0; i < VIRTIO_BLK_SECTOR_SIZE; i++)
        CHECK(20, in_buf[i] == out_buf[i]);

    DO(21, request(21, VIRTIO_BLK_T_FLUSH, 0, 0, 0, &rs, &len));
    CHECK(22, rs == VIRTIO_BLK_S_OK && len == 1);

    for (int i = 0; i < VIRTIO_BLK_ID_BYTES; i++)
        in_buf[i] = 0x55;
    DO(23, request(23, VIRTIO_BLK_T_GET_ID, 0, in_buf, VIRTIO_BLK_ID_BYTES, &rs, &len));
    CHECK(24, rs == VIRTIO_BLK_S_OK && len == VIRTIO_BLK_ID_BYTES + 1);
    CHECK(25, in_buf[0] == 0 && in_buf[1] == 0x55);

    DO(26, request(26, VIRTIO_BLK_T_IN, capacity, in_buf, sizeof in_buf, &rs, &len));
    CHECK(27, rs == VIRTIO_BLK_S_IOERR);
    return 0;
}
