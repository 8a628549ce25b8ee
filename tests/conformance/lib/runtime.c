// runtime.c: the checking side of every conformance program.
//
// trap_m / trap_s are called from the trap entry stubs in entry.S with the saved
// registers and the vector slot the trap came through. They compare the trap with the
// next record of the program's EXPECT table (conformance.h), record it in `last_trap`
// for the program's own CHECK_LAST checks, run the record's hook and tell the stub how
// to leave. Failures are reported here, on the UART and through the sifive_test
// finisher, from M or from S (the standard page tables keep MMIO identity-mapped).
//
// Also here: the CLINT timer helpers and the Sv39/Sv32 page-table builder the
// programs call from M-mode.
#include "conformance.h"

typedef unsigned long reg_t;
typedef unsigned int u32;
typedef unsigned long long u64;

struct expect {
    reg_t check, level, from, cause, epc, tval, action, resume, hook;
};
struct last_trap {
    reg_t count, level, cause, epc, tval, status, slot;
};
struct frame {
    reg_t x[STACK_FRAME_WORDS];
};
typedef void (*hook_fn)(struct frame *);

_Static_assert(sizeof(struct expect) == EXP_WORDS * sizeof(reg_t), "EXPECT record");
_Static_assert(sizeof(struct last_trap) == LAST_WORDS * sizeof(reg_t), "last_trap");

extern const struct expect expect_table[];
extern const char test_name[];

struct last_trap last_trap;
static const struct expect *cursor = expect_table;

#define csrr(csr) ({ reg_t v_; __asm__ volatile("csrr %0, " #csr : "=r"(v_)); v_; })
#define csrw(csr, v) __asm__ volatile("csrw " #csr ", %0" ::"r"((reg_t)(v)))
#define csrs(csr, v) __asm__ volatile("csrs " #csr ", %0" ::"r"((reg_t)(v)))
#define csrc(csr, v) __asm__ volatile("csrc " #csr ", %0" ::"r"((reg_t)(v)))

#define MMIO32(addr) (*(volatile u32 *)(reg_t)(addr))
#define MMIO8(addr) (*(volatile unsigned char *)(reg_t)(addr))

// ---- Console and finisher ------------------------------------------------------------

#define UART_THR 0
#define UART_LSR 5
#define UART_LSR_THRE 0x20

static void putc_(char c) {
    while (!(MMIO8(PLATFORM_UART0_BASE + UART_LSR) & UART_LSR_THRE)) {
    }
    MMIO8(PLATFORM_UART0_BASE + UART_THR) = (unsigned char)c;
}

static void puts_(const char *s) {
    while (*s)
        putc_(*s++);
}

static void puthex(reg_t v) {
    puts_("0x");
    for (int shift = __riscv_xlen - 4; shift >= 0; shift -= 4)
        putc_("0123456789abcdef"[(v >> shift) & 0xf]);
}

static void putdec(reg_t v) {
    char buf[24];
    int i = 0;
    do {
        buf[i++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (i)
        putc_(buf[--i]);
}

static __attribute__((noreturn)) void finish(u32 value) {
    for (;;)
        MMIO32(FINISHER_ADDR) = value;
}

static void banner(void) {
    puts_("conformance: ");
    puts_(test_name);
    puts_(": ");
}

static __attribute__((noreturn)) void fail(reg_t check, const char *what, reg_t got,
                                           reg_t want) {
    banner();
    puts_("FAIL check ");
    putdec(check);
    puts_(" (");
    puts_(what);
    puts_("): got ");
    puthex(got);
    puts_(" want ");
    puthex(want);
    putc_('\n');
    finish(FINISHER_FAIL | (u32)(check << 16));
}

// Reached through TEST_PASS: every EXPECT record must have been used.
__attribute__((noreturn)) void conformance_pass(void) {
    if (cursor->check != 0)
        fail(cursor->check, "expected trap never happened", 0, cursor->cause);
    banner();
    puts_("PASS (");
    putdec(last_trap.count);
    puts_(" traps)\n");
    finish(FINISHER_PASS);
}

// ---- Trap checking ---------------------------------------------------------------------

struct trap {
    reg_t level, cause, epc, tval, status, tvec;
    long slot;
};

static const char *const what_names[] = {"value", "no trap"};

static int is_ecall(reg_t cause) {
    return cause == CAUSE_USER_ECALL || cause == CAUSE_SUPERVISOR_ECALL ||
           cause == CAUSE_MACHINE_ECALL;
}

static __attribute__((noreturn)) void unexpected(const struct trap *t) {
    banner();
    puts_("unexpected trap to ");
    puts_(t->level == PRV_M ? "M" : "S");
    puts_(": cause ");
    puthex(t->cause);
    puts_(" epc ");
    puthex(t->epc);
    puts_(" tval ");
    puthex(t->tval);
    putc_('\n');
    fail(CHECK_UNEXPECTED_TRAP, "unexpected trap", t->cause, 0);
}

static void expect_eq(const struct expect *e, const char *what, reg_t got, reg_t want) {
    if (got != want)
        fail(e->check, what, got, want);
}

static reg_t interrupt_code(reg_t cause) {
    return cause & ~(reg_t)CAUSE_INTERRUPT;
}

// The slot the trap must have entered through: direct mode has its own entry (-1);
// vectored mode sends interrupts to slot `code` and exceptions to slot 0 (BASE).
static long expected_slot(const struct trap *t) {
    if ((t->tvec & 3) == 0)
        return -1;
    return (t->cause & CAUSE_INTERRUPT) ? (long)interrupt_code(t->cause) : 0;
}

// Check `t` against the next record; returns the record (already consumed).
static const struct expect *check_trap(struct frame *f, const struct trap *t) {
    if (is_ecall(t->cause) && f->x[17] == FAIL_MAGIC) {
        reg_t what = f->x[13] < 2 ? f->x[13] : 0;
        fail(f->x[10], what_names[what], f->x[11], f->x[12]);
    }
    last_trap.count++;
    last_trap.level = t->level;
    last_trap.cause = t->cause;
    last_trap.epc = t->epc;
    last_trap.tval = t->tval;
    last_trap.status = t->status;
    last_trap.slot = (reg_t)t->slot;

    const struct expect *e = cursor;
    if (e->check == 0)
        unexpected(t);
    cursor++;
    reg_t from = t->level == PRV_M ? (t->status & MSTATUS_MPP) >> 11
                                   : (t->status & MSTATUS_SPP) >> 8;
    reg_t ie = t->level == PRV_M ? MSTATUS_MIE : MSTATUS_SIE;
    expect_eq(e, "cause", t->cause, e->cause);
    expect_eq(e, "level", t->level, e->level);
    expect_eq(e, "from (xPP)", from, e->from);
    expect_eq(e, "epc", t->epc, e->epc);
    expect_eq(e, "tval", t->tval, e->tval);
    expect_eq(e, "xIE cleared on entry", t->status & ie, 0);
    expect_eq(e, "vector slot", (reg_t)t->slot, (reg_t)expected_slot(t));
    if (e->hook)
        ((hook_fn)e->hook)(f);
    return e;
}

// What the stub does next: 0 = xRET to the (possibly updated) xepc, else jump there.
static reg_t resume(const struct expect *e, reg_t *epc) {
    switch (e->action) {
    case RESUME_EPC:
        return 0;
    case RESUME_AT:
        *epc = e->resume;
        return 0;
    case RESUME_SKIP4:
        *epc += 4;
        return 0;
    case RESUME_JUMP:
        return e->resume;
    default:
        fail(e->check, "bad EXPECT action", e->action, 0);
    }
}

reg_t trap_m(struct frame *f, long slot) {
    struct trap t = {PRV_M, csrr(mcause), csrr(mepc), csrr(mtval), csrr(mstatus),
                     csrr(mtvec), slot};
    reg_t epc = t.epc;
    reg_t jump = resume(check_trap(f, &t), &epc);
    csrw(mepc, epc);
    return jump;
}

reg_t trap_s(struct frame *f, long slot) {
    struct trap t = {PRV_S, csrr(scause), csrr(sepc), csrr(stval), csrr(sstatus),
                     csrr(stvec), slot};
    reg_t epc = t.epc;
    reg_t jump = resume(check_trap(f, &t), &epc);
    csrw(sepc, epc);
    return jump;
}

// ---- CLINT timer (M-mode) ----------------------------------------------------------------

u64 timer_now(void) {
#if __riscv_xlen == 64
    return *(volatile u64 *)CLINT_MTIME_ADDR;
#else
    u32 hi, lo;
    do {
        hi = MMIO32(CLINT_MTIME_ADDR + 4);
        lo = MMIO32(CLINT_MTIME_ADDR);
    } while (hi != MMIO32(CLINT_MTIME_ADDR + 4));
    return ((u64)hi << 32) | lo;
#endif
}

static void timer_set(u64 when) {
#if __riscv_xlen == 64
    *(volatile u64 *)CLINT_MTIMECMP_ADDR = when;
#else
    // High word first at all ones, so the compare never passes through an early value.
    MMIO32(CLINT_MTIMECMP_ADDR + 4) = 0xffffffff;
    MMIO32(CLINT_MTIMECMP_ADDR) = (u32)when;
    MMIO32(CLINT_MTIMECMP_ADDR + 4) = (u32)(when >> 32);
#endif
}

void timer_set_delta(reg_t delta) {
    timer_set(timer_now() + delta);
}

void timer_off(void) {
    timer_set(~(u64)0);
}

// ---- Standard hooks (run inside the handler, at its privilege) -------------------------

void hook_clear_mtimer(struct frame *f) {
    (void)f;
    timer_off();
}

void hook_clear_msip(struct frame *f) {
    (void)f;
    MMIO32(CLINT_MSIP_ADDR) = 0;
}

void hook_m_clear_ssip(struct frame *f) {
    (void)f;
    csrc(mip, MIP_SSIP);
}

void hook_s_clear_ssip(struct frame *f) {
    (void)f;
    csrc(sip, MIP_SSIP);
}

void hook_m_clear_stip(struct frame *f) {
    (void)f;
    csrc(mip, MIP_STIP);
}

// ---- PLIC and UART interrupts ------------------------------------------------------

reg_t plic_claimed;   // the id the last hook_plic_* claimed
reg_t uart_iir_seen;  // IIR as that hook read it

// Claim in `context`, read the UART's IIR (which acknowledges THRE), complete.
static void plic_claim_ack_complete(unsigned context) {
    u32 id = MMIO32(PLIC_CLAIM_ADDR(context));
    plic_claimed = id;
    uart_iir_seen = MMIO8(UART_IIR_FCR_ADDR);
    MMIO32(PLIC_CLAIM_ADDR(context)) = id;
}

void hook_plic_m(struct frame *f) {
    (void)f;
    plic_claim_ack_complete(PLIC_CONTEXT_M);
}

void hook_plic_s(struct frame *f) {
    (void)f;
    plic_claim_ack_complete(PLIC_CONTEXT_S);
}

// The firmware's timer forwarding: the machine timer becomes a supervisor timer.
void hook_m_forward_timer(struct frame *f) {
    (void)f;
    csrs(mip, MIP_STIP);
    csrc(mie, MIP_MTIP);
}

// An SBI set_timer whose timer has already expired when it returns: mtimecmp := now +
// 10, wait for MTIP, enable MTIE. The machine-timer interrupt is then taken right
// after the handler's mret, at a point that does not depend on instruction timing.
void hook_m_set_timer_expired(struct frame *f) {
    (void)f;
    timer_set_delta(10);
    while (!(csrr(mip) & MIP_MTIP)) {
    }
    csrs(mie, MIP_MTIP);
}

// S cannot clear STIP: it asks M with an ecall (whose record the program declares with
// epc = hook_s_ecall_insn, normally with hook_m_clear_stip and RESUME_SKIP4).
__asm__(".text\n"
        ".globl hook_s_ecall\n"
        ".balign 4\n"
        "hook_s_ecall:\n"
        ".globl hook_s_ecall_insn\n"
        "hook_s_ecall_insn:\n"
        "    ecall\n"
        "    ret\n");

// ---- Page tables: Sv39 (RV64; Sv48 and Sv57 with vm_init_levels) / Sv32 (RV32) ---------

// PT_LEVELS, PT_INDEX_BITS, SATP_MODE and PTE_PPN_SHIFT come from riscv_gen.h.
#define PTES_PER_PAGE (PAGE_SIZE / sizeof(reg_t))
#define PT_POOL_PAGES 16

static reg_t pt_pool[PT_POOL_PAGES][PTES_PER_PAGE] __attribute__((aligned(PAGE_SIZE)));
static unsigned pt_used;
static reg_t *pt_root;
static int pt_levels = PT_LEVELS;   // Sv48 and Sv57 walk one and two levels more

static reg_t *pt_alloc(void) {
    if (pt_used == PT_POOL_PAGES)
        fail(CHECK_UNEXPECTED_TRAP, "page-table pool exhausted", pt_used, 0);
    reg_t *page = pt_pool[pt_used++];
    for (unsigned i = 0; i < PTES_PER_PAGE; i++)
        page[i] = 0;
    return page;
}

static reg_t pte_for(reg_t pa, reg_t flags) {
    return ((pa >> PAGE_SHIFT) << PTE_PPN_SHIFT) | flags;
}

static unsigned vpn(reg_t va, int level) {
    return (va >> (PAGE_SHIFT + PT_INDEX_BITS * level)) & ((1u << PT_INDEX_BITS) - 1);
}

// The PTE slot for `va` at `level` (0 = 4 KiB leaf), creating the tables above it.
static reg_t *pte_slot(reg_t va, int level) {
    reg_t *table = pt_root;
    for (int l = pt_levels - 1; l > level; l--) {
        reg_t *pte = &table[vpn(va, l)];
        if (!(*pte & PTE_V))
            *pte = pte_for((reg_t)pt_alloc(), PTE_V);
        table = (reg_t *)((*pte >> PTE_PPN_SHIFT) << PAGE_SHIFT);
    }
    return &table[vpn(va, level)];
}

#define KERNEL_RWX (PTE_V | PTE_R | PTE_W | PTE_X | PTE_A | PTE_D)
#define KERNEL_RW (PTE_V | PTE_R | PTE_W | PTE_A | PTE_D)

// Fresh tables mapping MMIO and all of RAM at their physical addresses for S-mode
// (superpages, A and D preset), nothing else. Returns the satp value that enables them.
static reg_t vm_tables(void) {
    pt_used = 0;
    pt_root = pt_alloc();
#if __riscv_xlen == 64
    *pte_slot(0, 2) = pte_for(0, KERNEL_RW); // 1 GiB: finisher, CLINT, PLIC, UART
    *pte_slot(PLATFORM_RAM_BASE, 2) = pte_for(PLATFORM_RAM_BASE, KERNEL_RWX);
#else
    static const reg_t mmio[] = {FINISHER_ADDR, PLATFORM_CLINT_BASE, PLATFORM_UART0_BASE};
    for (unsigned i = 0; i < sizeof mmio / sizeof mmio[0]; i++)
        *pte_slot(mmio[i], 1) = pte_for(mmio[i] & ~0x3fffffUL, KERNEL_RW);
    for (reg_t off = 0; off < PLATFORM_RAM_SIZE_DEFAULT; off += 0x400000)
        *pte_slot(PLATFORM_RAM_BASE + off, 1) = pte_for(PLATFORM_RAM_BASE + off, KERNEL_RWX);
#endif
    return (reg_t)pt_root >> PAGE_SHIFT;
}

reg_t vm_init(void) {
    pt_levels = PT_LEVELS;
    return SATP_MODE | vm_tables();
}

#if __riscv_xlen == 64
// The same for a walk of `levels` levels: 4 for Sv48, 5 for Sv57, whose satp modes
// follow Sv39's. A 1 GiB page is a level-2 entry in all three.
reg_t vm_init_levels(int levels) {
    pt_levels = levels;
    reg_t mode = (SATP_MODE >> SATP_MODE_SHIFT) + (reg_t)(levels - PT_LEVELS);
    return (mode << SATP_MODE_SHIFT) | vm_tables();
}
#endif

// Map the 4 KiB page at `va` to `pa` with PTE bits `flags` (V is added).
void vm_map(reg_t va, reg_t pa, reg_t flags) {
    *pte_slot(va, 0) = pte_for(pa, flags | PTE_V);
}

// The leaf PTE of a page mapped with vm_map, for checking the A and D bits.
reg_t *vm_pte(reg_t va) {
    return pte_slot(va, 0);
}

// The entry the walk of `va` reads at `level` (0: the leaf of a page mapped with
// vm_map; 1: the entry pointing to that leaf's table), for setting bits in it.
reg_t *vm_entry(reg_t va, int level) {
    return pte_slot(va, level);
}
