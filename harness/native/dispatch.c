/*
 * dispatch.c: the core's own hooks called without Unicorn's walk over every hook.
 *
 * Every translated block and every hooked instruction calls libunicorn's
 * helper_uc_tracecode, which walks the engine's whole list of hooks of that kind and
 * calls each whose address range holds the PC (docs/unicorn.md#costs). The core
 * hooks each instruction it must see at its own address (hooks.c hook_insn_at), so the
 * code-hook list grows with the kernel: about 50 entries for the bundled kernel and
 * for xv6-riscv, walked in full by each hooked instruction. Measured before this file
 * existed, that walk was 10% of the host's time in the bundled kernel's getpid loop
 * and 18% in xv6's usertests.
 *
 * The core knows its hooks by address (hooks.c find_hook), so it can call the one
 * that matches directly. On x86-64, with the pinned unicorn wheel's helper (checked by
 * a fingerprint of its first bytes, which also fixes the layout facts below), the
 * helper's first instructions are replaced by a jump to core_tracecode. That keeps the
 * helper's address, which Unicorn's per-engine helper tables are keyed by, so engines
 * opened before or after, with or without a core, all keep working. core_tracecode
 * takes the short path only when it gives exactly what the helper would:
 *   - the engine has a core (pmp.c's registry of harts);
 *   - no stop is pending (the helper then calls no hook, or revives the stop for a
 *     NO_STOP hook) and the size is not 0 (an invalid block: only a counted run's
 *     counter is called);
 *   - every hook on the list is the core's (checked by a walk whenever the list's
 *     head or tail changes: Unicorn only appends at the tail, or, for a counted run's
 *     counter, inserts at the head, and the core never deletes code or block hooks).
 * Everything else runs Unicorn's own code: the replaced instructions, copied to a
 * page of their own, followed by a jump back into the helper.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hart.h"
#include "portable.h"

/* libunicorn's helper (uc.c), exported; the core links against the same library. */
void helper_uc_tracecode(int32_t size, uint32_t index, void *uc, int64_t address);

typedef void (*tracecode_fn)(int32_t size, uint32_t index, void *uc, int64_t address);

/* Layout facts of unicorn 2.1.4's x86-64 build (include/uc_priv.h, include/list.h),
 * valid only with the fingerprint below: the helper's code reads exactly these. */
#define UC_HOOK_LISTS 0x340       /* struct uc_struct: struct list hook[UC_HOOK_MAX] */
#define UC_LIST_SIZE 24           /* struct list: head, tail, delete_fn */
#define UC_STOP_REQUEST 0x56d     /* struct uc_struct: bool stop_request */
#define HOOK_TO_DELETE 0x14       /* struct hook: bool to_delete */
#define HOOK_CALLBACK 0x28        /* struct hook: void *callback */
#define HOOK_USER_DATA 0x30       /* struct hook: void *user_data */
#define HOOK_IDX_MASK 0x3f        /* uc_hook_idx: the low bits name the list */
#define UC_HOOK_CODE_IDX 2
#define UC_HOOK_BLOCK_IDX 3

/* FNV-1a of the helper's first FINGERPRINT_BYTES bytes in the pinned wheel: its
 * prologue, the stop and list reads and the loop over the hooks (offsets above). */
#define FINGERPRINT_BYTES 0x1a0
#define FINGERPRINT 0x959cc78cc7b78edbull

/* The helper's first instructions, as whole instructions, that the 14-byte jump
 * covers: push r13; mov eax,esi; and esi,0x3f; mov r13d,edi; push r12; and eax,0x40;
 * mov r12,rcx (2+2+3+3+2+3+3 bytes), none of them PC-relative. */
#define PATCHED_BYTES 18
#define JUMP_BYTES 14             /* jmp *0(%rip); .quad target */

struct list_item {
    struct list_item *next;
    void *data;
};

static tracecode_fn unicorn_tracecode = helper_uc_tracecode;   /* the original */
static int dispatch_state;   /* 0 not tried, 1 installed, -1 left as Unicorn's */

static void inline_install(void);

#if defined(__x86_64__)   /* the patch below is x86-64 code */
static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t x = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        x = (x ^ p[i]) * 0x100000001b3ull;
    return x;
}

static void put_jump(uint8_t *at, const void *target)
{
    static const uint8_t jmp_rip[6] = {0xff, 0x25, 0, 0, 0, 0};
    memcpy(at, jmp_rip, sizeof jmp_rip);
    memcpy(at + sizeof jmp_rip, &target, sizeof target);
}

static bool make_writable(uint8_t *at, size_t n, int prot)
{
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)at & ~(pg - 1);
    uintptr_t hi = ((uintptr_t)at + n + pg - 1) & ~(pg - 1);
    return mprotect((void *)lo, hi - lo, prot) == 0;
}

/* Replace the first `patched` bytes of `fn` (whole instructions, none PC-relative) by a
 * jump to `target`; returns a trampoline that runs them and goes on into `fn`, or NULL
 * (fn left as it was). */
static void *patch_entry(uint8_t *fn, size_t patched, const void *target)
{
    long pg = sysconf(_SC_PAGESIZE);
    uint8_t *tramp = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                          -1, 0);
    if (tramp == MAP_FAILED)
        return NULL;
    memcpy(tramp, fn, patched);
    put_jump(tramp + patched, fn + patched);
    if (mprotect(tramp, (size_t)pg, PROT_READ | PROT_EXEC) != 0 ||
        !make_writable(fn, patched, PROT_READ | PROT_WRITE | PROT_EXEC)) {
        munmap(tramp, (size_t)pg);
        return NULL;
    }
    uint8_t patch[32];
    memset(patch, 0x90, patched);   /* nop: never reached */
    put_jump(patch, target);
    memcpy(fn, patch, patched);
    make_writable(fn, patched, PROT_READ | PROT_EXEC);
    __builtin___clear_cache((char *)fn, (char *)fn + patched);
    return tramp;
}

static void lookup_install(void);
#endif

/* Once per process, from the first hart_new; before any core runs. */
void dispatch_install(void)
{
    if (dispatch_state)
        return;
    dispatch_state = -1;
    if (portable_mode())
        return;   /* portable.h: Unicorn's helper walks its hooks itself */
#if defined(__x86_64__)
    uint8_t *fn = (uint8_t *)(void *)helper_uc_tracecode;
    if (fnv1a(fn, FINGERPRINT_BYTES) != FINGERPRINT)
        return;   /* another build of Unicorn: keep its helper */
    void *tramp = patch_entry(fn, PATCHED_BYTES, (const void *)core_tracecode);
    if (!tramp)
        return;
    unicorn_tracecode = (tracecode_fn)tramp;
    lookup_install();
    dispatch_state = 1;
#endif
    if (dispatch_state > 0)
        inline_install();
}

bool dispatch_installed(void)
{
    return dispatch_state > 0;
}

static const struct list_item *const *list_ends(void *uc, unsigned idx)
{
    return (const struct list_item *const *)((uint8_t *)uc + UC_HOOK_LISTS + idx * UC_LIST_SIZE);
}

static void *hook_word(const void *hook, size_t off)
{
    void *v;
    memcpy(&v, (const uint8_t *)hook + off, sizeof v);
    return v;
}

/* Is every hook on list idx one the core added to h, with the callback it gives
 * that kind? Walked only when the list's ends changed since the last answer. */
static bool all_ours(hart *h, void *uc, unsigned idx)
{
    const struct list_item *const *ends = list_ends(uc, idx);
    struct dispatch_cache *c = &h->dispatch[idx == UC_HOOK_BLOCK_IDX];
    if (ends[0] == c->head && ends[1] == c->tail)
        return c->ours;
    void *cb = idx == UC_HOOK_BLOCK_IDX ? (void *)on_block : (void *)on_code;
    bool ours = ends[0] != NULL;
    for (const struct list_item *it = ends[0]; it && ours; it = it->next) {
        const void *hk = it->data;
        if (!hk || ((const bool *)hk)[HOOK_TO_DELETE] || hook_word(hk, HOOK_CALLBACK) != cb) {
            ours = false;
            break;
        }
        void *user = hook_word(hk, HOOK_USER_DATA);
        ours = idx == UC_HOOK_BLOCK_IDX ? user == (void *)h : ((struct hooked_insn *)user)->h == h;
    }
    *c = (struct dispatch_cache){ends[0], ends[1], ours};
    return ours;
}

void core_tracecode(int32_t size, uint32_t index, void *uc, int64_t address)
{
    unsigned idx = index & HOOK_IDX_MASK;
    hart *h;
    if (size != 0 && (idx == UC_HOOK_CODE_IDX || idx == UC_HOOK_BLOCK_IDX) &&
        !((const bool *)uc)[UC_STOP_REQUEST] && (h = hart_of_engine(uc)) && all_ours(h, uc, idx)) {
        if (idx == UC_HOOK_BLOCK_IDX) {
            on_block(uc, (uint64_t)address, (uint32_t)size, h);
            return;
        }
        struct hooked_insn *hi = find_hook(h, (uint64_t)address);
        if (hi)   /* the one hook whose range (one address) holds the PC */
            on_code(uc, (uint64_t)address, (uint32_t)size, hi);
        return;
    }
    unicorn_tracecode(size, index, uc, address);
}

/*
 * Counting inside translated code.
 *
 * With one block hook, Unicorn 2.1.4 plants no call to helper_uc_tracecode in a
 * block: uc_add_inline_hook has the translated code call the hook's callback
 * (on_block) directly. That call, and the helper_check_exit_request call every block
 * then starts with (gen_tb_start), were still about two fifths of the host's time in
 * a compute-bound guest (dhrystone: on_block 33%, the check 6%). Yet almost every
 * block entry does the same few things: add the block's instruction count to instret
 * and note which block runs (hooks.c on_block's fast paths), because nothing is due.
 *
 * So for a core's RV64 engine the call to on_block is replaced, while Unicorn
 * translates, by TCG code that does exactly that when it may, and calls the hook
 * otherwise. Each translated block gets a slot (struct inl_slot) saying what to count:
 * empty until the block first runs through the hook, filled then from what on_block
 * found (hooks.c: blk, blk_count), and valid while the hart's inline_epoch is what it
 * was then. The epoch moves when a block's count or block_info may no longer be what
 * the slot says, or its page must be guarded again before it runs: icount.c's flush
 * (fence.i, evicted hooks, the host's changes), the retirement of a block_info a slot
 * names (icount.c retire_l0), a guard given up (hooks.c deadline_reached). It does not
 * move with xlat_epoch's other causes (satp, privilege, TLB flushes), which change
 * which block Unicorn finds for a pc but not what a block counts: a block's slot is
 * its own. The block's code counts by itself only when:
 *   - its slot is valid (same epoch);
 *   - instret has not reached the deadline (so no interrupt, budget, poll or resume is
 *     due: hooks.c deadline_reached would be called);
 *   - no stop is asked for (stop_reason: the host's and the devices' requests, and
 *     every uc_emu_stop the core makes, request_stop, which is what Unicorn's exit
 *     request, looked at by the dropped helper_check_exit_request, comes from);
 *   - the tohost word is zero (HTIF: on_block stops when it is not). The block's code
 *     reads the word through the hart's tohost pointer, or a zero word of the core's
 *     when HTIF is off, so an ELF with `tohost` runs as fast as one without; a 4-byte
 *     tohost (never an RV64 hart's, but the API takes one) reads a nonzero word instead,
 *     so that the hook decides.
 * Otherwise the block calls block_slow, which calls on_block as Unicorn would have,
 * fills the slot, and then makes the exit-request check the block would have made.
 * Either way the same instret, blk_* and deadline decisions result, at the same
 * instruction boundaries: only the host's route to them changes.
 * A single step, an exact budget or a trigger pass (trig_skip, which on_block ends at
 * the next block) never meets a valid slot: slots are filled only outside them, a step
 * after a run flushes Unicorn's translations (Machine.step), an exact budget moves
 * inline_epoch (Machine.run's hart.sync()), and so does a pass (hooks.c
 * data_trigger_fault, trigger.c hart_skip_watch_once). A satp the core has
 * not re-read yet (satp_stale) changes no block's count: the block Unicorn runs is the
 * one its own lookup found for the current satp.
 *
 * The translator is reached through libunicorn's PLT: translator_loop (to know which
 * block is being translated, and its size once done) and tcg_gen_callN (where the
 * call to on_block and the exit check are generated). TCG's own generators, exported
 * by libunicorn, emit the code; the opcode numbers below are QEMU 5.0's tcg-opc.h as
 * Unicorn 2.1.4 builds it, so all this is on only with the pinned wheel's helper
 * (dispatch_installed: the fingerprint above) and never in portable mode. Slots come
 * from a ring per hart; a block whose slot was reused for a newer one is translated
 * again (a new slot) the next time it runs.
 */
#define TCG_TYPE_I64 1
#define TCG_COND_ALWAYS 1
#define TCG_COND_GEU 5
#define TCG_COND_EQ 8
#define TCG_COND_NE 9
enum {   /* QEMU 5.0 include/tcg/tcg-opc.h, in order, as Unicorn 2.1.4 builds it */
    OP_SET_LABEL = 1,
    OP_LD32U_I64 = 71,
    OP_LD_I64 = 73,
    OP_ST_I64 = 77,
    OP_ADD_I64 = 78,
    OP_OR_I64 = 88,
    OP_XOR_I64 = 89,
};
#define INL_SLOTS 65536           /* the ring of slots, a power of two */
#define INL_INVALID UINT64_MAX

typedef uintptr_t tcg_arg;        /* TCGArg: a TCGTemp * or TCGLabel * or a constant */

void *tcg_temp_new_internal_riscv64(void *s, int type, bool local);
void tcg_temp_free_internal_riscv64(void *s, void *temp);
void *tcg_const_i64_riscv64(void *s, int64_t v);
void *tcg_const_i32_riscv64(void *s, int32_t v);
void *gen_new_label_riscv64(void *s);
void tcg_gen_op1_riscv64(void *s, int opc, tcg_arg a);
void tcg_gen_op3_riscv64(void *s, int opc, tcg_arg a, tcg_arg b, tcg_arg c);
void tcg_gen_brcondi_i64_riscv64(void *s, int cond, void *arg, int64_t imm, void *label);
void tcg_gen_setcond_i64_riscv64(void *s, int cond, void *ret, void *a, void *b);
void tcg_gen_movcond_i64_riscv64(void *s, int cond, void *ret, void *c1, void *c2, void *v1,
                                 void *v2);
void tcg_gen_callN_riscv64(void *s, void *func, void *ret, int nargs, void **args);
void uc_add_inline_hook_riscv64(void *uc, void *hk, void **args, int nargs);
void translator_loop_riscv64(const void *ops, void *db, void *cpu, void *tb, int max_insns);
void helper_check_exit_request_riscv64(void *uc, uint32_t in_delay_slot);

/* What a block's code counts, once on_block has looked it up. */
struct inl_slot {
    uint64_t key;                 /* inline_epoch when valid, INL_INVALID before */
    uint64_t count;               /* added to instret */
    uint64_t start;               /* blk_start; the block's pc from translation on */
    uint32_t size, count32;       /* blk_size, blk_count, stored as one word */
    const struct block_info *b;   /* blk */
    uint32_t tag;                 /* the translation it belongs to */
};

_Static_assert(offsetof(hart, blk_count) == offsetof(hart, blk_size) + 4,
               "blk_size and blk_count are stored as one word");
_Static_assert(offsetof(struct inl_slot, count32) == offsetof(struct inl_slot, size) + 4,
               "the slot's size and count are read as one word");

/* A hart's ring of slots (in its tbcache.c allocation, so freed with it): slots are
 * handed out in turn, and only the hart's own engine, run by one thread at a time,
 * reads or writes them. */
struct inl_ring {
    uint64_t serial;              /* slots handed out */
    struct inl_slot slot[INL_SLOTS];
};
static int inline_state;          /* 0 not tried, 1 on, -1 off */
/* Counts for tests, per thread (machines may run in threads at once): kept in static
 * TLS so that the lookup's count is one increment. */
#define PER_THREAD _Thread_local __attribute__((tls_model("initial-exec")))
static PER_THREAD uint64_t emitted, slow_calls;

/* The translation under way (translate64), for tcg_gen_callN's calls, in this thread. */
static _Thread_local struct {
    hart *h;
    void *cpu;
    const uint64_t *tb;           /* TranslationBlock: pc first, size at TB_SIZE_OFFSET */
    struct inl_slot *slot;
    bool skip_exit_check;
} cur;

#define TB_SIZE_OFFSET 20         /* TranslationBlock: pc, cs_base, flags, then uint16_t size */

/* The temps one block's code uses, freed together at its end. */
struct emitter {
    void *s;
    void *temps[40];
    unsigned n;
};

static void *keep(struct emitter *e, void *t)
{
    e->temps[e->n++] = t;
    return t;
}

static void *as_tcgv(const struct emitter *e, void *t)   /* TCGTemp * -> TCGv */
{
    return (void *)((char *)t - (char *)e->s);
}

static void *temp(struct emitter *e)
{
    return keep(e, tcg_temp_new_internal_riscv64(e->s, TCG_TYPE_I64, false));
}

static void *constant(struct emitter *e, uint64_t v)
{
    return keep(e, (char *)e->s + (uintptr_t)tcg_const_i64_riscv64(e->s, (int64_t)v));
}

static void *load(struct emitter *e, int opc, void *base, size_t off)
{
    void *t = temp(e);
    tcg_gen_op3_riscv64(e->s, opc, (tcg_arg)t, (tcg_arg)base, (tcg_arg)off);
    return t;
}

static void store(struct emitter *e, int opc, void *v, void *base, size_t off)
{
    tcg_gen_op3_riscv64(e->s, opc, (tcg_arg)v, (tcg_arg)base, (tcg_arg)off);
}

static void *op(struct emitter *e, int opc, void *a, void *b)
{
    void *t = temp(e);
    tcg_gen_op3_riscv64(e->s, opc, (tcg_arg)t, (tcg_arg)a, (tcg_arg)b);
    return t;
}

static void set_label(struct emitter *e, void *label)
{
    *(uint32_t *)label |= 1;   /* TCGLabel.present, its first bit */
    tcg_gen_op1_riscv64(e->s, OP_SET_LABEL, (tcg_arg)label);
}

/* The call in the slow path: to block_slow, registered with TCG as Unicorn registers
 * an inline hook's callback (uc_add_inline_hook: a struct hook read for its type and
 * callback only). */
static void block_slow(uc_engine *uc, uint64_t pc, uint32_t tag, void *user);

static void call_block_slow(struct emitter *e, void *uc, uint64_t pc, uint32_t tag,
                            struct inl_slot *slot)
{
    uint8_t hook[HOOK_USER_DATA + sizeof(void *)] = {0};
    int type = UC_HOOK_BLOCK;
    void *cb = (void *)block_slow;
    memcpy(hook, &type, sizeof type);
    memcpy(hook + HOOK_CALLBACK, &cb, sizeof cb);
    memcpy(hook + HOOK_USER_DATA, &slot, sizeof slot);
    void *args[4] = {constant(e, (uintptr_t)uc), constant(e, pc),
                     keep(e, (char *)e->s + (uintptr_t)tcg_const_i32_riscv64(e->s, (int32_t)tag)),
                     constant(e, (uintptr_t)slot)};
    uc_add_inline_hook_riscv64(uc, hook, args, 4);
}

static void call_exit_check(struct emitter *e, void *uc)
{
    void *args[2] = {constant(e, (uintptr_t)uc),
                     keep(e, (char *)e->s + (uintptr_t)tcg_const_i32_riscv64(e->s, 0))};
    tcg_gen_callN_riscv64(e->s, (void *)helper_check_exit_request_riscv64, NULL, 2, args);
}

#define HART_FIELD(f) offsetof(hart, f)

static const uint64_t no_tohost = 0, tohost_for_the_hook = 1;

/* Where the block's code reads the tohost word from (above: what it counts by itself
 * on): the hart's tohost when it is on and 8 bytes wide. */
static void *tohost_word(struct emitter *e, void *hp)
{
    void *p = load(e, OP_LD_I64, hp, HART_FIELD(tohost));
    void *on = temp(e);
    tcg_gen_movcond_i64_riscv64(e->s, TCG_COND_NE, as_tcgv(e, on), as_tcgv(e, p),
                                as_tcgv(e, constant(e, 0)), as_tcgv(e, p),
                                as_tcgv(e, constant(e, (uintptr_t)&no_tohost)));
    void *word = temp(e);
    tcg_gen_movcond_i64_riscv64(e->s, TCG_COND_EQ, as_tcgv(e, word),
                                as_tcgv(e, load(e, OP_LD32U_I64, hp, HART_FIELD(tohost_width))),
                                as_tcgv(e, constant(e, 4)),
                                as_tcgv(e, constant(e, (uintptr_t)&tohost_for_the_hook)),
                                as_tcgv(e, on));
    return word;
}

/* In place of the call to on_block: the block counts itself when it may (above). */
static bool emit_count(void *s, hart *h)
{
    struct inl_ring *ring = tbcache_ring(h);
    if (!ring)
        return false;
    uint64_t n = ring->serial++;
    struct inl_slot *slot = &ring->slot[n & (INL_SLOTS - 1)];
    *slot = (struct inl_slot){.key = INL_INVALID, .start = cur.tb[0], .tag = (uint32_t)n};
    cur.slot = slot;

    struct emitter e = {.s = s};
    void *slow = gen_new_label_riscv64(s), *done = gen_new_label_riscv64(s);
    /* Is anything due? One branch on the OR of every reason to call the hook. */
    void *hp = constant(&e, (uintptr_t)h), *sp = constant(&e, (uintptr_t)slot);
    void *bad = op(&e, OP_XOR_I64, load(&e, OP_LD_I64, sp, offsetof(struct inl_slot, key)),
                   load(&e, OP_LD32U_I64, hp, HART_FIELD(inline_epoch)));
    bad = op(&e, OP_OR_I64, bad, load(&e, OP_LD32U_I64, hp, HART_FIELD(s.stop_reason)));
    bad = op(&e, OP_OR_I64, bad, load(&e, OP_LD_I64, tohost_word(&e, hp), 0));
    void *due = temp(&e);
    tcg_gen_setcond_i64_riscv64(s, TCG_COND_GEU, as_tcgv(&e, due),
                                as_tcgv(&e, load(&e, OP_LD_I64, hp, HART_FIELD(s.instret))),
                                as_tcgv(&e, load(&e, OP_LD_I64, hp, HART_FIELD(deadline))));
    bad = op(&e, OP_OR_I64, bad, due);
    tcg_gen_brcondi_i64_riscv64(s, TCG_COND_NE, as_tcgv(&e, bad), 0, slow);

    /* Nothing due: on_block's fast path, from the slot (temps die at a branch, so the
     * pointers are loaded again). */
    hp = constant(&e, (uintptr_t)h);
    sp = constant(&e, (uintptr_t)slot);
    void *instret = load(&e, OP_LD_I64, hp, HART_FIELD(s.instret));
    store(&e, OP_ST_I64, op(&e, OP_ADD_I64, instret,
                            load(&e, OP_LD_I64, sp, offsetof(struct inl_slot, count))),
          hp, HART_FIELD(s.instret));
    store(&e, OP_ST_I64, instret, hp, HART_FIELD(blk_instret));
    store(&e, OP_ST_I64, load(&e, OP_LD_I64, sp, offsetof(struct inl_slot, start)), hp,
          HART_FIELD(blk_start));
    store(&e, OP_ST_I64, load(&e, OP_LD_I64, sp, offsetof(struct inl_slot, size)), hp,
          HART_FIELD(blk_size));
    store(&e, OP_ST_I64, load(&e, OP_LD_I64, sp, offsetof(struct inl_slot, b)), hp,
          HART_FIELD(blk));
    tcg_gen_brcondi_i64_riscv64(s, TCG_COND_ALWAYS, as_tcgv(&e, instret), 0, done);

    /* Something due: the hook, then the exit check the block would have begun with. */
    set_label(&e, slow);
    call_block_slow(&e, h->uc, cur.tb[0], (uint32_t)n, slot);
    call_exit_check(&e, h->uc);
    set_label(&e, done);
    for (unsigned i = 0; i < e.n; i++)
        tcg_temp_free_internal_riscv64(s, e.temps[i]);
    emitted++;
    return true;
}

/* A block whose code found something due (or its slot empty). */
static void block_slow(uc_engine *uc, uint64_t pc, uint32_t tag, void *user)
{
    struct inl_slot *slot = user;
    hart *h = hart_of_engine(uc);
    slow_calls++;
    if (!h)
        return;
    if (slot->tag != tag) {
        /* The slot went to a newer block: have this one translated again, with a slot
         * of its own, before it runs (as on_block does for new code hooks). */
        uc_ctl_remove_cache(h->uc, pc, pc + 1);
        set_reg(h, UC_RISCV_REG_PC, pc);
        h->blk = NULL;
        return;
    }
    on_block(uc, pc, slot->size, h);
    /* The slot may say what on_block's fast paths would do for this block while the
     * epochs stay: it looked the block up in this epoch (blk_epoch), and the block's
     * count is not checked against an exact budget. */
    if (h->blk && h->blk_start == pc && h->blk_size == slot->size &&
        h->blk_epoch == h->xlat_epoch && !h->s.budget_exact && !h->s.step && !h->trig_skip) {
        uint64_t key = h->inline_epoch;
        slot->count = h->blk_count;
        slot->count32 = h->blk_count;
        slot->b = h->blk;
        ((struct block_info *)h->blk)->inlined = true;
        slot->key = key;
    }
}

static void translate64(const void *ops, void *db, void *cpu, void *tb, int max_insns)
{
    hart *h = hart_of_cpu(cpu);
    cur.h = h && h->s.xlen == 64 && h->env ? h : NULL;
    cur.cpu = cpu;
    cur.tb = tb;
    cur.slot = NULL;
    cur.skip_exit_check = false;
    translator_loop_riscv64(ops, db, cpu, tb, max_insns);
    if (cur.slot) {
        uint16_t size;
        memcpy(&size, (const uint8_t *)tb + TB_SIZE_OFFSET, sizeof size);
        cur.slot->size = size;
    }
    cur.h = NULL;
    cur.slot = NULL;
}

static void callN64(void *s, void *func, void *ret, int nargs, void **args)
{
    if (func == (void *)on_block && cur.h && !cur.slot && nargs == 4 &&
        exitcheck_engine(s, true) == (void *)cur.h->uc && emit_count(s, cur.h)) {
        cur.skip_exit_check = true;   /* the next call is gen_tb_start's exit check */
        return;
    }
    if (cur.skip_exit_check) {
        cur.skip_exit_check = false;
        if (func == (void *)helper_check_exit_request_riscv64)
            return;   /* the code above makes it, where it must be made */
    }
    tcg_gen_callN_riscv64(s, func, ret, nargs, args);
}

/* Once per process, from dispatch_install once its patch is in. */
static void inline_install(void)
{
    if (inline_state)
        return;
    inline_state = -1;
    if (!dispatch_installed())
        return;
    if (!plt_patch("translator_loop_riscv64", (void *)translate64))
        return;
    if (!plt_patch("tcg_gen_callN_riscv64", (void *)callN64)) {
        plt_patch("translator_loop_riscv64", (void *)translator_loop_riscv64);
        return;
    }
    inline_state = 1;
}

/* The bytes tbcache.c keeps for a hart's ring (0: no ring, counting stays the hook's). */
size_t dispatch_ring_bytes(void)
{
    return inline_state > 0 ? sizeof(struct inl_ring) : 0;
}

/* Blocks given code that counts by itself (slow: calls to the hook from such code),
 * in this thread since it started. */
uint64_t dispatch_inline_count(bool slow)
{
    return slow ? slow_calls : emitted;
}

#if defined(__x86_64__)
/*
 * The next block, looked up from translated code.
 *
 * Every indirect jump (jalr, so every return), and every CSR instruction's block
 * (chain.c), ends in helper_lookup_tb_ptr: the CPU's pc and flags, then the jump
 * cache. Unicorn computes the flags through three calls across libunicorn's PLT
 * (riscv_cpu_mmu_index, riscv_cpu_fp_enabled, which calls riscv_cpu_virt_enabled), a
 * tenth of a compute-bound guest's time with the helper (dhrystone: 10.6%). On x86-64,
 * with the pinned wheel's code of all four (fingerprints, which also fix the offsets
 * below), the helper begins with a jump to core_lookup_tb_ptr, which computes the same
 * flags from the same fields without the calls and makes the jump cache's checks
 * exactly as the helper does; anything but a hit goes on to the helper's own code.
 */
#define LOOKUP_BYTES 0x100
#define LOOKUP_FINGERPRINT 0xf113670226d431f9ull
#define LOOKUP_PATCHED 17   /* push r14; xor esi,esi; push r13; push r12; push rbp; push rbx;
                               mov -0x8be8(%rdi),%rbp (2+2+2+2+1+1+7 bytes) */
#define MMU_INDEX_FINGERPRINT 0xb10623d59e15f110ull      /* its 8 bytes */
#define VIRT_ENABLED_FINGERPRINT 0x6a17339cfcf9a620ull   /* its 0x16 bytes */
#define FP_ENABLED_FINGERPRINT 0x66b842458cf0969eull     /* its 0x37 bytes */

/* CPURISCVState (env) and the CPUState before it, as that code reads them. */
#define ENV_PC 0x200
#define ENV_MISA 0x238            /* its low byte: RVH is bit 7 */
#define ENV_PRIV 0x250            /* riscv_cpu_mmu_index's answer */
#define ENV_VIRT 0x258
#define ENV_MSTATUS 0x270
#define ENV_MSTATUS_HS 0x3b0
#define ENV_JMP_CACHE (-0x8bd8)   /* CPUState.tb_jmp_cache[4096] */
#define ENV_TRACE_DSTATE (-0xb88) /* CPUState.trace_dstate[0] */
#define ENV_CLUSTER (-0xb7c)      /* CPUState.cluster_index */
#define TB_CS_BASE 0x08
#define TB_FLAGS 0x10
#define TB_CFLAGS 0x18
#define TB_TRACE_DSTATE 0x1c
#define TB_CODE 0x20              /* tc.ptr */
#define CF_LOOKUP_MASK 0xff0effffu   /* CF_HASH_MASK | CF_INVALID, as the helper masks */
#define CF_CLUSTER_SHIFT 24
#define MISA_H_BYTE 0x80
#define FS_BITS 0x6000            /* MSTATUS_FS */

void *helper_lookup_tb_ptr_riscv64(void *env);
int riscv_cpu_mmu_index_riscv64(void *env, bool ifetch);
bool riscv_cpu_virt_enabled_riscv64(void *env);
bool riscv_cpu_fp_enabled_riscv64(void *env);

typedef void *(*lookup_fn)(void *env);
static lookup_fn unicorn_lookup;
static PER_THREAD uint64_t lookup_hits;

#define FIELD(p, off, type) (*(const type *)((const uint8_t *)(p) + (off)))

void *core_lookup_tb_ptr(void *env);
void *core_lookup_tb_ptr(void *env)
{
    uint64_t mstatus = FIELD(env, ENV_MSTATUS, uint64_t);
    uint32_t flags = (uint32_t)FIELD(env, ENV_PRIV, uint64_t);
    bool fp = (mstatus & FS_BITS) &&
              !((FIELD(env, ENV_MISA, uint8_t) & MISA_H_BYTE) && (FIELD(env, ENV_VIRT, uint64_t) & 1) &&
                !(FIELD(env, ENV_MSTATUS_HS, uint64_t) & FS_BITS));
    if (fp)
        flags |= (uint32_t)(mstatus & FS_BITS);
    uint64_t pc = FIELD(env, ENV_PC, uint64_t);
    uint64_t tmp = pc ^ (pc >> 6);
    size_t slot = (size_t)(((tmp >> 6) & 0xfc0) | (tmp & 0x3f));
    const uint8_t *tb = ((const uint8_t *const *)((const uint8_t *)env + ENV_JMP_CACHE))[slot];
    uint32_t cf_mask = FIELD(env, ENV_CLUSTER, uint32_t) << CF_CLUSTER_SHIFT;
    if (tb && FIELD(tb, 0, uint64_t) == pc && FIELD(tb, TB_CS_BASE, uint64_t) == 0 &&
        FIELD(tb, TB_FLAGS, uint32_t) == flags &&
        FIELD(tb, TB_TRACE_DSTATE, uint32_t) == FIELD(env, ENV_TRACE_DSTATE, uint64_t) &&
        (FIELD(tb, TB_CFLAGS, uint32_t) & CF_LOOKUP_MASK) == cf_mask) {
        lookup_hits++;
        void *code;
        memcpy(&code, tb + TB_CODE, sizeof code);
        return code;
    }
    return unicorn_lookup(env);
}

static void lookup_install(void)
{
    if (fnv1a((const uint8_t *)(void *)helper_lookup_tb_ptr_riscv64, LOOKUP_BYTES) != LOOKUP_FINGERPRINT ||
        fnv1a((const uint8_t *)(void *)riscv_cpu_mmu_index_riscv64, 8) != MMU_INDEX_FINGERPRINT ||
        fnv1a((const uint8_t *)(void *)riscv_cpu_virt_enabled_riscv64, 0x16) != VIRT_ENABLED_FINGERPRINT ||
        fnv1a((const uint8_t *)(void *)riscv_cpu_fp_enabled_riscv64, 0x37) != FP_ENABLED_FINGERPRINT)
        return;   /* another build: keep Unicorn's lookup */
    unicorn_lookup = (lookup_fn)patch_entry((uint8_t *)(void *)helper_lookup_tb_ptr_riscv64,
                                            LOOKUP_PATCHED, (const void *)core_lookup_tb_ptr);
}
#endif

uint64_t dispatch_lookup_hits(void);

/* Next-block lookups answered by core_lookup_tb_ptr without Unicorn's code, in this
 * thread. */
uint64_t dispatch_lookup_hits(void)
{
#if defined(__x86_64__)
    return lookup_hits;
#else
    return 0;
#endif
}
