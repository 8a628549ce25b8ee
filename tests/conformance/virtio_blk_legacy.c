// virtio_blk_legacy.c: the C half of virtio_blk_legacy.S: virtio_blk.c's driver and
// checks, built for the legacy (version 1) virtio-mmio transport.
#define VIRTIO_LEGACY 1
#define virtio_blk_test virtio_blk_legacy_test
#include "virtio_blk.c"
