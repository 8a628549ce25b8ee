// exc_device_fetch.S: instruction fetches from device registers.
//
// QEMU 7.2 fetches from a device as a 2-byte read of its registers. The CLINT and
// the PLIC take only 4-byte accesses (4 or 8 for the timer), so a jump there is an
// instruction access fault (cause 1) with epc = tval = the target. No translation is
// on and PMP grants everything, so the fault is the bus's own. The finisher takes the
// read, and what it returns is executed: it reads 0 anywhere in its page, the all-zero
// parcel, an illegal instruction (cause 2, tval = the parcel, 0). (privlab: Unicorn
// stops with UC_ERR_FETCH_PROT, and the machine reads the parcel as QEMU does:
// Machine._device_fetch.) The UART's registers: exc_uart_fetch.S. Not checked:
// virtio-mmio and the reset ROM, which QEMU executes (privlab: an instruction access
// fault).
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
//   9: illegal_instruction from M   epc = 0x00100000, tval 0      (finisher)
//  10: illegal_instruction from M   epc = 0x00100ff0, tval 0      (finisher)
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
    FETCH_ILLEGAL 9, PRV_M, FINISHER_ADDR, 0
    FETCH_ILLEGAL 10, PRV_M, FINISHER_ADDR + 0xff0, 0

    MRET_TO PRV_S, in_s
in_s:
    FETCH 5, PRV_S, PLATFORM_PLIC_BASE + 0x2000
    ECALL_TO_M 6, PRV_S

    MRET_TO PRV_U, in_u
in_u:
    FETCH 7, PRV_U, PLATFORM_CLINT_BASE + 0x4000
    ECALL_TO_M 8, PRV_U


    TEST_PASS
