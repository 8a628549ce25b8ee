// virtio_blk_legacy.S: virtio_blk.S's checks through the legacy (version 1) transport,
// as QEMU 7.2 offers by default (`-global virtio-mmio.force-legacy=true`) and privlab
// with `--virtio-legacy`; polling, no interrupts.
//
// Needs a drive (programs.py's DRIVES) and the legacy transport (programs.py's
// LEGACY). The differences from virtio_blk.S are in the initialisation: Version reads 1;
// the driver does not negotiate VERSION_1 (the high feature word reads 0) and sets no
// FEATURES_OK; it writes GuestPageSize, and places the queue with QueueNum, QueueAlign
// and QueuePFN (read back), descriptors and available ring in one page and the used
// ring at the next page boundary. The requests and their checks are the same: write
// sector 1, read it back, FLUSH, GET_ID, and a read at sector `capacity` (IOERR).
// virtio_blk_legacy_test returns 0, or the number of the step that failed, which
// check 1 reports as its `got` value.
//
// Expected traps: none.
#include "conformance.h"

TEST_MAIN virtio_blk_legacy
    call virtio_blk_legacy_test
    CHECK_REG 1, a0, 0
    TEST_PASS
