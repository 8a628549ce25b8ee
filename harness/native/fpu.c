/*
 * fpu.c: the F and D extensions as QEMU 7.2 (and the unprivileged spec, chapters 11
 * and 12 of version 20191213) define them, where Unicorn's QEMU 5.0 FPU differs.
 *
 * What is wrong with Unicorn's (docs/unicorn.md#fpu-is-qemu-5):
 *   - fmin/fmax are IEEE 754-2008 minNum/maxNum: a signalling NaN operand gives the
 *     canonical NaN. The spec (11.6, since version 2.2 of the F extension) and QEMU
 *     7.2 (priv_ver >= 1.11) use IEEE 754-2019 minimumNumber/maximumNumber: a NaN
 *     operand, signalling or quiet, gives the other operand; NV is set for a sNaN.
 *   - no NaN-boxing (spec 12.2): a single-precision operand whose upper 32 bits are
 *     not all ones must read as the canonical NaN 0x7fc00000, and every single-
 *     precision result written to an f register must have its upper 32 bits set.
 *     Unicorn boxes only what flw loads; its helpers read the low word of any
 *     operand and return results with the upper word zero, and its inline code for
 *     fsgnj.s/fsgnjn.s/fsgnjx.s (fmv.s, fneg.s, fabs.s) and fmv.w.x copies whatever
 *     the source holds (fmv.w.x on RV64: the whole x register).
 *   - fmadd/fmsub/fnmadd/fnmsub of infinity times zero plus a quiet NaN do not set NV;
 *     the spec (11.6) requires it and QEMU 7.2 sets it.
 *
 * What the core does:
 *   - every F/D helper Unicorn's translated code calls for these operations is
 *     replaced: its first instructions become a jump to the function below that does
 *     what QEMU 7.2's helper does (unbox, compute with Unicorn's own softfloat on the
 *     CPU state's float_status, box). The helper keeps its address, which Unicorn's
 *     per-engine helper tables are keyed by (as dispatch.c does for its hook helper).
 *     x86-64 only, and only with the pinned wheel's helpers (a fingerprint of their
 *     code, which also fixes FP_STATUS_* below); the replacement is process-wide, so
 *     an engine no hart drives gets it too once a hart exists.
 *   - fsgnj*.s and fmv.w.x get an exact-address code hook (decode.c classify,
 *     hooks.c on_code) and are done by fpu_emulate: only when the helpers are
 *     replaced, since Unicorn's own helpers write unboxed results that a boxing
 *     fsgnj.s would then read as NaN.
 *   - the portable path (any other host or Unicorn build, and PRIVLAB_PORTABLE=1,
 *     portable.h): nothing is replaced; every instruction QEMU 5.0 gets wrong (one
 *     that reads a single-precision operand or writes a single-precision result,
 *     fmin/fmax, the fused multiply-adds) gets a code hook and is done by
 *     fpu_emulate_all on libunicorn's exported softfloat with a float_status of the
 *     core's own, its flags ORed into fflags. Outside portable mode fmin/fmax's
 *     softfloat calls are also pointed at the core's through libunicorn's PLT.
 */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hart.h"
#include "portable.h"

/* QEMU 5.0's float_status (include/fpu/softfloat-types.h), as the helpers pass it. */
struct float_status {
    int8_t detect_tininess;
    int8_t rounding_mode;
    uint8_t exception_flags;
    int8_t floatx80_rounding_precision;
    uint8_t flush_to_zero, flush_inputs_to_zero, default_nan_mode, snan_bit_is_one;
};
#define FLAG_INVALID 1    /* float_flag_invalid: fflags.NV */

/* muladd's negation flags (float_muladd_negate_c, _product), QEMU 5.0 and 7.2 alike. */
#define NEGATE_C 1
#define NEGATE_PRODUCT 2

/* Where float_status lies in CPURISCVState, in the pinned wheel's two builds: the
 * `lea OFF(%r8),%rdx` of every helper_f*_s (checked by the fingerprint). */
#define FP_STATUS_RV64 0x601
#define FP_STATUS_RV32 0x3a9

/* The canonical NaNs (spec 11.3, 12.3) and what makes a register a boxed single. */
#define CANON_S 0x7fc00000u
#define CANON_D 0x7ff8000000000000ull
#define BOX 0xffffffff00000000ull

static struct float_status *status_of(void *env, bool rv64)
{
    return (struct float_status *)((uint8_t *)env + (rv64 ? FP_STATUS_RV64 : FP_STATUS_RV32));
}

/* Spec 12.2: a single-precision operand is the low word only when the upper word is
 * all ones; otherwise it is the canonical NaN. */
static uint32_t unbox(uint64_t f)
{
    return (f & BOX) == BOX ? (uint32_t)f : CANON_S;
}

static uint64_t box(uint32_t f)
{
    return BOX | f;
}

static bool nan32(uint32_t f) { return (f & 0x7fffffffu) > 0x7f800000u; }
static bool snan32(uint32_t f) { return nan32(f) && !(f & 0x00400000u); }
static bool nan64(uint64_t f) { return (f & ~(1ull << 63)) > 0x7ff0000000000000ull; }
static bool snan64(uint64_t f) { return nan64(f) && !(f & (1ull << 51)); }
static bool inf32(uint32_t f) { return (f & 0x7fffffffu) == 0x7f800000u; }
static bool zero32(uint32_t f) { return (f & 0x7fffffffu) == 0; }
static bool inf64(uint64_t f) { return (f & ~(1ull << 63)) == 0x7ff0000000000000ull; }
static bool zero64(uint64_t f) { return (f & ~(1ull << 63)) == 0; }

/* IEEE 754-2019 minimumNumber/maximumNumber (spec 11.6, QEMU 7.2's
 * float32_minimum_number): a NaN operand gives the other operand, two NaNs the
 * canonical NaN, a signalling NaN sets NV; -0 is below +0. Numbers compare by the key
 * that orders sign-magnitude encodings as unsigned integers. */
static uint32_t key32(uint32_t f) { return (f & 0x80000000u) ? ~f : f | 0x80000000u; }
static uint64_t key64(uint64_t f) { return (f >> 63) ? ~f : f | (1ull << 63); }

static uint32_t minmax32(uint32_t a, uint32_t b, bool max, struct float_status *st)
{
    if (snan32(a) || snan32(b))
        st->exception_flags |= FLAG_INVALID;
    if (nan32(a))
        return nan32(b) ? CANON_S : b;
    if (nan32(b))
        return a;
    return (key32(a) < key32(b)) != max ? a : b;
}

static uint64_t minmax64(uint64_t a, uint64_t b, bool max, struct float_status *st)
{
    if (snan64(a) || snan64(b))
        st->exception_flags |= FLAG_INVALID;
    if (nan64(a))
        return nan64(b) ? CANON_D : b;
    if (nan64(b))
        return a;
    return (key64(a) < key64(b)) != max ? a : b;
}

/* Spec 11.6: infinity times zero is invalid even when the addend is a quiet NaN
 * (Unicorn's softfloat raises NV there only for a signalling NaN; the result is the
 * canonical NaN either way). */
static void infzero32(uint32_t a, uint32_t b, uint32_t c, struct float_status *st)
{
    if (((inf32(a) && zero32(b)) || (zero32(a) && inf32(b))) && nan32(c))
        st->exception_flags |= FLAG_INVALID;
}

static void infzero64(uint64_t a, uint64_t b, uint64_t c, struct float_status *st)
{
    if (((inf64(a) && zero64(b)) || (zero64(a) && inf64(b))) && nan64(c))
        st->exception_flags |= FLAG_INVALID;
}

/* fclass (spec 11.9): one bit for the operand's class. */
static uint32_t fclass32(uint32_t f)
{
    bool neg = f >> 31;
    if (inf32(f))
        return neg ? 1u << 0 : 1u << 7;
    if (zero32(f))
        return neg ? 1u << 3 : 1u << 4;
    if (nan32(f))
        return snan32(f) ? 1u << 8 : 1u << 9;
    if (!(f & 0x7f800000u))
        return neg ? 1u << 2 : 1u << 5;   /* subnormal */
    return neg ? 1u << 1 : 1u << 6;
}

/* ---- The softfloat replacements reached through libunicorn's PLT (any host) ---- */

#define MINMAX_PLT(B)                                                                    \
    static uint32_t minnum32_##B(uint32_t a, uint32_t b, void *st)                       \
    { return minmax32(a, b, false, st); }                                                \
    static uint32_t maxnum32_##B(uint32_t a, uint32_t b, void *st)                       \
    { return minmax32(a, b, true, st); }                                                 \
    static uint64_t minnum64_##B(uint64_t a, uint64_t b, void *st)                       \
    { return minmax64(a, b, false, st); }                                                \
    static uint64_t maxnum64_##B(uint64_t a, uint64_t b, void *st)                       \
    { return minmax64(a, b, true, st); }
MINMAX_PLT(riscv32)
MINMAX_PLT(riscv64)

/* ---- The helpers, as QEMU 7.2's target/riscv/fpu_helper.c does them ---- */

/* Unicorn's softfloat, exported by libunicorn under each build's suffix. */
#define SOFTFLOAT_DECLS(B)                                                               \
    uint32_t float32_add_##B(uint32_t, uint32_t, void *);                                \
    uint32_t float32_sub_##B(uint32_t, uint32_t, void *);                                \
    uint32_t float32_mul_##B(uint32_t, uint32_t, void *);                                \
    uint32_t float32_div_##B(uint32_t, uint32_t, void *);                                \
    uint32_t float32_sqrt_##B(uint32_t, void *);                                         \
    uint32_t float32_muladd_##B(uint32_t, uint32_t, uint32_t, int, void *);              \
    uint64_t float64_muladd_##B(uint64_t, uint64_t, uint64_t, int, void *);              \
    int float32_le_##B(uint32_t, uint32_t, void *);                                      \
    int float32_lt_##B(uint32_t, uint32_t, void *);                                      \
    int float32_eq_quiet_##B(uint32_t, uint32_t, void *);                                \
    int32_t float32_to_int32_##B(uint32_t, void *);                                      \
    uint32_t float32_to_uint32_##B(uint32_t, void *);                                    \
    uint32_t int32_to_float32_##B(int32_t, void *);                                      \
    uint32_t uint32_to_float32_##B(uint32_t, void *);                                    \
    uint32_t float64_to_float32_##B(uint64_t, void *);                                   \
    uint64_t float32_to_float64_##B(uint32_t, void *);
SOFTFLOAT_DECLS(riscv32)
SOFTFLOAT_DECLS(riscv64)
int64_t float32_to_int64_riscv64(uint32_t, void *);
uint64_t float32_to_uint64_riscv64(uint32_t, void *);
uint32_t int64_to_float32_riscv64(int64_t, void *);
uint32_t uint64_to_float32_riscv64(uint64_t, void *);

/* One build's replacements: B the symbol suffix, RV64 its XLEN, TUL its target_ulong
 * (what a helper returns to, or takes from, an x register). */
#define FPU_HELPERS(B, RV64, TUL)                                                        \
    static uint64_t fmadd_s_##B(void *env, uint64_t a, uint64_t b, uint64_t c, int neg)  \
    {                                                                                    \
        struct float_status *st = status_of(env, RV64);                                  \
        uint32_t x = unbox(a), y = unbox(b), z = unbox(c);                               \
        infzero32(x, y, z, st);                                                          \
        return box(float32_muladd_##B(x, y, z, neg, st));                                \
    }                                                                                    \
    static uint64_t fmadd_d_##B(void *env, uint64_t a, uint64_t b, uint64_t c, int neg)  \
    {                                                                                    \
        struct float_status *st = status_of(env, RV64);                                  \
        infzero64(a, b, c, st);                                                          \
        return float64_muladd_##B(a, b, c, neg, st);                                     \
    }                                                                                    \
    static uint64_t r_fmadd_s_##B(void *e, uint64_t a, uint64_t b, uint64_t c)           \
    { return fmadd_s_##B(e, a, b, c, 0); }                                               \
    static uint64_t r_fmsub_s_##B(void *e, uint64_t a, uint64_t b, uint64_t c)           \
    { return fmadd_s_##B(e, a, b, c, NEGATE_C); }                                        \
    static uint64_t r_fnmsub_s_##B(void *e, uint64_t a, uint64_t b, uint64_t c)          \
    { return fmadd_s_##B(e, a, b, c, NEGATE_PRODUCT); }                                  \
    static uint64_t r_fnmadd_s_##B(void *e, uint64_t a, uint64_t b, uint64_t c)          \
    { return fmadd_s_##B(e, a, b, c, NEGATE_C | NEGATE_PRODUCT); }                       \
    static uint64_t r_fmadd_d_##B(void *e, uint64_t a, uint64_t b, uint64_t c)           \
    { return fmadd_d_##B(e, a, b, c, 0); }                                               \
    static uint64_t r_fmsub_d_##B(void *e, uint64_t a, uint64_t b, uint64_t c)           \
    { return fmadd_d_##B(e, a, b, c, NEGATE_C); }                                        \
    static uint64_t r_fnmsub_d_##B(void *e, uint64_t a, uint64_t b, uint64_t c)          \
    { return fmadd_d_##B(e, a, b, c, NEGATE_PRODUCT); }                                  \
    static uint64_t r_fnmadd_d_##B(void *e, uint64_t a, uint64_t b, uint64_t c)          \
    { return fmadd_d_##B(e, a, b, c, NEGATE_C | NEGATE_PRODUCT); }                       \
    static uint64_t r_fadd_s_##B(void *e, uint64_t a, uint64_t b)                        \
    { return box(float32_add_##B(unbox(a), unbox(b), status_of(e, RV64))); }             \
    static uint64_t r_fsub_s_##B(void *e, uint64_t a, uint64_t b)                        \
    { return box(float32_sub_##B(unbox(a), unbox(b), status_of(e, RV64))); }             \
    static uint64_t r_fmul_s_##B(void *e, uint64_t a, uint64_t b)                        \
    { return box(float32_mul_##B(unbox(a), unbox(b), status_of(e, RV64))); }             \
    static uint64_t r_fdiv_s_##B(void *e, uint64_t a, uint64_t b)                        \
    { return box(float32_div_##B(unbox(a), unbox(b), status_of(e, RV64))); }             \
    static uint64_t r_fmin_s_##B(void *e, uint64_t a, uint64_t b)                        \
    { return box(minmax32(unbox(a), unbox(b), false, status_of(e, RV64))); }             \
    static uint64_t r_fmax_s_##B(void *e, uint64_t a, uint64_t b)                        \
    { return box(minmax32(unbox(a), unbox(b), true, status_of(e, RV64))); }              \
    static uint64_t r_fmin_d_##B(void *e, uint64_t a, uint64_t b)                        \
    { return minmax64(a, b, false, status_of(e, RV64)); }                                \
    static uint64_t r_fmax_d_##B(void *e, uint64_t a, uint64_t b)                        \
    { return minmax64(a, b, true, status_of(e, RV64)); }                                 \
    static uint64_t r_fsqrt_s_##B(void *e, uint64_t a)                                   \
    { return box(float32_sqrt_##B(unbox(a), status_of(e, RV64))); }                      \
    static TUL r_fle_s_##B(void *e, uint64_t a, uint64_t b)                              \
    { return (TUL)float32_le_##B(unbox(a), unbox(b), status_of(e, RV64)); }              \
    static TUL r_flt_s_##B(void *e, uint64_t a, uint64_t b)                              \
    { return (TUL)float32_lt_##B(unbox(a), unbox(b), status_of(e, RV64)); }              \
    static TUL r_feq_s_##B(void *e, uint64_t a, uint64_t b)                              \
    { return (TUL)float32_eq_quiet_##B(unbox(a), unbox(b), status_of(e, RV64)); }        \
    static TUL r_fcvt_w_s_##B(void *e, uint64_t a)                                       \
    { return (TUL)(int64_t)float32_to_int32_##B(unbox(a), status_of(e, RV64)); }         \
    static TUL r_fcvt_wu_s_##B(void *e, uint64_t a)                                      \
    { return (TUL)(int64_t)(int32_t)float32_to_uint32_##B(unbox(a), status_of(e, RV64)); } \
    static uint64_t r_fcvt_s_w_##B(void *e, TUL x)                                       \
    { return box(int32_to_float32_##B((int32_t)x, status_of(e, RV64))); }                \
    static uint64_t r_fcvt_s_wu_##B(void *e, TUL x)                                      \
    { return box(uint32_to_float32_##B((uint32_t)x, status_of(e, RV64))); }              \
    static TUL r_fclass_s_##B(uint64_t a)                                                \
    { return fclass32(unbox(a)); }                                                       \
    static uint64_t r_fcvt_s_d_##B(void *e, uint64_t a)                                  \
    { return box(float64_to_float32_##B(a, status_of(e, RV64))); }                       \
    static uint64_t r_fcvt_d_s_##B(void *e, uint64_t a)                                  \
    { return float32_to_float64_##B(unbox(a), status_of(e, RV64)); }
FPU_HELPERS(riscv32, false, uint32_t)
FPU_HELPERS(riscv64, true, uint64_t)

static uint64_t r_fcvt_l_s_riscv64(void *e, uint64_t a)
{ return (uint64_t)float32_to_int64_riscv64(unbox(a), status_of(e, true)); }
static uint64_t r_fcvt_lu_s_riscv64(void *e, uint64_t a)
{ return float32_to_uint64_riscv64(unbox(a), status_of(e, true)); }
static uint64_t r_fcvt_s_l_riscv64(void *e, uint64_t x)
{ return box(int64_to_float32_riscv64((int64_t)x, status_of(e, true))); }
static uint64_t r_fcvt_s_lu_riscv64(void *e, uint64_t x)
{ return box(uint64_to_float32_riscv64(x, status_of(e, true))); }

/* Unicorn's helpers replaced (target/riscv/helper.h), in both builds unless noted. */
#define HELPERS(X)                                                                       \
    X(fmadd_s) X(fmsub_s) X(fnmsub_s) X(fnmadd_s) X(fmadd_d) X(fmsub_d) X(fnmsub_d)      \
    X(fnmadd_d) X(fadd_s) X(fsub_s) X(fmul_s) X(fdiv_s) X(fsqrt_s) X(fmin_s) X(fmax_s)   \
    X(fmin_d) X(fmax_d) X(fle_s) X(flt_s) X(feq_s) X(fcvt_w_s) X(fcvt_wu_s) X(fcvt_s_w)  \
    X(fcvt_s_wu) X(fclass_s) X(fcvt_s_d) X(fcvt_d_s)
#define HELPERS_RV64(X) X(fcvt_l_s) X(fcvt_lu_s) X(fcvt_s_l) X(fcvt_s_lu)

#define DECLARE(name) extern char helper_##name##_riscv32[], helper_##name##_riscv64[];
#define DECLARE64(name) extern char helper_##name##_riscv64[];
HELPERS(DECLARE)
HELPERS_RV64(DECLARE64)

struct replacement {
    const char *name;   /* Unicorn's helper, by its symbol */
    char *helper;       /* and its address */
    void *fn;           /* the core's */
};

#define BOTH(name) {"helper_" #name "_riscv32", helper_##name##_riscv32,                   \
                    (void *)r_##name##_riscv32},                                          \
                   {"helper_" #name "_riscv64", helper_##name##_riscv64,                   \
                    (void *)r_##name##_riscv64},
#define RV64(name) {"helper_" #name "_riscv64", helper_##name##_riscv64,                   \
                    (void *)r_##name##_riscv64},
/* x86-64 only (fpu_install), as are the two functions below. */
static const struct replacement replacements[] __attribute__((unused)) = {HELPERS(BOTH) HELPERS_RV64(RV64)};
#define NREPL (sizeof replacements / sizeof replacements[0])

/* FNV-1a over the code of every replaced helper in the pinned wheel (unicorn 2.1.4,
 * x86-64), in table order: their bodies fix what each computes and the float_status
 * offsets above. */
#define FINGERPRINT 0x5964923b3e982481ull
#define JUMP_BYTES 14   /* jmp *0(%rip); .quad target */

/* 0 not tried; FPU_REPLACED: Unicorn's helpers jump to the core's (x86-64, the
 * pinned wheel); FPU_EMULATED: every F/D instruction QEMU 5.0 gets wrong is done in a
 * code hook (fpu_emulate_all), which needs nothing of libunicorn but its exported
 * softfloat: anywhere else, and in portable mode (portable.h). */
#define FPU_REPLACED 1
#define FPU_EMULATED 2
static int fpu_state;
static uint64_t fingerprint_seen;

__attribute__((unused)) static uint64_t fnv1a(uint64_t x, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x = (x ^ p[i]) * 0x100000001b3ull;
    return x;
}

__attribute__((unused)) static bool set_prot(uint8_t *at, size_t n, int prot)
{
    uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = (uintptr_t)at & ~(pg - 1);
    uintptr_t hi = ((uintptr_t)at + n + pg - 1) & ~(pg - 1);
    return mprotect((void *)lo, hi - lo, prot) == 0;
}

/* Once per process, from the first hart_new, before any core runs. */
void fpu_install(void)
{
    if (fpu_state)
        return;
    fpu_state = FPU_EMULATED;
    if (portable_mode())
        return;   /* portable.h: nothing of libunicorn's is replaced */
    /* minNum/maxNum become minimumNumber/maximumNumber for Unicorn's own helpers, which
     * run until the helpers below are replaced (and the code hooks that would do fmin
     * and fmax otherwise come first anyway). */
    plt_patch("float32_minnum_riscv32", (void *)minnum32_riscv32);
    plt_patch("float32_maxnum_riscv32", (void *)maxnum32_riscv32);
    plt_patch("float64_minnum_riscv32", (void *)minnum64_riscv32);
    plt_patch("float64_maxnum_riscv32", (void *)maxnum64_riscv32);
    plt_patch("float32_minnum_riscv64", (void *)minnum32_riscv64);
    plt_patch("float32_maxnum_riscv64", (void *)maxnum32_riscv64);
    plt_patch("float64_minnum_riscv64", (void *)minnum64_riscv64);
    plt_patch("float64_maxnum_riscv64", (void *)maxnum64_riscv64);
#if defined(__x86_64__)
    uint64_t x = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < NREPL; i++) {
        uintptr_t lo, hi;
        if (!code_range_of(replacements[i].name, replacements[i].helper, &lo, &hi) ||
            hi - lo < JUMP_BYTES)
            return;
        x = fnv1a(x, (const uint8_t *)lo, hi - lo);
    }
    fingerprint_seen = x;
    if (x != FINGERPRINT)
        return;   /* another build of Unicorn: keep its helpers, emulate in hooks */
    for (size_t i = 0; i < NREPL; i++) {
        uint8_t *fn = (uint8_t *)replacements[i].helper;
        uint8_t jump[JUMP_BYTES] = {0xff, 0x25, 0, 0, 0, 0};
        memcpy(jump + 6, &replacements[i].fn, sizeof(void *));
        if (!set_prot(fn, JUMP_BYTES, PROT_READ | PROT_WRITE | PROT_EXEC))
            return;   /* (helpers already replaced stay so: each is whole either way,
                       * and the hooks compute what they do) */
        memcpy(fn, jump, JUMP_BYTES);
        set_prot(fn, JUMP_BYTES, PROT_READ | PROT_EXEC);
        __builtin___clear_cache((char *)fn, (char *)fn + JUMP_BYTES);
    }
    fpu_state = FPU_REPLACED;
#endif
}

/* Whether the helpers are the core's (the fast path). */
bool fpu_exact(void)
{
    return fpu_state == FPU_REPLACED;
}

/* Whether F/D instructions are done in code hooks (the portable path). */
bool fpu_emulating(void)
{
    return fpu_state == FPU_EMULATED;
}

uint64_t fpu_fingerprint(void)
{
    return fingerprint_seen;
}

/* ---- The instructions the core must do itself ---- */

#define OP_FP 0x53
#define OP_MADD 0x43    /* fmadd; fmsub 0x47, fnmsub 0x4b, fnmadd 0x4f */
#define FUNCT7_FSGNJ_S 0x10
#define FUNCT7_FMV_W_X 0x78
#define FUNCT7_FMV_X_W 0x70   /* fmv.x.w (funct3 0), fclass.s (funct3 1) */
#define FUNCT7_FMINMAX_D 0x15
#define FUNCT7_FCVT_S_D 0x20
#define FUNCT7_FCVT_D_S 0x21
#define FMT_S 0
#define FMT_D 1

static bool is_fma(unsigned opcode)
{
    return (opcode & 0x73) == OP_MADD;   /* 0x43, 0x47, 0x4b, 0x4f */
}

/* Is `insn` one the core must do itself (a code hook, hooks.c on_code)? With the
 * helpers replaced, only the two Unicorn translates inline; emulating, every one that
 * reads a single-precision operand or writes a single-precision result (NaN-boxing),
 * fmin/fmax (minimumNumber) and the fused multiply-adds (NV for inf x 0 + qNaN).
 * fmv.x.w moves the low word's bits as they are, which Unicorn does right. An
 * encoding that is illegal is hooked only if it looks like one of these, and then
 * left to Unicorn (fpu_emulate_all returns false), which raises the exception. */
bool fpu_classify(uint32_t insn)
{
    unsigned opcode = insn & 0x7f, funct7 = insn >> 25, funct3 = (insn >> 12) & 7;
    unsigned rs2 = (insn >> 20) & 31;
    if (fpu_state == FPU_REPLACED) {
        if (opcode != OP_FP)
            return false;
        if (funct7 == FUNCT7_FSGNJ_S)
            return funct3 <= 2;   /* fsgnj.s, fsgnjn.s, fsgnjx.s; others are illegal */
        return funct7 == FUNCT7_FMV_W_X && funct3 == 0 && rs2 == 0;
    }
    if (fpu_state != FPU_EMULATED)
        return false;
    if (is_fma(opcode))
        return ((insn >> 25) & 3) == FMT_S || ((insn >> 25) & 3) == FMT_D;
    if (opcode != OP_FP)
        return false;
    if (funct7 == FUNCT7_FMV_X_W && funct3 == 0)
        return false;
    return (funct7 & 3) == FMT_S || funct7 == FUNCT7_FMINMAX_D || funct7 == FUNCT7_FCVT_D_S;
}

/* Do the hooked instruction at `pc` as QEMU 7.2 does (trans_rvf.c.inc: operands
 * through gen_check_nanbox_s, the result through gen_nanbox_s) and mark the FP state
 * Dirty (spec 3.1.6.6: an instruction that writes an f register). With mstatus.FS Off
 * it is left to Unicorn, whose translation raises the illegal-instruction exception.
 * Below M, reading mstatus raises PRIV around the access (regs.c csr_raw), which drops
 * an LR reservation (docs/unicorn.md#writing-priv-drops-the-reservation): an FP
 * instruction between LR and SC makes the loop unconstrained (spec 8.3), so the SC
 * may fail there anyway. */
static bool fpu_emulate_all(hart *h, uint32_t insn, uint64_t pc, uint64_t mstatus);

bool fpu_emulate(hart *h, uint32_t insn, uint64_t pc)
{
    uint64_t mstatus = csr_raw(h, UC_RISCV_REG_MSTATUS);
    if (!(mstatus & MSTATUS_FS))
        return false;
    if (fpu_state == FPU_EMULATED)
        return fpu_emulate_all(h, insn, pc, mstatus);
    unsigned rd = (insn >> 7) & 31, rs1 = (insn >> 15) & 31, rs2 = (insn >> 20) & 31;
    unsigned funct3 = (insn >> 12) & 7;
    uint64_t a = 0, b = 0, result;
    if ((insn >> 25) == FUNCT7_FMV_W_X) {
        result = box((uint32_t)gpr(h, rs1));
    } else {
        uc_reg_read(h->uc, UC_RISCV_REG_F0 + (int)rs1, &a);
        uc_reg_read(h->uc, UC_RISCV_REG_F0 + (int)rs2, &b);
        uint32_t x = unbox(a), y = unbox(b), sign;
        switch (funct3) {
        case 0: sign = y; break;          /* fsgnj.s: rs2's sign */
        case 1: sign = ~y; break;         /* fsgnjn.s: its opposite */
        default: sign = x ^ y; break;     /* fsgnjx.s: the two signs' xor */
        }
        result = box((x & 0x7fffffffu) | (sign & 0x80000000u));
    }
    retire_through(h, pc);
    uc_reg_write(h->uc, UC_RISCV_REG_F0 + (int)rd, &result);
    if ((mstatus & MSTATUS_FS) != MSTATUS_FS)
        set_csr_raw(h, UC_RISCV_REG_MSTATUS, mstatus | MSTATUS_FS);   /* SD follows */
    redirect(h, (pc + 4) & h->xmask);
    return true;
}

/* ---- The portable path: F/D in code hooks, on Unicorn's exported softfloat ---- */

/* softfloat's rounding modes (QEMU 5.0 float_round_*) for the spec's rm 0-4 (RNE,
 * RTZ, RDN, RUP, RMM). */
static const int8_t ROUNDING[5] = {0, 3, 1, 2, 4};

/* softfloat's exception flags (QEMU 5.0 float_flag_*) as fflags bits (spec 11.2). */
static unsigned fflags_of(uint8_t flags)
{
    return ((flags & 1) ? 0x10u : 0) |    /* invalid: NV */
           ((flags & 4) ? 0x08u : 0) |    /* divbyzero: DZ */
           ((flags & 8) ? 0x04u : 0) |    /* overflow: OF */
           ((flags & 16) ? 0x02u : 0) |   /* underflow: UF */
           ((flags & 32) ? 0x01u : 0);    /* inexact: NX */
}

static uint64_t freg(hart *h, unsigned n)
{
    uint64_t v = 0;
    uc_reg_read(h->uc, UC_RISCV_REG_F0 + (int)n, &v);
    return v;
}

static bool fpu_emulate_all(hart *h, uint32_t insn, uint64_t pc, uint64_t mstatus)
{
    unsigned opcode = insn & 0x7f, rd = (insn >> 7) & 31, rm = (insn >> 12) & 7;
    unsigned rs1 = (insn >> 15) & 31, rs2 = (insn >> 20) & 31, funct7 = insn >> 25;
    bool rv64 = h->s.xlen == 64;
    /* The rounding mode, where the instruction has one: reserved ones (5, 6, or dyn
     * with frm above 4) are Unicorn's to refuse, as QEMU 7.2 does, with an illegal
     * instruction. QEMU 5.0's float_status as RISC-V sets it: tininess after
     * rounding, default NaN mode (the canonical NaN), no flush to zero. */
    bool rounds = is_fma(opcode) || !(funct7 == FUNCT7_FSGNJ_S || funct7 == 0x14 ||
                                      funct7 == FUNCT7_FMINMAX_D || funct7 == 0x50 ||
                                      funct7 == FUNCT7_FMV_X_W || funct7 == FUNCT7_FMV_W_X);
    unsigned mode = rm == 7 ? (unsigned)csr_raw(h, UC_RISCV_REG_FRM) : rm;
    if (rounds && mode > 4)
        return false;
    struct float_status st = {.rounding_mode = rounds ? ROUNDING[mode] : 0,
                              .default_nan_mode = 1};
    uint64_t a = freg(h, rs1), b = freg(h, rs2), f = 0, x = 0;
    bool to_f = true;   /* the result goes to f[rd], else to x[rd] */
    if (is_fma(opcode)) {
        static const int NEG[4] = {0, NEGATE_C, NEGATE_PRODUCT, NEGATE_C | NEGATE_PRODUCT};
        int neg = NEG[(opcode >> 2) & 3];
        uint64_t c = freg(h, insn >> 27);
        if (((insn >> 25) & 3) == FMT_S) {
            uint32_t p = unbox(a), q = unbox(b), r = unbox(c);
            infzero32(p, q, r, &st);
            f = box(float32_muladd_riscv64(p, q, r, neg, &st));
        } else {
            infzero64(a, b, c, &st);
            f = float64_muladd_riscv64(a, b, c, neg, &st);
        }
    } else {
        uint32_t p = unbox(a), q = unbox(b);
        switch (funct7) {
        case 0x00: f = box(float32_add_riscv64(p, q, &st)); break;
        case 0x04: f = box(float32_sub_riscv64(p, q, &st)); break;
        case 0x08: f = box(float32_mul_riscv64(p, q, &st)); break;
        case 0x0c: f = box(float32_div_riscv64(p, q, &st)); break;
        case 0x2c:
            if (rs2 != 0)
                return false;
            f = box(float32_sqrt_riscv64(p, &st));
            break;
        case FUNCT7_FSGNJ_S: {
            uint32_t sign = rm == 0 ? q : rm == 1 ? ~q : p ^ q;
            if (rm > 2)
                return false;
            f = box((p & 0x7fffffffu) | (sign & 0x80000000u));
            break;
        }
        case 0x14:
            if (rm > 1)
                return false;
            f = box(minmax32(p, q, rm == 1, &st));
            break;
        case FUNCT7_FMINMAX_D:
            if (rm > 1)
                return false;
            f = minmax64(a, b, rm == 1, &st);
            break;
        case 0x50:   /* fle.s, flt.s, feq.s */
            if (rm > 2)
                return false;
            to_f = false;
            x = rm == 0 ? (uint64_t)float32_le_riscv64(p, q, &st)
              : rm == 1 ? (uint64_t)float32_lt_riscv64(p, q, &st)
                        : (uint64_t)float32_eq_quiet_riscv64(p, q, &st);
            break;
        case FUNCT7_FMV_X_W:   /* fclass.s (fmv.x.w is not hooked) */
            if (rm != 1 || rs2 != 0)
                return false;
            to_f = false;
            x = fclass32(p);
            break;
        case 0x60:   /* fcvt.w.s, fcvt.wu.s, fcvt.l.s, fcvt.lu.s */
            if (rs2 > 3 || (rs2 > 1 && !rv64))
                return false;
            to_f = false;
            x = rs2 == 0 ? (uint64_t)(int64_t)float32_to_int32_riscv64(p, &st)
              : rs2 == 1 ? (uint64_t)(int64_t)(int32_t)float32_to_uint32_riscv64(p, &st)
              : rs2 == 2 ? (uint64_t)float32_to_int64_riscv64(p, &st)
                         : float32_to_uint64_riscv64(p, &st);
            break;
        case 0x68: {   /* fcvt.s.w, fcvt.s.wu, fcvt.s.l, fcvt.s.lu */
            uint64_t v = gpr(h, rs1);
            if (rs2 > 3 || (rs2 > 1 && !rv64))
                return false;
            f = box(rs2 == 0 ? int32_to_float32_riscv64((int32_t)v, &st)
                  : rs2 == 1 ? uint32_to_float32_riscv64((uint32_t)v, &st)
                  : rs2 == 2 ? int64_to_float32_riscv64((int64_t)v, &st)
                             : uint64_to_float32_riscv64(v, &st));
            break;
        }
        case FUNCT7_FMV_W_X:
            if (rm != 0 || rs2 != 0)
                return false;
            f = box((uint32_t)gpr(h, rs1));
            break;
        case FUNCT7_FCVT_S_D:
            if (rs2 != 1)
                return false;
            f = box(float64_to_float32_riscv64(a, &st));
            break;
        case FUNCT7_FCVT_D_S:
            if (rs2 != 0)
                return false;
            f = float32_to_float64_riscv64(p, &st);
            break;
        default:
            return false;   /* reserved: Unicorn raises the illegal instruction */
        }
    }
    retire_through(h, pc);
    if (to_f)
        uc_reg_write(h->uc, UC_RISCV_REG_F0 + (int)rd, &f);
    else if (rd != 0)
        set_gpr(h, rd, x & h->xmask);
    unsigned raised = fflags_of(st.exception_flags);
    if (raised) {
        /* Unicorn's fflags write also sets FS (QEMU 5.0 write_fflags): mstatus is put
         * back below, so only an f register written makes FS Dirty, as on QEMU 7.2. */
        uint64_t fflags = csr_raw(h, UC_RISCV_REG_FFLAGS);
        if ((fflags | raised) != fflags)
            set_csr_raw(h, UC_RISCV_REG_FFLAGS, fflags | raised);
    }
    uint64_t after = to_f ? mstatus | MSTATUS_FS : mstatus;
    if (raised || after != mstatus)
        set_csr_raw(h, UC_RISCV_REG_MSTATUS, after);   /* SD follows */
    redirect(h, (pc + 4) & h->xmask);
    return true;
}
