// sbicalls.c: the SBI calls the firmware implements (a subset of SBI v2.0, see include/sbi.h).
//
// Entered from mtrap() for an ecall from S: a7 = extension, a6 = function, a0..a5 =
// arguments. SBI v0.2+ calls return an error code in a0 and a value in a1; the legacy
// v0.1 calls return one value in a0.
#include "fw.h"
#include "platform.h"
#include "riscv.h"
#include "sbi.h"


static struct sbiret ok(long value) { return (struct sbiret){SBI_SUCCESS, value}; }
static struct sbiret fail(long error) { return (struct sbiret){error, 0}; }

static int extension_present(uintptr_t eid) {
  switch (eid) {
  case SBI_LEGACY_SET_TIMER:
  case SBI_LEGACY_CONSOLE_PUTCHAR:
  case SBI_LEGACY_CONSOLE_GETCHAR:
  case SBI_LEGACY_SHUTDOWN:
  case SBI_EXT_BASE:
  case SBI_EXT_TIME:
  case SBI_EXT_SRST:
  case SBI_EXT_DBCN:
    return 1;
  }
  return eid == SBI_EXT_IPI || eid == SBI_EXT_RFENCE || eid == SBI_EXT_HSM;  // hsm.c
}

static struct sbiret base(uintptr_t fid, uintptr_t arg) {
  switch (fid) {
  case SBI_BASE_GET_SPEC_VERSION: return ok(SBI_SPEC_VERSION);
  case SBI_BASE_GET_IMPL_ID:      return ok(SBI_IMPL_ID_PRIVLAB);
  case SBI_BASE_GET_IMPL_VERSION: return ok(SBI_IMPL_VERSION);
  case SBI_BASE_PROBE_EXT:        return ok(extension_present(arg));
  case SBI_BASE_GET_MVENDORID:    return ok(r_mvendorid());
  case SBI_BASE_GET_MARCHID:      return ok(r_marchid());
  case SBI_BASE_GET_MIMPID:       return ok(r_mimpid());
  }
  return fail(SBI_ERR_NOT_SUPPORTED);
}

// SRST: shutdown ends the machine with an exit status; reboots reset it.
static struct sbiret system_reset(uintptr_t type, uintptr_t reason) {
  if (type > 0xffffffffu || reason > 0xffffffffu)
    return fail(SBI_ERR_INVALID_PARAM);
  if (type == SBI_SRST_TYPE_COLD_REBOOT || type == SBI_SRST_TYPE_WARM_REBOOT)
    finisher_reset();
  if (type != SBI_SRST_TYPE_SHUTDOWN)
    return fail(SBI_ERR_INVALID_PARAM);
  if (reason == SBI_SRST_REASON_NONE)
    finisher_exit(0);
  if (reason == SBI_SRST_REASON_SYSFAIL)
    finisher_exit(1);
  if ((reason & ~(uintptr_t)SBI_SRST_EXIT_STATUS_MASK) == SBI_SRST_REASON_EXIT_STATUS)
    finisher_exit(reason & SBI_SRST_EXIT_STATUS_MASK);
  return fail(SBI_ERR_INVALID_PARAM);
}

// DBCN takes a physical address split in two registers; on RV64 the high half is 0.
// The buffer must lie in RAM (M-mode accesses are physical, and unchecked by PMP).
static volatile uint8_t *console_buffer(uintptr_t len, uintptr_t lo, uintptr_t hi) {
  uintptr_t offset = lo - PLATFORM_RAM_BASE;  // written so that nothing can overflow
  if (hi != 0 || lo < PLATFORM_RAM_BASE || offset > PLATFORM_RAM_SIZE_MAX ||
      len > PLATFORM_RAM_SIZE_MAX - offset)
    return 0;
  return (volatile uint8_t *)lo;
}

static struct sbiret debug_console(uintptr_t fid, uintptr_t a0, uintptr_t a1, uintptr_t a2) {
  volatile uint8_t *buf;
  uintptr_t i = 0;
  int c;
  switch (fid) {
  case SBI_DBCN_WRITE:
    if ((buf = console_buffer(a0, a1, a2)) == 0)
      return fail(SBI_ERR_INVALID_PARAM);
    for (; i < a0; i++)
      uart_putc(buf[i]);
    return ok(a0);
  case SBI_DBCN_READ:
    if ((buf = console_buffer(a0, a1, a2)) == 0)
      return fail(SBI_ERR_INVALID_PARAM);
    for (; i < a0 && (c = uart_getc()) >= 0; i++)
      buf[i] = (uint8_t)c;
    return ok(i);
  case SBI_DBCN_WRITE_BYTE:
    uart_putc(a0 & 0xff);
    return ok(0);
  }
  return fail(SBI_ERR_NOT_SUPPORTED);
}

// Legacy (v0.1) calls: one result in a0, a1 untouched.
static void legacy(struct mframe *f, uintptr_t eid) {
  uintptr_t *a = &f->regs[REG_A0];
  switch (eid) {
  case SBI_LEGACY_SET_TIMER:
    timer_set(timer_arg(a));
    a[0] = 0;
    break;
  case SBI_LEGACY_CONSOLE_PUTCHAR:
    uart_putc(a[0] & 0xff);
    a[0] = 0;
    break;
  case SBI_LEGACY_CONSOLE_GETCHAR:
    a[0] = (uintptr_t)(long)uart_getc();
    break;
  case SBI_LEGACY_SHUTDOWN:
    finisher_exit(0);
  }
}

void sbi_handle(struct mframe *f) {
  uintptr_t eid = f->regs[REG_A7], fid = f->regs[REG_A6];
  uintptr_t *a = &f->regs[REG_A0];
  struct sbiret r;
  if (eid <= SBI_LEGACY_SHUTDOWN && extension_present(eid)) {
    legacy(f, eid);
    return;
  }
  switch (eid) {
  case SBI_EXT_BASE:
    r = base(fid, a[0]);
    break;
  case SBI_EXT_TIME:
    if (fid != SBI_TIME_SET_TIMER) {
      r = fail(SBI_ERR_NOT_SUPPORTED);
      break;
    }
    timer_set(timer_arg(a));
    r = ok(0);
    break;
  case SBI_EXT_SRST:
    r = fid == SBI_SRST_RESET ? system_reset(a[0], a[1]) : fail(SBI_ERR_NOT_SUPPORTED);
    break;
  case SBI_EXT_DBCN:
    r = debug_console(fid, a[0], a[1], a[2]);
    break;
  default:
    r = smp_sbi(eid, fid, a);  // IPI, RFENCE, HSM (hsm.c), or not supported
  }
  a[0] = (uintptr_t)r.error;
  a[1] = (uintptr_t)r.value;
}
