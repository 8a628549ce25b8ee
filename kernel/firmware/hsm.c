// hsm.c: several harts: hart state management (SBI HSM), IPIs and remote fences.
//
// Every hart runs mentry.S from reset. Hart 0 boots the kernel (fw_main); the others
// arrive in fw_secondary (from smpentry.S, on a stack of their own), mark themselves
// STOPPED and wait in wfi, as OpenSBI's harts do, until a hart_start names them: then
// they set up M-mode as hart 0 did and enter S at the start address with a0 = hart id,
// a1 = the opaque value, satp = 0 and sstatus.SIE = 0 (SBI v2.0, HSM).
//
// An IPI or a remote fence sets a request bit in the target's slot and raises its
// CLINT msip; the target takes the machine software interrupt (mtrap ->
// smp_soft_interrupt) and does what was asked: SSIP for its kernel, fence.i,
// sfence.vma. A remote fence returns once every target has done it; while it waits,
// the caller serves its own requests, so two harts fencing each other cannot deadlock.
// A hart is present once it has run mentry.S, a few instructions after reset; asked
// about a hart that is not there yet, the firmware waits up to PRESENT_WAIT_TICKS of
// mtime (100 ms) for it to appear before answering that there is no such hart.
#include "fw.h"
#include "platform.h"
#include "riscv.h"
#include "sbi.h"
#include "setup.h"

// All of this file lives in the .smp output sections (firmware.ld), after everything
// else, so a one-hart boot keeps its code and data at their addresses.
#pragma clang section text = ".smp.text" rodata = ".smp.rodata" data = ".smp.data" bss = ".smp.bss"

#define REQ_SSIP    1u  // raise the supervisor software interrupt
#define REQ_FENCE_I 2u
#define REQ_SFENCE  4u  // sfence.vma (all of it: a superset of any range asked for)
#define HART_BITS   (8 * sizeof(uintptr_t))
// 100 ms at the 10 MHz timebase. On QEMU each hart is a host thread, which a loaded
// host may not run for tens of milliseconds after reset (with 1 ms, hart_start(1)
// under a parallel test suite sometimes found no hart 1, and the program waited for
// it forever); on privlab every hart is there after its first turn, and the wait is
// paid only when asking about a hart that does not exist.
#define PRESENT_WAIT_TICKS 1000000

struct hart_slot {
  volatile uint32_t present;   // the hart exists: it has run mentry.S
  volatile uint32_t state;     // SBI_HSM_*
  volatile uint32_t requests;  // REQ_* bits, set by other harts
  volatile uintptr_t start_addr, opaque;
};

// Zero at reset (.bss: a one-hart boot keeps its memory layout): state 0 is STARTED,
// which hart 0 is from its first instruction; hart 0 is always present.
static struct hart_slot slots[PLATFORM_MAX_HARTS];

// Each hart's M-mode stack after it leaves the boot path (smpentry.S).
__attribute__((aligned(16))) uint8_t fw_smp_stacks[PLATFORM_MAX_HARTS][FW_STACK_SIZE];

static volatile uint32_t *const msip = (volatile uint32_t *)(PLATFORM_CLINT_BASE + CLINT_MSIP);

void fw_restart_stopped(uintptr_t hartid) __attribute__((noreturn));  // smpentry.S
void smp_mtrap_vector(void);                                          // smpentry.S
void smp_wait_start(uintptr_t hartid) __attribute__((noreturn));

// Whether hart h exists (see above).
static int present(uintptr_t h) {
  if (h == 0)
    return 1;
  if (h >= PLATFORM_MAX_HARTS)
    return 0;
  uint32_t start = (uint32_t)r_time();
  while (!slots[h].present && (uint32_t)r_time() - start < PRESENT_WAIT_TICKS)
    ;
  return slots[h].present != 0;
}

static void request(uintptr_t hart, uint32_t bits) {
  __atomic_fetch_or(&slots[hart].requests, bits, __ATOMIC_SEQ_CST);
  msip[hart] = 1;
}

// Do what other harts asked of this one.
static void serve(uintptr_t me) {
  msip[me] = 0;
  uint32_t req = __atomic_exchange_n(&slots[me].requests, 0, __ATOMIC_SEQ_CST);
  if (req & REQ_SSIP)
    mip_set(MIP_SSIP);
  if (req & REQ_FENCE_I)
    asm volatile("fence.i");
  if (req & REQ_SFENCE)
    asm volatile("sfence.vma zero, zero");
}

// The harts a hart mask names (SBI v2.0: bit i of mask is hart base + i; base -1 means
// every hart), as a bit set; -1 if it names a hart that is not there.
static long mask_harts(uintptr_t mask, uintptr_t base) {
  long set = 0;
  if (base == (uintptr_t)-1) {
    for (uintptr_t h = 0; h < PLATFORM_MAX_HARTS; h++)
      if (h == 0 || slots[h].present)  // every hart that is there now
        set |= 1L << h;
    return set;
  }
  for (uintptr_t i = 0; i < HART_BITS; i++) {
    if (!((mask >> i) & 1))
      continue;
    uintptr_t h = base + i;
    if (h < base || !present(h))
      return -1;
    set |= 1L << h;
  }
  return set;
}

// Send `bits` to the started harts of `set`; with `wait`, until each has done them.
static void send(long set, uint32_t bits, int wait) {
  uintptr_t me = r_mhartid();
  for (uintptr_t h = 0; h < PLATFORM_MAX_HARTS; h++)
    if (((set >> h) & 1) && slots[h].state == SBI_HSM_STARTED)
      request(h, bits);
  if (!wait)
    return;
  serve(me);  // this hart's own share, at once
  for (uintptr_t h = 0; h < PLATFORM_MAX_HARTS; h++)
    while (h != me && ((set >> h) & 1) && slots[h].state == SBI_HSM_STARTED &&
           (slots[h].requests & bits))
      serve(me);
}

static struct sbiret hart_start(uintptr_t hartid, uintptr_t addr, uintptr_t opaque) {
  if (!present(hartid))
    return (struct sbiret){SBI_ERR_INVALID_PARAM, 0};
  if (addr < PLATFORM_RAM_BASE || addr - PLATFORM_RAM_BASE >= PLATFORM_RAM_SIZE_MAX)
    return (struct sbiret){SBI_ERR_INVALID_ADDRESS, 0};
  // As OpenSBI: a started hart is ALREADY_AVAILABLE, one on its way to starting or
  // stopping an INVALID_PARAM.
  if (slots[hartid].state == SBI_HSM_STARTED)
    return (struct sbiret){SBI_ERR_ALREADY_AVAILABLE, 0};
  if (slots[hartid].state != SBI_HSM_STOPPED)
    return (struct sbiret){SBI_ERR_INVALID_PARAM, 0};
  slots[hartid].start_addr = addr;
  slots[hartid].opaque = opaque;
  __atomic_store_n(&slots[hartid].state, SBI_HSM_START_PENDING, __ATOMIC_SEQ_CST);
  msip[hartid] = 1;
  // The caller takes IPIs from now on (the started hart may send them), and sets its
  // own timer through smp_mtrap.
  w_mtvec((uintptr_t)smp_mtrap_vector);
  mie_set(MIE_MSIE);
  return (struct sbiret){SBI_SUCCESS, 0};
}

// The SBI calls of sbicalls.c's extensions IPI, RFENCE and HSM (sbicalls.c's probe names them).
struct sbiret smp_sbi(uintptr_t eid, uintptr_t fid, const uintptr_t *a) {
  struct sbiret r = {SBI_ERR_NOT_SUPPORTED, 0};
  long set;
  uintptr_t me = r_mhartid();
  if (eid == SBI_EXT_IPI && fid == SBI_IPI_SEND_IPI) {
    set = mask_harts(a[0], a[1]);
    if (set < 0) {
      r.error = SBI_ERR_INVALID_PARAM;
    } else {
      send(set, REQ_SSIP, 0);
      r.error = SBI_SUCCESS;
    }
  } else if (eid == SBI_EXT_RFENCE && fid <= SBI_RFENCE_SFENCE_VMA_ASID) {
    set = mask_harts(a[0], a[1]);
    if (set < 0) {
      r.error = SBI_ERR_INVALID_PARAM;
    } else {
      send(set, fid == SBI_RFENCE_FENCE_I ? REQ_FENCE_I : REQ_SFENCE, 1);
      r.error = SBI_SUCCESS;
    }
  } else if (eid == SBI_EXT_HSM && fid == SBI_HSM_HART_START) {
    r = hart_start(a[0], a[1], a[2]);
  } else if (eid == SBI_EXT_HSM && fid == SBI_HSM_HART_STOP) {
    slots[me].state = SBI_HSM_STOPPED;
    fw_restart_stopped(me);  // waits for the next hart_start; never returns here
  } else if (eid == SBI_EXT_HSM && fid == SBI_HSM_HART_GET_STATUS) {
    if (!present(a[0]))
      r.error = SBI_ERR_INVALID_PARAM;
    else
      r = (struct sbiret){SBI_SUCCESS, (long)slots[a[0]].state};
  }
  return r;
}

// From smpentry.S: a hart other than 0, after reset.
void fw_secondary(uintptr_t hartid) __attribute__((noreturn));
void fw_secondary(uintptr_t hartid) {
  slots[hartid].state = SBI_HSM_STOPPED;
  __atomic_store_n(&slots[hartid].present, 1, __ATOMIC_SEQ_CST);
  smp_wait_start(hartid);
}

// Wait (mstatus.MIE = 0: wfi wakes on the msip that hart_start raises, no trap is
// taken) until hart_start names this hart, then enter S where it says.
void smp_wait_start(uintptr_t me) {
  w_mstatus(r_mstatus() & ~MSTATUS_MIE);
  mie_set(MIE_MSIE);
  for (;;) {
    msip[me] = 0;
    if (slots[me].state == SBI_HSM_START_PENDING)
      break;
    wfi();
  }
  slots[me].requests = 0;
  w_mtvec((uintptr_t)smp_mtrap_vector);
  w_mscratch((uintptr_t)&fw_smp_stacks[0][0] + (me + 1) * FW_STACK_SIZE);  // smpentry.S's
  machine_setup();
  w_mstatus(r_mstatus() & ~MSTATUS_SIE);
  __atomic_store_n(&slots[me].state, SBI_HSM_STARTED, __ATOMIC_SEQ_CST);
  enter_supervisor(me, slots[me].opaque, slots[me].start_addr);
}

// This hart's timer (clint.c's timer_set is hart 0's, and stays as it was for a
// one-hart boot): hart k's mtimecmp is 8k bytes past hart 0's.
static void smp_timer_set(uint64_t when) {
  volatile uint32_t *mtimecmp =
      (volatile uint32_t *)(PLATFORM_CLINT_BASE + CLINT_MTIMECMP + 8 * r_mhartid());
  mtimecmp[1] = 0xffffffff;  // no spurious compare between the two halves
  mtimecmp[0] = (uint32_t)when;
  mtimecmp[1] = (uint32_t)(when >> 32);
  mip_clear(MIP_STIP);
  mie_set(MIE_MTIE);
}

// Called by smp_mtrap_vector for every trap that reaches M-mode on such a hart.
void smp_mtrap(struct mframe *f);
void smp_mtrap(struct mframe *f) {
  uintptr_t cause = r_mcause();
  uintptr_t *a = &f->regs[REG_A0];
  uintptr_t eid = f->regs[REG_A7], fid = f->regs[REG_A6];
  if (cause == (CAUSE_INTERRUPT | IRQ_M_TIMER)) {
    timer_interrupt();
  } else if (cause == (CAUSE_INTERRUPT | IRQ_M_SOFTWARE)) {
    serve(r_mhartid());
  } else if (cause == CAUSE_SUPERVISOR_ECALL) {
    if (eid == SBI_LEGACY_SET_TIMER) {
      smp_timer_set(timer_arg(a));
      a[0] = 0;
    } else if (eid == SBI_EXT_TIME && fid == SBI_TIME_SET_TIMER) {
      smp_timer_set(timer_arg(a));
      a[0] = SBI_SUCCESS;
      a[1] = 0;
    } else {
      sbi_handle(f);
    }
    w_mepc(r_mepc() + 4);  // resume after the ecall
  } else {
    fw_panic("unexpected trap: mcause", cause, r_mepc(), r_mtval());
  }
}
