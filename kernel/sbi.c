// sbi.c: calls from the kernel into the firmware (SBI, include/sbi.h).
//
// `ecall` in S-mode traps to M-mode: our firmware (firmware/sbicalls.c) or OpenSBI. We
// probe for the debug console extension (DBCN) once and fall back to the legacy
// putchar/getchar calls, which QEMU 7.2's bundled OpenSBI 1.1 still needs.
#include "defs.h"
#include "riscv.h"
#include "sbi.h"

struct sbiret {
  long error;
  long value;
};

static struct sbiret sbi_call(uintptr_t eid, uintptr_t fid, uintptr_t a0, uintptr_t a1,
                              uintptr_t a2) {
  register uintptr_t r0 asm("a0") = a0;
  register uintptr_t r1 asm("a1") = a1;
  register uintptr_t r2 asm("a2") = a2;
  register uintptr_t r6 asm("a6") = fid;
  register uintptr_t r7 asm("a7") = eid;
  asm volatile("ecall" : "+r"(r0), "+r"(r1) : "r"(r2), "r"(r6), "r"(r7) : "memory");
  return (struct sbiret){(long)r0, (long)r1};
}

// The few calls with a fourth argument (a remote fence's size) come here.
static struct sbiret sbi_call4(uintptr_t eid, uintptr_t fid, uintptr_t a0, uintptr_t a1,
                               uintptr_t a2, uintptr_t a3) {
  register uintptr_t r0 asm("a0") = a0;
  register uintptr_t r1 asm("a1") = a1;
  register uintptr_t r2 asm("a2") = a2;
  register uintptr_t r3 asm("a3") = a3;
  register uintptr_t r6 asm("a6") = fid;
  register uintptr_t r7 asm("a7") = eid;
  asm volatile("ecall" : "+r"(r0), "+r"(r1) : "r"(r2), "r"(r3), "r"(r6), "r"(r7) : "memory");
  return (struct sbiret){(long)r0, (long)r1};
}

// Legacy calls return one value in a0.
static long sbi_legacy(uintptr_t eid, uintptr_t a0) {
  return sbi_call(eid, 0, a0, 0, 0).error;
}

static int dbcn;  // 1 if the firmware has the debug console extension

void sbi_console_init(void) {
  struct sbiret r = sbi_call(SBI_EXT_BASE, SBI_BASE_PROBE_EXT, SBI_EXT_DBCN, 0, 0);
  dbcn = r.error == SBI_SUCCESS && r.value != 0;
}

int sbi_has_dbcn(void) { return dbcn; }

void sbi_putchar(int c) {
  if (dbcn)
    sbi_call(SBI_EXT_DBCN, SBI_DBCN_WRITE_BYTE, (uint8_t)c, 0, 0);
  else
    sbi_legacy(SBI_LEGACY_CONSOLE_PUTCHAR, (uint8_t)c);
}

// One byte from the console, or -1 if none is waiting.
int sbi_getchar(void) {
  static char c;  // in the identity-mapped kernel image: DBCN needs a physical address
  if (dbcn)
    return sbi_console_read(&c, 1) == 1 ? (uint8_t)c : -1;
  long r = sbi_legacy(SBI_LEGACY_CONSOLE_GETCHAR, 0);
  return r < 0 ? -1 : (int)(r & 0xff);
}

// DBCN passes a physical address: buf must be in the identity-mapped kernel image or
// RAM, not on a kernel stack (see console.c). Returns bytes written, or -1.
long sbi_console_write(const char *buf, size_t n) {
  struct sbiret r = sbi_call(SBI_EXT_DBCN, SBI_DBCN_WRITE, n, (uintptr_t)buf, 0);
  return r.error == SBI_SUCCESS ? r.value : -1;
}

long sbi_console_read(char *buf, size_t n) {
  struct sbiret r = sbi_call(SBI_EXT_DBCN, SBI_DBCN_READ, n, (uintptr_t)buf, 0);
  return r.error == SBI_SUCCESS ? r.value : -1;
}

// Ask for a supervisor timer interrupt when `time` reaches `when` (this also clears
// the pending one). The firmware forwards the machine timer (firmware/clint.c).
void sbi_set_timer(uint64_t when) {
#if XLEN == 64
  sbi_call(SBI_EXT_TIME, SBI_TIME_SET_TIMER, when, 0, 0);
#else
  sbi_call(SBI_EXT_TIME, SBI_TIME_SET_TIMER, (uint32_t)when, (uint32_t)(when >> 32), 0);
#endif
}

// Power off with an exit status for the emulator. Our firmware understands the
// platform-specific reason; OpenSBI refuses it, so fall back to the standard reasons
// (the status is then only 0 or "failed"), and last to the legacy call.
void sbi_shutdown(int status) {
  uintptr_t reason = SBI_SRST_REASON_EXIT_STATUS | ((uintptr_t)status & SBI_SRST_EXIT_STATUS_MASK);
  sbi_call(SBI_EXT_SRST, SBI_SRST_RESET, SBI_SRST_TYPE_SHUTDOWN, reason, 0);
  reason = status == 0 ? SBI_SRST_REASON_NONE : SBI_SRST_REASON_SYSFAIL;
  sbi_call(SBI_EXT_SRST, SBI_SRST_RESET, SBI_SRST_TYPE_SHUTDOWN, reason, 0);
  sbi_legacy(SBI_LEGACY_SHUTDOWN, 0);
  for (;;)
    ;
}

// A kernel panic: SRST's "system failure" reason (the emulator exits with 1).
void sbi_system_failure(void) {
  sbi_call(SBI_EXT_SRST, SBI_SRST_RESET, SBI_SRST_TYPE_SHUTDOWN, SBI_SRST_REASON_SYSFAIL, 0);
  sbi_shutdown(1);
}

// Start hart `hartid` (HSM): it enters S-mode at start_addr with a0 = hartid, a1 =
// opaque and paging off. 0, or the SBI error (the hart is not there, or not STOPPED).
long sbi_hart_start(uintptr_t hartid, uintptr_t start_addr, uintptr_t opaque) {
  return sbi_call(SBI_EXT_HSM, SBI_HSM_HART_START, hartid, start_addr, opaque).error;
}

// Make the harts in hart_mask (bit h: hart h) flush their whole TLB (sfence.vma);
// returns once they have.
void sbi_remote_sfence_vma(uintptr_t hart_mask) {
  sbi_call4(SBI_EXT_RFENCE, SBI_RFENCE_SFENCE_VMA, hart_mask, 0, 0, (uintptr_t)-1);
}

// Raise the supervisor software interrupt (sip.SSIP) on the harts in hart_mask.
void sbi_send_ipi(uintptr_t hart_mask) {
  sbi_call(SBI_EXT_IPI, SBI_IPI_SEND_IPI, hart_mask, 0, 0);
}
