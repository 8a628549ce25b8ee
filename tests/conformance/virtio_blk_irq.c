// virtio_blk_irq.c: the C half of virtio_blk_irq.S: virtio_blk.c's driver, with each
// request's completion taken as an interrupt instead of polled.
#define virtio_blk_test virtio_blk_irq_polled_test   // unused here
#include "virtio_blk.c"

reg_t virtio_claimed;     // the id hook_virtio_m claimed
reg_t virtio_isr_seen;    // InterruptStatus as it read it, before acknowledging

// Initialise the device, and route PLIC source PLATFORM_VIRTIO0_IRQ (slot 0) to M:
// priority 1, enabled in context 0, threshold 0. 0, or the failed step.
int virtio_irq_setup(void) {
    DO(2, virtio_blk_init());
    *(volatile u32 *)(reg_t)PLIC_PRIORITY_ADDR(PLATFORM_VIRTIO0_IRQ) = 1;
    *(volatile u32 *)(reg_t)PLIC_THRESHOLD_ADDR(PLIC_CONTEXT_M) = 0;
    *(volatile u32 *)(reg_t)PLIC_ENABLE_ADDR(PLIC_CONTEXT_M) = 1u << PLATFORM_VIRTIO0_IRQ;
    for (int i = 0; i < VIRTIO_BLK_SECTOR_SIZE; i++)
        out_buf[i] = (u8)(i * 5 + 1);
    return 0;
}

void virtio_irq_post_write(void) {
    post(VIRTIO_BLK_T_OUT, 1, out_buf, sizeof out_buf);
}

void virtio_irq_post_read(void) {
    for (int i = 0; i < VIRTIO_BLK_SECTOR_SIZE; i++)
        in_buf[i] = 0;
    post(VIRTIO_BLK_T_IN, 1, in_buf, sizeof in_buf);
}

// The M external interrupt's handler: claim, read and acknowledge the device's
// InterruptStatus, complete.
void hook_virtio_m(void *frame) {
    (void)frame;
    u32 id = *(volatile u32 *)(reg_t)PLIC_CLAIM_ADDR(PLIC_CONTEXT_M);
    virtio_claimed = id;
    virtio_isr_seen = REG(VIRTIO_MMIO_INTERRUPT_STATUS);
    REG(VIRTIO_MMIO_INTERRUPT_ACK) = (u32)virtio_isr_seen;
    *(volatile u32 *)(reg_t)PLIC_CLAIM_ADDR(PLIC_CONTEXT_M) = id;
}

// After the interrupt: the handler saw source PLATFORM_VIRTIO0_IRQ and a used buffer,
// the request completed (`len` bytes written by the device), the device's interrupt
// is clear and nothing is pending at the PLIC. 0, or `step` + what failed.
static int completed(int step, u32 want_len) {
    int st;
    u32 len;
    CHECK(step, virtio_claimed == PLATFORM_VIRTIO0_IRQ);
    CHECK(step + 1, virtio_isr_seen == VIRTIO_INT_USED_BUFFER);
    CHECK(step + 2, reap(step + 2, &st, &len) == 0 && st == VIRTIO_BLK_S_OK && len == want_len);
    CHECK(step + 3, REG(VIRTIO_MMIO_INTERRUPT_STATUS) == 0);
    CHECK(step + 4, *(volatile u32 *)(reg_t)(PLATFORM_PLIC_BASE + PLIC_PENDING) == 0);
    return 0;
}

int virtio_irq_check_write(void) {
    return completed(20, 1);
}

int virtio_irq_check_read(void) {
    DO(30, completed(30, sizeof in_buf + 1));
    for (int i = 0; i < VIRTIO_BLK_SECTOR_SIZE; i++)
        CHECK(35, in_buf[i] == out_buf[i]);
    return 0;
}
