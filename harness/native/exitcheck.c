/*
 * exitcheck.c: no stop check after each load and store in a core's translated code.
 *
 * Unicorn follows every guest load and store in translated code with a call to its
 * helper_check_exit_request (its tcg_gen_qemu_ld/st end by calling its
 * check_exit_request generator), so that a hook which stopped the engine during the
 * access is obeyed before the next instruction. The call is declared as reading and
 * writing every guest register, so the translated code also stores the registers it
 * holds before each access and loads them again after it. In a loop of three
 * instructions that stores a byte (xv6's memset) the check and the reloads were a
 * quarter of the host's time (docs/unicorn.md#costs).
 *
 * For an engine with a core, nothing stops the engine during a load or store:
 *   - devices, HTIF and the host set the core's stop reason, obeyed at the next block
 *     entry (hooks.c on_block), as they always were;
 *   - pmp.c refuses, in the check before a TLB fill, a store to a physical address with
 *     no RAM or device behind it, so it is a store access fault raised at the store
 *     (the one access Unicorn would otherwise end with a stop request: its io_writex
 *     on unassigned memory; loads and fetches there raise at once);
 *   - faults, PMP and trigger refusals raise exceptions, which leave the block at once
 *     without the check.
 * So the core's engines get no check after loads and stores. The check that follows a
 * code hook stays: it is how a hook that redirects the hart (an emulated CSR, an xRET,
 * a trap) leaves the block (hooks.c redirect). Unicorn emits that one with a direct
 * call through its PLT from its instruction translator, the others as tail calls from
 * tcg_gen_qemu_ld/st, so the return address tells them apart: the instruction before
 * it is a call to check_exit_request's own PLT entry only for the code hook's.
 *
 * Both generators' first instructions read the engine from the TCG context (mov
 * disp32(%rdi),%rsi; cmpb $0,disp32(%rsi): the engine, then its no_exit_request);
 * the distance is taken from there, and a libunicorn whose generator starts otherwise
 * keeps its checks (x86-64 only). Engines without a core keep every check.
 */
#include <string.h>

#include "hart.h"
#include "portable.h"

void check_exit_request_riscv32(void *tcg_ctx);
void check_exit_request_riscv64(void *tcg_ctx);

typedef void (*generator_fn)(void *tcg_ctx);

struct generator {
    const char *name;
    generator_fn unicorn;      /* libunicorn's own (through the core's PLT) */
    void **slot;               /* libunicorn's PLT slot for it */
    uint32_t uc_offset;        /* TCGContext: the engine */
};

static struct generator generators[2] = {
    {"check_exit_request_riscv32", check_exit_request_riscv32, NULL, 0},
    {"check_exit_request_riscv64", check_exit_request_riscv64, NULL, 0},
};

static uint64_t left_out, kept;

/* The engine's offset in the TCG context, from the generator's first instruction. */
static bool engine_offset(generator_fn fn, uint32_t *offset)
{
#if defined(__x86_64__)
    static const uint8_t mov_rdi_rsi[3] = {0x48, 0x8b, 0xb7};   /* mov disp32(%rdi),%rsi */
    static const uint8_t cmpb_rsi[2] = {0x80, 0xbe};            /* cmpb $imm8,disp32(%rsi) */
    const uint8_t *p = (const uint8_t *)(void *)fn;
    if (memcmp(p, mov_rdi_rsi, 3) != 0 || memcmp(p + 7, cmpb_rsi, 2) != 0 || p[13] != 0)
        return false;
    memcpy(offset, p + 3, sizeof *offset);
    return *offset != 0;
#else
    (void)fn; (void)offset;
    return false;
#endif
}

/* Is the instruction before `ret` a call to the PLT entry that jumps through `slot`? */
static bool called_through(const uint8_t *ret, void **slot)
{
    if (ret[-5] != 0xe8)
        return false;   /* call rel32 */
    int32_t rel;
    memcpy(&rel, ret - 4, sizeof rel);
    const uint8_t *stub = ret + rel;
    if (stub[0] != 0xff || stub[1] != 0x25)
        return false;   /* jmp *disp32(%rip) */
    int32_t disp;
    memcpy(&disp, stub + 2, sizeof disp);
    return (const uint8_t *)(stub + 6 + disp) == (const uint8_t *)slot;
}

/* The engine a TCG context translates for, if exitcheck_install learned where the
 * context keeps it (rv64: the RISCV64 build's context, else the RISCV32 one's); NULL
 * otherwise. */
void *exitcheck_engine(void *tcg_ctx, bool rv64)
{
    const struct generator *g = &generators[rv64];
    void *uc;
    if (!g->slot)
        return NULL;
    memcpy(&uc, (const uint8_t *)tcg_ctx + g->uc_offset, sizeof uc);
    return uc;
}

static void generate(struct generator *g, void *tcg_ctx, const uint8_t *ret)
{
    void *uc = exitcheck_engine(tcg_ctx, g == &generators[1]);
    if (hart_of_engine(uc) && !called_through(ret, g->slot)) {
        left_out++;   /* after a load or store */
        return;
    }
    kept++;
    g->unicorn(tcg_ctx);
}

static void generate32(void *tcg_ctx)
{
    generate(&generators[0], tcg_ctx, __builtin_return_address(0));
}

static void generate64(void *tcg_ctx)
{
    generate(&generators[1], tcg_ctx, __builtin_return_address(0));
}

/* Once per process, from the first hart_new, before any core translates. */
void exitcheck_install(void)
{
    if (portable_mode())
        return;   /* portable.h: Unicorn's checks stay after every load and store */
    generator_fn ours[2] = {generate32, generate64};
    for (unsigned i = 0; i < 2; i++) {
        struct generator *g = &generators[i];
        if (!engine_offset(g->unicorn, &g->uc_offset) || !(g->slot = plt_slot(g->name)))
            continue;
        *g->slot = (void *)ours[i];
    }
}

/* Checks left out (after loads and stores) or emitted, since the process started. */
uint64_t exitcheck_count(bool emitted)
{
    return emitted ? kept : left_out;
}
