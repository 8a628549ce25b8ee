/*
 * csrops.c: the CSRs the core virtualises, and emulation of CSR instructions on them.
 *
 * Why each CSR is here:
 *   mstatus, sstatus, mie, sie, mideleg   a write can enable a pending interrupt, which
 *                                         must be taken right after it (spec 3.1.9);
 *                                         reads show QEMU 7.2's view (UXL/SXL, VS, SD)
 *   mip, sip                              the real pending bits live in the core
 *                                         (interrupt.c), not in Unicorn
 *   cycle, time, instret (+h), mcycle,    deterministic time; Unicorn returns host-clock
 *   minstret (+h)                         values or has no time source
 *                                         (docs/unicorn.md#counters-are-host-clock,
 *                                         docs/unicorn.md#rdtime-is-illegal)
 *   mcounteren, scounteren                Unicorn ignores them (S and U read counters
 *                                         whatever they hold), so the core keeps the
 *                                         guest's values and applies them when it
 *                                         emulates a counter read
 *                                         (docs/unicorn.md#counters-ignore-mcounteren)
 *   menvcfg(h), senvcfg, mcountinhibit,   priv 1.11/1.12 CSRs QEMU 7.2 has and Unicorn's
 *   mconfigptr                            QEMU 5.0 (priv 1.10) lacks
 *   pmpcfg0-3, pmpaddr0-15                the core enforces PMP itself (pmp.c)
 *   tselect, tdata1-3, tinfo              debug triggers (trigger.c), which Unicorn lacks
 *
 * Emulation happens in a code hook before the instruction runs (sstatus and mstatus:
 * inside Unicorn's own CSR helper instead, csrfast.c), or after Unicorn raised
 * illegal-instruction for it (rdtime, and the CSRs Unicorn lacks:
 * docs/unicorn.md#csrs-newer-than-priv-1-10). When
 * the access is not allowed, the core declines and the instruction raises the
 * illegal-instruction exception as usual.
 */
#include "hart.h"

#define S_INTS (MIP_SSIP | MIP_STIP | MIP_SEIP)
#define M_INTS (MIP_MSIP | MIP_MTIP | MIP_MEIP)
#define MIP_WRITABLE S_INTS                  /* M software may set SSIP/STIP/SEIP */
#define SIP_WRITABLE MIP_SSIP
#define MIDELEG_WRITABLE S_INTS
#define MIE_WRITABLE (M_INTS | S_INTS)

#define MSTATUS_WRITABLE (MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_MIE | MSTATUS_MPIE | \
    MSTATUS_SPP | MSTATUS_MPRV | MSTATUS_SUM | MSTATUS_MPP | MSTATUS_MXR | \
    MSTATUS_TVM | MSTATUS_TSR | MSTATUS_TW | MSTATUS_VS | MSTATUS_FS)
#define SSTATUS_VISIBLE (MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_SPP | MSTATUS_FS | \
    MSTATUS_XS | MSTATUS_SUM | MSTATUS_MXR | MSTATUS_VS)
#define SSTATUS_WRITABLE (SSTATUS_VISIBLE & ~MSTATUS_XS)
#define UXL_SXL_64 (0xaull << 32)           /* UXL = SXL = 2: 64-bit U and S */
#define MSTATUS_EXTRA (MSTATUS_VS | MSTATUS_TW | MSTATUS_TSR)   /* kept in the core */
#define UNICORN_TW_TSR (3ull << 29)         /* where Unicorn keeps them; never set */

#define ENVCFG_WRITABLE (MENVCFG_FIOM | MENVCFG_CBIE | MENVCFG_CBCFE | MENVCFG_CBZE)

#define CSR_RO_BITS 0xc00                   /* address bits 11:10 == 3: read-only */
#define FUNCT3_CSRRW 1
#define FUNCT3_CSRRS 2
#define FUNCT3_CSRRC 3

static unsigned counter_bit(unsigned csr)
{
    return csr & 0x1f;   /* cycle 0, time 1, instret 2, in mcounteren/scounteren */
}

/* hpm counter n (3..31) of a CSR in one of the hpm banks, or 0. */
static unsigned hpm_index(unsigned csr, unsigned xlen)
{
    unsigned n = csr & 0x1f;
    if (n < HPM_FIRST)
        return 0;
    switch (csr & ~0x1fu) {
    case CSR_CYCLE: case CSR_MCYCLE: case CSR_MCOUNTINHIBIT:
        return n;
    case CSR_CYCLEH: case CSR_MCYCLEH:
        return xlen == 32 ? n : 0;
    default:
        return 0;
    }
}

/* The CSRs QEMU 7.2 lacks among those named: hpm counters past the 16 it has
 * (mhpmeventN all exist). Accessing one is an illegal instruction, in M too. */
static bool csr_missing(unsigned csr, unsigned xlen)
{
    unsigned n = hpm_index(csr, xlen);
    return n && (csr & ~0x1fu) != CSR_MCOUNTINHIBIT && n >= HPM_FIRST + HPM_COUNTERS;
}

static bool is_user_counter(unsigned csr, unsigned xlen)
{
    if (hpm_index(csr, xlen) && ((csr & ~0x1fu) == CSR_CYCLE || (csr & ~0x1fu) == CSR_CYCLEH))
        return true;
    switch (csr) {
    case CSR_CYCLE: case CSR_TIME: case CSR_INSTRET:
        return true;
    case CSR_CYCLEH: case CSR_TIMEH: case CSR_INSTRETH:
        return xlen == 32;
    default:
        return false;
    }
}

bool is_virtualised_csr(unsigned csr, unsigned xlen)
{
    switch (csr) {
    case CSR_MSTATUS: case CSR_SSTATUS: case CSR_MIE: case CSR_SIE: case CSR_MIP:
    case CSR_SIP: case CSR_MIDELEG: case CSR_MCOUNTEREN: case CSR_SCOUNTEREN:
    case CSR_MENVCFG: case CSR_SENVCFG: case CSR_MCOUNTINHIBIT: case CSR_MCONFIGPTR:
    case CSR_MHARTID: case CSR_MCYCLE: case CSR_MINSTRET:
        return true;
    case CSR_STIMECMP:
        return true;
    case CSR_MENVCFGH: case CSR_MCYCLEH: case CSR_MINSTRETH: case CSR_STIMECMPH:
        return xlen == 32;
    default:
        return is_user_counter(csr, xlen) || hpm_index(csr, xlen) || pmp_is_csr(csr) ||
               trigger_is_csr(csr);
    }
}

bool csr_write_enables_interrupts(unsigned csr)
{
    switch (csr) {
    case CSR_MSTATUS: case CSR_SSTATUS: case CSR_MIE: case CSR_SIE: case CSR_MIP:
    case CSR_SIP: case CSR_MIDELEG: case CSR_STIMECMP: case CSR_STIMECMPH:
    case CSR_MENVCFG: case CSR_MENVCFGH:
        return true;
    default:
        return false;
    }
}

/* mstatus as QEMU 7.2 shows it: Unicorn's bits, VS/TW/TSR from the core, UXL/SXL on
 * RV64 and SD computed from FS/XS/VS. */
uint64_t guest_mstatus(hart *h)
{
    return guest_mstatus_of(h, csr_raw(h, UC_RISCV_REG_MSTATUS));
}

/* mstatus as the guest reads it, from the value Unicorn holds (`raw`). */
uint64_t guest_mstatus_of(const hart *h, uint64_t raw)
{
    uint64_t v = raw;
    v &= ~(MSTATUS_EXTRA | MSTATUS64_SD | MSTATUS32_SD | MSTATUS_UXL | MSTATUS_SXL |
           UNICORN_TW_TSR);
    v |= h->mstatus_extra;
    bool dirty = (v & MSTATUS_FS) == MSTATUS_FS || (v & MSTATUS_XS) == MSTATUS_XS ||
                 (v & MSTATUS_VS) == MSTATUS_VS;
    if (h->s.xlen == 64)
        v |= UXL_SXL_64 | (dirty ? MSTATUS64_SD : 0);
    else
        v = (v & 0xffffffffull) | (dirty ? MSTATUS32_SD : 0);
    return v;
}

/* What the guest reads from `csr` (sstatus or mstatus), mstatus being `m`. */
static uint64_t status_view(unsigned csr, uint64_t m)
{
    return csr == CSR_SSTATUS
        ? m & (SSTATUS_VISIBLE | MSTATUS_UXL | MSTATUS64_SD | MSTATUS32_SD) : m;
}

/* mstatus after `value` is written to `csr` (sstatus or mstatus), mstatus being `m`. */
static uint64_t status_written(unsigned csr, uint64_t m, uint64_t value)
{
    uint64_t writable = csr == CSR_SSTATUS ? SSTATUS_WRITABLE : MSTATUS_WRITABLE;
    return (m & ~writable) | (value & writable);
}

/* Unicorn's mstatus for the guest's `m` (the bits the core keeps go to mstatus_extra). */
static uint64_t status_raw(hart *h, uint64_t m)
{
    h->mstatus_extra = m & MSTATUS_EXTRA;
    return m & ~MSTATUS_EXTRA & ~UXL_SXL_64;
}

/* Bits a status write may change in Unicorn's mstatus word directly (csrfast.c):
 * inside the mask of QEMU 5.0's write_mstatus, and none that makes it flush the TLB
 * (MXR, MPP, MPV, MPRV, SUM). These are the interrupt-enable bits spinlocks toggle. */
#define STATUS_DIRECT (MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_MIE | MSTATUS_MPIE | MSTATUS_SPP)

/* Unicorn's mstatus word after a write of `value` over `raw`, as QEMU 5.0's
 * write_mstatus makes it, when only STATUS_DIRECT bits change (UXL/SXL and SD are
 * outside its mask or recomputed): false otherwise. */
static bool direct_status(uint64_t raw, uint64_t value, uint64_t *out)
{
    uint64_t diff = (raw ^ value) & ~(MSTATUS64_SD | MSTATUS_UXL | MSTATUS_SXL);
    if (diff & ~(uint64_t)STATUS_DIRECT)
        return false;
    uint64_t v = raw ^ diff;
    bool dirty = (v & MSTATUS_FS) == MSTATUS_FS || (v & MSTATUS_XS) == MSTATUS_XS;
    *out = (v & ~MSTATUS64_SD) | (dirty ? MSTATUS64_SD : 0);
    return true;
}

uint64_t status_direct;   /* accesses that never went through the register API */

/* A CSR instruction's access to sstatus or mstatus (csrfast.c): what it reads, and with
 * a write mask, the write. `word` is Unicorn's mstatus in its CPU state when csrfast.c
 * has found it (RV64): read there, and written there when direct_status allows;
 * otherwise Unicorn's mstatus is reached through its register API, under one lend of
 * level M. */
uint64_t status_access(hart *h, unsigned csr, uint64_t new_value, uint64_t write_mask,
                       uint64_t *word)
{
    unsigned priv = cur_priv(h);
    bool lent = false;
    uint64_t raw, value, direct;
    if (!word) {
        if (priv != PRV_M)
            set_reg(h, UC_RISCV_REG_PRIV, PRV_M), lent = true;
        raw = reg(h, UC_RISCV_REG_MSTATUS);
    } else {
        raw = *word;
    }
    uint64_t m = guest_mstatus_of(h, raw);
    uint64_t old = status_view(csr, m) & h->xmask;
    bool api = !word;
    if (write_mask) {
        value = status_raw(h, status_written(
            csr, m, ((old & ~write_mask) | (new_value & write_mask)) & h->xmask));
        if (word && direct_status(raw, value, &direct)) {
            *word = direct;
        } else {
            if (!lent && priv != PRV_M)
                set_reg(h, UC_RISCV_REG_PRIV, PRV_M), lent = true;
            set_reg(h, UC_RISCV_REG_MSTATUS, value);
            api = true;
        }
    }
    if (lent)
        set_reg(h, UC_RISCV_REG_PRIV, priv);
    if (!api)
        status_direct++;
    return old;
}

static uint64_t running_cycles(const hart *h)
{
    return guest_ns(h) + h->cycle_offset;   /* QEMU 7.2 with -icount: the virtual clock */
}

static uint64_t running_instret(const hart *h)
{
    return h->s.instret + h->instret_offset;
}

/* mcycle and minstret; mcountinhibit.CY/IR stops them (spec 3.1.13). */
static uint64_t clock_cycles(const hart *h)
{
    return h->mcountinhibit & COUNTEREN_CY ? h->cycle_frozen : running_cycles(h);
}

static uint64_t clock_instret(const hart *h)
{
    return h->mcountinhibit & COUNTEREN_IR ? h->instret_frozen : running_instret(h);
}

static void write_countinhibit(hart *h, uint64_t value)
{
    uint64_t was = h->mcountinhibit;
    if (!(was & COUNTEREN_CY) && (value & COUNTEREN_CY))
        h->cycle_frozen = running_cycles(h);
    if ((was & COUNTEREN_CY) && !(value & COUNTEREN_CY))
        h->cycle_offset += h->cycle_frozen - running_cycles(h);
    if (!(was & COUNTEREN_IR) && (value & COUNTEREN_IR))
        h->instret_frozen = running_instret(h);
    if ((was & COUNTEREN_IR) && !(value & COUNTEREN_IR))
        h->instret_offset += h->instret_frozen - running_instret(h);
    for (unsigned i = 0; i < HPM_COUNTERS; i++)
        hpm_retarget(h, i, h->mhpmevent[i], value);
    h->mcountinhibit = value;
}

bool csr_read_virtual(hart *h, unsigned csr, uint64_t *value)
{
    uint64_t s_ints = h->mideleg & S_INTS;
    bool high = false;
    uint64_t v;

    switch (csr) {
    case CSR_MSTATUS: case CSR_SSTATUS: v = status_view(csr, guest_mstatus(h)); break;
    case CSR_MIE: v = h->mie; break;
    case CSR_SIE: v = h->mie & s_ints; break;
    case CSR_MIP: v = mip_value(h); break;
    case CSR_SIP: v = mip_value(h) & s_ints; break;
    case CSR_MIDELEG: v = h->mideleg; break;
    case CSR_MCOUNTEREN: v = h->mcounteren; break;
    case CSR_SCOUNTEREN: v = h->scounteren; break;
    case CSR_MENVCFG: v = h->menvcfg; break;
    case CSR_MENVCFGH: v = h->menvcfg >> 32; break;
    case CSR_SENVCFG: v = h->senvcfg; break;
    case CSR_STIMECMP: v = h->stimecmp; break;
    case CSR_STIMECMPH: v = h->stimecmp >> 32; break;
    case CSR_MCOUNTINHIBIT: v = h->mcountinhibit; break;
    case CSR_MCONFIGPTR: v = 0; break;
    case CSR_MHARTID: v = h->s.hart_id; break;   /* Unicorn's is always 0 */
    case CSR_CYCLEH: case CSR_MCYCLEH: high = true; /* fallthrough */
    case CSR_CYCLE: case CSR_MCYCLE: v = clock_cycles(h); break;
    case CSR_INSTRETH: case CSR_MINSTRETH: high = true; /* fallthrough */
    case CSR_INSTRET: case CSR_MINSTRET: v = clock_instret(h); break;
    case CSR_TIMEH: high = true; /* fallthrough */
    case CSR_TIME: v = mtime(h); break;
    default:
        if (hpm_index(csr, h->s.xlen)) {
            unsigned n = hpm_index(csr, h->s.xlen);
            if (csr_missing(csr, h->s.xlen))
                return false;
            if ((csr & ~0x1fu) == CSR_MCOUNTINHIBIT) {
                v = h->mhpmevent[n - HPM_FIRST];
                break;
            }
            high = (csr & ~0x1fu) == CSR_CYCLEH || (csr & ~0x1fu) == CSR_MCYCLEH;
            v = hpm_read(h, n - HPM_FIRST);
            break;
        }
        if (!pmp_read_csr(h, csr, &v) && !trigger_read_csr(h, csr, &v))
            return false;
        break;
    }
    *value = (high ? v >> 32 : v) & h->xmask;
    return true;
}

static uint64_t with_half(uint64_t old, uint64_t half, bool high)
{
    return high ? (old & 0xffffffffull) | (half << 32) : (old & ~0xffffffffull) | half;
}

bool csr_write_virtual(hart *h, unsigned csr, uint64_t value)
{
    uint64_t cur;
    switch (csr) {
    case CSR_MSTATUS: case CSR_SSTATUS:
        set_csr_raw(h, UC_RISCV_REG_MSTATUS,
                    status_raw(h, status_written(csr, guest_mstatus(h), value)));
        break;
    case CSR_MIE:
        h->mie = (h->mie & ~MIE_WRITABLE) | (value & MIE_WRITABLE);
        set_csr_raw(h, UC_RISCV_REG_MIE, h->mie);
        break;
    case CSR_SIE: {
        uint64_t mask = h->mideleg & S_INTS;
        h->mie = (h->mie & ~mask) | (value & mask);
        set_csr_raw(h, UC_RISCV_REG_MIE, h->mie);
        break;
    }
    case CSR_MIP: {
        /* With Sstc on, STIP is the comparator's, not software's (QEMU 7.2). */
        uint64_t mask = MIP_WRITABLE & ~(sstc_on(h) ? MIP_STIP : 0);
        h->s.mip_sw = (h->s.mip_sw & ~mask) | (value & mask);
        break;
    }
    case CSR_SIP: {
        uint64_t mask = h->mideleg & SIP_WRITABLE;
        h->s.mip_sw = (h->s.mip_sw & ~mask) | (value & mask);
        break;
    }
    case CSR_MIDELEG:
        h->mideleg = value & MIDELEG_WRITABLE;
        set_csr_raw(h, UC_RISCV_REG_MIDELEG, h->mideleg);
        break;
    /* QEMU 7.2 keeps every XLEN bit of these three (the spec: 32 bits, and
     * mcountinhibit's bit 1 read-only zero). */
    case CSR_MCOUNTEREN: h->mcounteren = value; break;
    case CSR_SCOUNTEREN: h->scounteren = value; break;
    case CSR_MENVCFG:
        if (h->s.xlen == 64)
            h->menvcfg = value & (ENVCFG_WRITABLE | MENVCFG_STCE);
        else
            h->menvcfg = with_half(h->menvcfg, value & ENVCFG_WRITABLE, false);
        update_deadline(h);
        break;
    case CSR_MENVCFGH:
        h->menvcfg = with_half(h->menvcfg, (value << 32 & MENVCFG_STCE) >> 32, true);
        update_deadline(h);
        break;
    case CSR_STIMECMP:
        h->stimecmp = h->s.xlen == 64 ? value : with_half(h->stimecmp, value, false);
        update_deadline(h);
        break;
    case CSR_STIMECMPH:
        h->stimecmp = with_half(h->stimecmp, value & 0xffffffffull, true);
        update_deadline(h);
        break;
    case CSR_SENVCFG: h->senvcfg = value & ENVCFG_WRITABLE; break;
    case CSR_MCOUNTINHIBIT: write_countinhibit(h, value); break;
    case CSR_MCYCLE: case CSR_MCYCLEH:
        cur = clock_cycles(h);
        if (h->s.xlen == 32)
            value = with_half(cur, value & 0xffffffffull, csr == CSR_MCYCLEH);
        if (h->mcountinhibit & COUNTEREN_CY)
            h->cycle_frozen = value;
        else
            h->cycle_offset += value - cur;
        break;
    case CSR_MINSTRET: case CSR_MINSTRETH:
        cur = clock_instret(h);
        if (h->s.xlen == 32)
            value = with_half(cur, value & 0xffffffffull, csr == CSR_MINSTRETH);
        /* the write happens as this instruction retires: it does not count itself */
        if (h->mcountinhibit & COUNTEREN_IR)
            h->instret_frozen = value;
        else
            h->instret_offset += value - cur - 1;
        break;
    default:
        if (hpm_index(csr, h->s.xlen) && !csr_missing(csr, h->s.xlen)) {
            unsigned n = hpm_index(csr, h->s.xlen) - HPM_FIRST;
            if ((csr & ~0x1fu) == CSR_MCOUNTINHIBIT && n < HPM_COUNTERS)
                hpm_retarget(h, n, value, h->mcountinhibit);
            else if ((csr & ~0x1fu) == CSR_MCOUNTINHIBIT)
                h->mhpmevent[n] = value;   /* the event of a counter QEMU 7.2 lacks */
            else if ((csr & ~0x1fu) == CSR_MCYCLE || (csr & ~0x1fu) == CSR_MCYCLEH)
                hpm_write(h, n, h->s.xlen == 32
                    ? with_half(hpm_read(h, n), value & 0xffffffffull, csr >= CSR_MCYCLEH)
                    : value);
            else
                return false;   /* hpmcounterN are read-only */
            break;
        }
        return pmp_write_csr(h, csr, value) || trigger_write_csr(h, csr, value);
    }
    return true;
}

/* Counters below M need the guest's mcounteren (and scounteren for U) bit; S's
 * stimecmp needs mcounteren.TM and menvcfg.STCE (QEMU 7.2's sstc predicate). */
static bool counter_allowed(hart *h, unsigned csr, unsigned priv)
{
    if (csr == CSR_STIMECMP || csr == CSR_STIMECMPH)
        return priv == PRV_M || ((h->mcounteren & COUNTEREN_TM) && sstc_on(h));
    if (!is_user_counter(csr, h->s.xlen) || priv == PRV_M)
        return true;
    uint64_t bit = 1ull << counter_bit(csr);
    if (!(h->mcounteren & bit))
        return false;
    return priv == PRV_S || (h->scounteren & bit);
}

/* Emulate (or observe) the CSR instruction `insn` at `pc`, run at privilege `priv`.
 * Returns true when the core completed it; false lets Unicorn execute it. */
bool emulate_csr(hart *h, uint32_t insn, uint64_t pc, unsigned priv)
{
    unsigned csr = insn >> 20, funct3 = (insn >> 12) & 7;
    unsigned rd = (insn >> 7) & 31, rs1 = (insn >> 15) & 31;
    bool imm = funct3 & 4;
    unsigned op = funct3 & 3;
    bool writes = op == FUNCT3_CSRRW || rs1 != 0;   /* csrrs/csrrc with x0/0 only read */
    unsigned level = (csr >> 8) & 3;

    if (priv < level || op == 0)
        return false;
    uint64_t src = imm ? rs1 : gpr(h, rs1);
    if (!is_virtualised_csr(csr, h->s.xlen)) {
        if (writes && csr == CSR_SATP)
            h->satp_stale = true;   /* fetch.c re-reads it after the write has run */
        return false;
    }
    if (writes && (csr & CSR_RO_BITS) == CSR_RO_BITS)
        return false;
    if (csr_missing(csr, h->s.xlen)) {
        take_exception(h, CAUSE_ILLEGAL_INSTRUCTION, pc);   /* an hpm counter QEMU lacks */
        return true;
    }
    if (pmp_is_csr(csr) && !pmp_csr_exists(h, csr)) {
        take_exception(h, CAUSE_ILLEGAL_INSTRUCTION, pc);   /* odd pmpcfg on RV64 */
        return true;
    }
    if (!counter_allowed(h, csr, priv)) {
        /* Not allowed by the guest's mcounteren/scounteren. (M-mode code reaches here
         * before running the instruction; raising it here keeps one path.) */
        take_exception(h, CAUSE_ILLEGAL_INSTRUCTION, pc);
        return true;
    }

    /* Mid-block, instret counts the whole block; make it exact before time is read.
     * The clock is read with this instruction counted, as QEMU 7.2 under -icount
     * does (an instruction that reads the clock ends its block, whose instructions are
     * charged on entry) and as an MMIO read of mtime is here: time never reads behind
     * an mtime load just before it, whatever the pace. */
    if (csr == CSR_TIME || csr == CSR_TIMEH)
        retire_through(h, pc);
    else
        retire_before(h, pc);
    uint64_t old;
    csr_read_virtual(h, csr, &old);
    if (writes) {
        /* mip.SEIP reads as the OR of its software bit and the PLIC's line, but only
         * the software bit takes part in a csrrs/csrrc (privileged spec 3.1.9; QEMU
         * 7.2 changes only the bits set in the mask): else setting STIP while the
         * line is high would latch SEIP on for good. */
        uint64_t base = (csr == CSR_MIP || csr == CSR_SIP) ? h->s.mip_sw : old;
        uint64_t v = op == FUNCT3_CSRRW ? src : op == FUNCT3_CSRRS ? (base | src) : (base & ~src);
        csr_write_virtual(h, csr, v & h->xmask);
    }
    set_gpr(h, rd, old);
    retire_through(h, pc);
    uint64_t next = (pc + 4) & h->xmask;
    if (!(writes && csr_write_enables_interrupts(csr) && check_interrupts(h, next)))
        redirect(h, next);
    return true;
}
