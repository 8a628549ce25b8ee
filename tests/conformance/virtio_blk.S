// virtio_blk.S: the virtio-blk device in virtio-mmio slot 0, through the modern
// (version 2) transport, polling (no interrupts are enabled, no trap is expected).
//
// Needs a drive: programs.py's DRIVES gives its size; QEMU runs with
// `-global virtio-mmio.force-legacy=false -drive file=IMG,format=raw,if=none,id=x0
// -device virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0`.
//
// virtio_blk.c does the work: the identity registers; the initialisation sequence of
// virtio 1.2, 3.1.1 (reset, ACKNOWLEDGE, DRIVER, feature negotiation with VERSION_1,
// FEATURES_OK read back, queue 0 set up through QueueDesc/Driver/Device and
// QueueReady, DRIVER_OK); the config space's capacity and blk_size; then, one request
// at a time, waiting for the used ring: write sector 1, read it back and compare,
// FLUSH, GET_ID (the empty serial), and a read at sector `capacity`, which is IOERR.
// After each completion InterruptStatus has bit 0 set and InterruptACK clears it.
// virtio_blk_test returns 0, or the number of the step that failed, which check 1
// reports as its `got` value.
//
// Expected traps: none.
#include "conformance.h"

TEST_MAIN virtio_blk
    call virtio_blk_test
    CHECK_REG 1, a0, 0
    TEST_PASS
