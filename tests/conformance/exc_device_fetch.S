// exc_device_fetch.S: instruction fetches from device registers (issue 45).
//
// The CLINT and the PLIC are I/O regions QEMU 7.2 cannot execute from: a jump there
// is an instruction access fault (cause 1) with epc = tval = the target. No
// translation is on and PMP grants everything, so the fault is the bus's own.
// (privlab: Unicorn stops with UC_ERR_FETCH_PROT, which the machine turns into this
// fault.) Not checked, because QEMU 7.2 *executes* from them, reading the registers as
// instruction bytes (an illegal instruction at the UART and the finisher, whatever
// the bytes decode to in a virtio slot, the reset vector in the ROM), where privlab
// takes this same access fault: the UART, the finisher, virtio-mmio and the ROM.
//
// Expected traps (taken in M):
//   1: fetch_access from M   epc = tval = 0x02000000   (CLINT msip)
//   2: fetch_access from M   epc = tval = 0x0200bff8   (CLINT mtime)
//   3: fetch_access from M   epc = tval = 0x0c000004   (PLIC priority 1)
//   4: fetch_access from M   epc = tval = 0x0c201004   (PLIC claim, context 1)
//   5: fetch_access from S   epc = tval = 0x0c002000   (PLIC enables, context 0)
//   6: supervisor_ecall back to M
//   7: fetch_access from U   epc = tval = 0x02004000   (CLINT mtimecmp)
//   8: user_ecall back to M
#include "conformance.h"

// A jump to device address `addr` from `from`: epc = tval = addr; resumes after it.
.macro FETCH check, from, addr
    li t0, \addr
    EXPECT \check, PRV_M, \from, CAUSE_FAULT_FETCH, \addr, \addr, RESUME_AT, .Lnext\@
    jalr t0
    FAIL_NO_TRAP \check
.Lnext\@:
.endm

TEST_MAIN exc_device_fetch
    FETCH 1, PRV_M, PLATFORM_CLINT_BASE
    FETCH 2, PRV_M, PLATFORM_CLINT_BASE + 0xbff8
    FETCH 3, PRV_M, PLATFORM_PLIC_BASE + 4
    FETCH 4, PRV_M, PLATFORM_PLIC_BASE + 0x201004

    MRET_TO PRV_S, in_s
in_s:
    FETCH 5, PRV_S, PLATFORM_PLIC_BASE + 0x2000
    ECALL_TO_M 6, PRV_S

    MRET_TO PRV_U, in_u
in_u:
    FETCH 7, PRV_U, PLATFORM_CLINT_BASE + 0x4000
    ECALL_TO_M 8, PRV_U

    TEST_PASS
