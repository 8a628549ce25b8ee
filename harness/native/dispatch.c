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
    long pg = sysconf(_SC_PAGESIZE);
    uint8_t *tramp = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                          -1, 0);
    if (tramp == MAP_FAILED)
        return;
    memcpy(tramp, fn, PATCHED_BYTES);
    put_jump(tramp + PATCHED_BYTES, fn + PATCHED_BYTES);
    if (mprotect(tramp, (size_t)pg, PROT_READ | PROT_EXEC) != 0 ||
        !make_writable(fn, PATCHED_BYTES, PROT_READ | PROT_WRITE | PROT_EXEC)) {
        munmap(tramp, (size_t)pg);
        return;
    }
    unicorn_tracecode = (tracecode_fn)(void *)tramp;
    uint8_t patch[PATCHED_BYTES];
    memset(patch, 0x90, sizeof patch);   /* nop: never reached */
    put_jump(patch, (const void *)core_tracecode);
    memcpy(fn, patch, sizeof patch);
    make_writable(fn, PATCHED_BYTES, PROT_READ | PROT_EXEC);
    __builtin___clear_cache((char *)fn, (char *)fn + PATCHED_BYTES);
    dispatch_state = 1;
#endif
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
