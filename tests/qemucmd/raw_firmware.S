// raw_firmware.S: loaded as a raw binary (-bios FILE) at 0x80000000. Checks what QEMU's
// reset vector hands firmware (a0 = hart id 0, a1 = a device tree: magic 0xd00dfeed,
// big-endian) and jumps to the kernel at 0x80200000, still in M-mode. Exits 91 when
// a0 is wrong, 92 when a1 is no device tree. Position-independent.
#define FINISHER 0x100000
#define FINISHER_FAIL 0x3333
#define KERNEL 0x80200000
#define FDT_MAGIC_LE 0xedfe0dd0     // 0xd00dfeed as a little-endian load sees it

    .section .text.entry
    .globl _start
_start:
    li t0, 91
    bnez a0, fail
    li t0, 92
    beqz a1, fail
    lwu t1, 0(a1)
    li t2, FDT_MAGIC_LE
    bne t1, t2, fail
    li t0, KERNEL
    jr t0
fail:
    slli t0, t0, 16
    li t1, FINISHER_FAIL
    or t0, t0, t1
    li t1, FINISHER
    sw t0, 0(t1)
1:  j 1b
