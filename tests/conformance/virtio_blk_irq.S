// virtio_blk_irq.S: virtio-blk completions as interrupts: virtio-mmio slot 0's line,
// PLIC source PLATFORM_VIRTIO0_IRQ (1), to M (MEIP).
//
// Needs a drive (programs.py's DRIVES), modern transport. virtio_blk_irq.c initialises
// the device as virtio_blk.S does and routes source 1 to context 0 (priority 1,
// threshold 0); MEIE is set, mstatus.MIE clear. Then for a write of sector 1 and a
// read of it back: post the request, wait for MEIP with interrupts masked (QEMU
// completes the request on its own time), and set mstatus.MIE: the interrupt is taken
// right after that write, so the trap is the same on any host. The handler claims
// (1), reads InterruptStatus (1: used buffer), acknowledges it and completes. After
// each, the C half checks the claim, the status it read, the used ring (status OK and
// the length), that InterruptStatus and the PLIC's pending bits are 0, and for the read
// that the data came back; it returns 0 or its step number (2-15: initialisation, as
// virtio_blk.S; 20-24 the write, 30-35 the read), which the CHECK_REG after it reports.
//
// Expected traps, in order (to M):
//  4: m_external from M, epc = after `csrsi mstatus, MIE`
//  7: m_external from M, epc = after `csrsi mstatus, MIE`
#include "conformance.h"

// One request by interrupt: post it (C function `post`), wait for MEIP while masked,
// check MEIP (check `c`), expect the trap (check `c`+1), unmask, and run the C check
// `done` (check `c`+2 reports what it returned).
.macro REQUEST_BY_INTERRUPT c, post, done
    call \post
    WAIT_MIP MIP_MEIP
    CHECK_CSR_BITS \c, mip, MIP_MEIP, MIP_MEIP
    EXPECT (\c + 1), PRV_M, PRV_M, CAUSE_IRQ_M_EXTERNAL, .Ltaken\@, 0, RESUME_EPC, 0, hook_virtio_m
    csrsi mstatus, MSTATUS_MIE
.Ltaken\@:
    csrci mstatus, MSTATUS_MIE
    call \done
    CHECK_REG (\c + 2), a0, 0
.endm

TEST_MAIN virtio_blk_irq
    call virtio_irq_setup
    CHECK_REG 1, a0, 0
    li t0, MIP_MEIP
    csrw mie, t0
    CHECK_CSR_BITS 2, mip, MIP_MEIP, 0
    REQUEST_BY_INTERRUPT 3, virtio_irq_post_write, virtio_irq_check_write
    REQUEST_BY_INTERRUPT 6, virtio_irq_post_read, virtio_irq_check_read
    CHECK_CSR_BITS 9, mip, MIP_MEIP, 0
    csrw mie, zero
    TEST_PASS
