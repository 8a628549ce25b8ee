"""A generated F/D differential program: every case's result, fflags and mstatus.FS.

`generate(xlen, seed)` writes the assembly of one bare-metal M-mode program and
returns it with the list of its cases. Each case loads its operands (raw 64-bit f
register images, so single-precision operands may be left un-NaN-boxed on purpose),
clears fflags, sets frm, sets mstatus.FS to Initial, runs ONE instruction, and
records:
  - the destination (the whole 64-bit f register, or the x register), preset to a
    marker so an instruction that trapped shows it did not write;
  - fflags (NV DZ OF UF NX, spec 11.2);
  - mstatus.FS after the instruction (spec 3.1.6.6: Dirty when it wrote FP state);
  - the trap it took, if any (mcause, mtval; the handler skips the instruction):
    an invalid static rm (5, 6) or dyn with frm 5-7 is an illegal instruction.
Then the table is printed on the UART, one line per case, and the program powers off
through the sifive_test finisher. The same ELF runs on QEMU 7.2 and privlab; the test
(test_fp_differential.py) requires identical lines.

Instructions are emitted as `.word`s encoded here (unprivileged spec, chapter 24's
opcode map), so no assembler needs F or D and invalid rm encodings can be made.
Operands: signed zeros, the smallest and largest subnormals, the smallest normals,
ones, values whose sums and products round (for every rounding mode), the largest
finite values, infinities, quiet and signalling NaNs of both signs with payloads,
integers at and past every conversion's limits, and for single precision the same
patterns with the upper word not all ones; plus seeded random bit patterns.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["Case", "generate"]

OP_FP, FMADD, FMSUB, FNMSUB, FNMADD = 0x53, 0x43, 0x47, 0x4B, 0x4F
S, D = 0, 1                  # fmt field: single, double
RD_F, RS1, RS2, RS3 = 0, 1, 2, 3   # f0 <- op(f1, f2, f3)
RD_X, RS_X = 10, 11          # a0 <- ..., ... <- a1
RM_NAMES = ["rne", "rtz", "rdn", "rup", "rmm", "rm5", "rm6", "dyn"]
MARK_F = 0x5A5A5A5A5A5A5A5A  # destination presets: a trapped case leaves them
MARK_X = 0x3C3C3C3C3C3C3C3C

BOX = 0xFFFF_FFFF_0000_0000

F32 = {
    "+0": 0x00000000, "-0": 0x80000000, "+min_sub": 0x00000001, "-min_sub": 0x80000001,
    "+max_sub": 0x007FFFFF, "-max_sub": 0x807FFFFF, "+min_norm": 0x00800000,
    "-min_norm": 0x80800000, "+1": 0x3F800000, "-1": 0xBF800000, "+1.5": 0x3FC00000,
    "-2.5": 0xC0200000, "+1+ulp": 0x3F800001, "+3": 0x40400000, "+0.1": 0x3DCCCCCD,
    "+max": 0x7F7FFFFF, "-max": 0xFF7FFFFF, "+inf": 0x7F800000, "-inf": 0xFF800000,
    "qnan": 0x7FC00000, "-qnan_pl": 0xFFC12345, "snan": 0x7F800001, "-snan_pl": 0xFFA00000,
    "2^31": 0x4F000000, "-2^31": 0xCF000000, "2^32": 0x4F800000, "2^63": 0x5F000000,
    "-2^63": 0xDF000000, "2^64": 0x5F800000, "-0.5": 0xBF000000, "-1.5": 0xBFC00000,
}
F64 = {
    "+0": 0, "-0": 1 << 63, "+min_sub": 1, "-min_sub": (1 << 63) | 1,
    "+max_sub": 0x000FFFFFFFFFFFFF, "+min_norm": 0x0010000000000000,
    "-min_norm": 0x8010000000000000, "+1": 0x3FF0000000000000, "-1": 0xBFF0000000000000,
    "+1.5": 0x3FF8000000000000, "-2.5": 0xC004000000000000, "+1+ulp": 0x3FF0000000000001,
    "+3": 0x4008000000000000, "+0.1": 0x3FB999999999999A, "+max": 0x7FEFFFFFFFFFFFFF,
    "-max": 0xFFEFFFFFFFFFFFFF, "+inf": 0x7FF0000000000000, "-inf": 0xFFF0000000000000,
    "qnan": 0x7FF8000000000000, "-qnan_pl": 0xFFF8000000012345, "snan": 0x7FF0000000000001,
    "-snan_pl": 0xFFF4000000000000, "f32max+": 0x47EFFFFFF0000000, "f32tiny": 0x36A0000000000000,
    "2^31": 0x41E0000000000000, "-2^31-1": 0xC1E0000000200000, "2^32": 0x41F0000000000000,
    "2^63": 0x43E0000000000000, "-2^63": 0xC3E0000000000000, "2^64": 0x43F0000000000000,
    "-0.5": 0xBFE0000000000000, "-1.5": 0xBFF8000000000000,
}
# Single-precision operands whose upper word is not all ones (spec 12.2: each reads
# as the canonical NaN), and the D values' low words as singles.
UNBOXED = {"unboxed1": 0x7FFFFFFE3F800000, "unboxed0": 0x0000000040400000,
           "unboxed_snan": 0x000000007F800001}
INTS = [0, 1, 2, 3, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000001, 0x7FFFFFFFFFFFFFFF,
        0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0x123456789, 0x01000001, 0xFFFFFFFF80000001]


@dataclass(frozen=True)
class Case:
    name: str          # instruction mnemonic
    rm: str            # rounding mode: a static one, "dyn:N" (frm N) or "-" (none)
    operands: tuple[int, ...]
    word: int          # the instruction encoding
    int_result: bool   # rd is a0 (else f0)

    def describe(self) -> str:
        ops = ", ".join(f"{o:#018x}" for o in self.operands)
        return f"{self.name} rm={self.rm} ({ops})"


def _r(funct5: int, fmt: int, rs2: int, rm: int, rd: int, rs1: int = RS1) -> int:
    return ((((funct5 << 2) | fmt) << 25) | (rs2 << 20) | (rs1 << 15) | (rm << 12)
            | (rd << 7) | OP_FP)


def _r4(opcode: int, fmt: int, rm: int) -> int:
    return (RS3 << 27) | (fmt << 25) | (RS2 << 20) | (RS1 << 15) | (rm << 12) | (RD_F << 7) | opcode


def _fvalues(fmt: int) -> list[int]:
    if fmt == D:
        return list(F64.values())
    return [BOX | v for v in F32.values()] + list(UNBOXED.values())


def generate(xlen: int, seed: int) -> tuple[str, list[Case]]:
    rnd = random.Random(seed)
    cases: list[Case] = []

    def rand_f(fmt: int) -> int:
        if fmt == D:
            return rnd.getrandbits(64)
        return BOX | rnd.getrandbits(32)

    def rms(rounds: bool) -> list[tuple[str, int, int]]:
        """(label, rm field, frm) choices for one case: one of the five static modes,
        dyn under each valid frm, and sometimes an invalid static rm or frm."""
        if not rounds:
            return [("-", 0, 0)]
        pick = rnd.randrange(16)
        if pick < 5:
            return [(RM_NAMES[pick], pick, 0)]
        if pick < 10:
            return [(f"dyn:{pick - 5}", 7, pick - 5)]
        if pick < 12:
            return [(f"rm{pick - 5}", pick - 5, 0)]          # 5, 6: reserved
        if pick < 14:
            frm = 5 + rnd.randrange(3)
            return [(f"dyn:{frm}", 7, frm)]                  # frm 5-7: invalid
        return [(RM_NAMES[k], k, 0) for k in range(5)]

    def add(name: str, word_of, ops: tuple[int, ...], int_result: bool, rounds: bool) -> None:
        for label, rm, frm in rms(rounds):
            cases.append(Case(name, label, (*ops, frm) if rounds else ops, word_of(rm),
                              int_result))

    for fmt, sfx in ((S, "s"), (D, "d")):
        vals = _fvalues(fmt)
        pairs = [(a, b) for a in vals for b in vals]
        rnd.shuffle(pairs)
        pairs = pairs[:420] + [(rand_f(fmt), rand_f(fmt)) for _ in range(40)]
        ops2 = [("fadd", 0x00), ("fsub", 0x01), ("fmul", 0x02), ("fdiv", 0x03)]
        for name, f5 in ops2:
            for a, b in pairs[: 160]:
                add(f"{name}.{sfx}",
                    lambda rm, f5=f5, fmt=fmt: _r(f5, fmt, RS2, rm, RD_F), (a, b), False, True)
            rnd.shuffle(pairs)
        snan, one = (F64["snan"], F64["+1"]) if fmt == D else (BOX | F32["snan"], BOX | F32["+1"])
        for a, b in [*pairs[:300], (snan, one), (one, snan)]:   # the sNaN case, always
            for name, f3 in (("fmin", 0), ("fmax", 1)):
                add(f"{name}.{sfx}",
                    lambda rm, f3=f3, fmt=fmt: _r(0x05, fmt, RS2, f3, RD_F), (a, b), False, False)
        for a, b in pairs[:120]:
            for name, f3 in (("fsgnj", 0), ("fsgnjn", 1), ("fsgnjx", 2)):
                add(f"{name}.{sfx}",
                    lambda rm, f3=f3, fmt=fmt: _r(0x04, fmt, RS2, f3, RD_F), (a, b), False, False)
            for name, f3 in (("feq", 2), ("flt", 1), ("fle", 0)):
                add(f"{name}.{sfx}",
                    lambda rm, f3=f3, fmt=fmt: _r(0x14, fmt, RS2, f3, RD_X), (a, b), True, False)
        for a in vals + [rand_f(fmt) for _ in range(16)]:
            # fsgnj rs1 == rs2: fmv / fneg / fabs
            for name, f3 in (("fmv", 0), ("fneg", 1), ("fabs", 2)):
                add(f"{name}.{sfx}",
                    lambda rm, f3=f3, fmt=fmt: _r(0x04, fmt, RS1, f3, RD_F), (a, a), False, False)
            add(f"fclass.{sfx}", lambda rm, fmt=fmt: _r(0x1C, fmt, 0, 1, RD_X), (a,), True, False)
            add(f"fsqrt.{sfx}", lambda rm, fmt=fmt: _r(0x0B, fmt, 0, rm, RD_F), (a,), False, True)
            for name, k in (("w", 0), ("wu", 1), ("l", 2), ("lu", 3)):
                if k >= 2 and xlen == 32:
                    continue
                add(f"fcvt.{name}.{sfx}",
                    lambda rm, k=k, fmt=fmt: _r(0x18, fmt, k, rm, RD_X), (a,), True, True)
            if fmt == S:
                add("fcvt.d.s", lambda rm: _r(0x08, D, 0, rm, RD_F), (a,), False, True)
                add("fmv.x.w", lambda rm: _r(0x1C, S, 0, 0, RD_X), (a,), True, False)
            else:
                add("fcvt.s.d", lambda rm: _r(0x08, S, 1, rm, RD_F), (a,), False, True)
                if xlen == 64:
                    add("fmv.x.d", lambda rm: _r(0x1C, D, 0, 0, RD_X), (a,), True, False)
        for x in INTS + [rnd.getrandbits(64) for _ in range(8)]:
            x &= (1 << xlen) - 1
            for name, k in (("w", 0), ("wu", 1), ("l", 2), ("lu", 3)):
                if k >= 2 and xlen == 32:
                    continue
                add(f"fcvt.{sfx}.{name}",
                    lambda rm, k=k, fmt=fmt: _r(0x1A, fmt, k, rm, RD_F, RS_X), (x,), False, True)
            if fmt == S:
                add("fmv.w.x", lambda rm: _r(0x1E, S, 0, 0, RD_F, RS_X), (x,), False, False)
            elif xlen == 64:
                add("fmv.d.x", lambda rm: _r(0x1E, D, 0, 0, RD_F, RS_X), (x,), False, False)
        triples = [(rnd.choice(vals), rnd.choice(vals), rnd.choice(vals)) for _ in range(150)]
        inf, zero = (F64["+inf"], F64["+0"]) if fmt == D else (BOX | F32["+inf"], BOX | F32["+0"])
        qnan, snan = (F64["qnan"], F64["snan"]) if fmt == D \
            else (BOX | F32["qnan"], BOX | F32["snan"])
        triples += [(inf, zero, qnan), (zero, inf, qnan), (inf, zero, snan),
                    (inf, zero, 0 if fmt == D else BOX),
                    (qnan, zero, inf), (inf, inf, inf | (1 << (63 if fmt == D else 31)))]
        for name, opc in (("fmadd", FMADD), ("fmsub", FMSUB), ("fnmsub", FNMSUB),
                          ("fnmadd", FNMADD)):
            for t in triples:
                add(f"{name}.{sfx}", lambda rm, opc=opc, fmt=fmt: _r4(opc, fmt, rm), t, False, True)
    return _assemble(xlen, cases), cases


def _assemble(xlen: int, cases: list[Case]) -> str:
    ld = "ld" if xlen == 64 else "lw"
    sx = "sd" if xlen == 64 else "sw"
    word = 8 if xlen == 64 else 4
    out = [
        "// generated by tests/conformance/fpdiff.py: do not edit",
        '#include "platform.h"',
        ".option arch, +d      // fld/fsd only; the instructions under test are .words",
        ".section .text.entry", ".globl _start", "_start:",
        "    la sp, __stack_top",
        "    la t0, trap", "    csrw mtvec, t0",
        f"    li s2, {0x6000}        // mstatus.FS (3 << 13)",
        f"    li s3, {0x2000}        // FS = Initial",
        "    csrs mstatus, s3",
        "    la s1, results",
    ]
    data = ["    .section .data", "    .balign 8", "operands:"]
    for i, c in enumerate(cases):
        ops = c.operands
        rounds = c.rm != "-"
        frm = ops[-1] if rounds else 0
        vals = ops[:-1] if rounds else ops
        base = i * 4 * 8
        data.append(f"    .quad {', '.join(hex(v) for v in (*vals, 0, 0, 0, 0)[:4])}")
        out.append(f"    // case {i}: {c.name} rm={c.rm}")
        out.append(f"    la t2, operands + {base}")
        if c.word & 0x7F == OP_FP and ((c.word >> 15) & 31) == RS_X:
            if xlen == 32:
                out.append("    lw a1, 0(t2)")
            else:
                out.append("    ld a1, 0(t2)")
        else:
            out += ["    fld f1, 0(t2)", "    fld f2, 8(t2)", "    fld f3, 16(t2)"]
        out += ["    la t3, mark", "    fld f0, 0(t3)", f"    {ld} a0, 8(t3)",
                "    csrwi fflags, 0", f"    csrwi frm, {frm}",
                "    csrc mstatus, s2", "    csrs mstatus, s3",
                "    sw zero, 24(s1)        // no trap yet",
                f"    .word {c.word:#010x}   // {c.name}",
                "    csrr t4, mstatus", "    csrr t5, fflags",
                "    fsd f0, 0(s1)" if not c.int_result else f"    {sx} a0, 0(s1)",
                f"    {sx} zero, {word}(s1)" if c.int_result and xlen == 32 else "",
                "    srli t4, t4, 13", "    andi t4, t4, 3",
                "    sw t4, 16(s1)", "    sw t5, 20(s1)",
                "    addi s1, s1, 32"]
    out += [
        "    // print: one line per case: result fflags FS trap-cause",
        "    la s1, results",
        f"    li s4, {len(cases)}",
        "1:  beqz s4, 9f",
        f"    {ld} a0, 0(s1)" if xlen == 64 else "    lw a0, 4(s1)",
        "    call hex_out" if xlen == 64 else "    call hex32",
        *([] if xlen == 64 else ["    lw a0, 0(s1)", "    call hex32"]),
        "    li a0, ' '", "    call putc",
        "    lw a0, 20(s1)", "    call nib",
        "    lw a0, 16(s1)", "    call nib",
        "    li a0, ' '", "    call putc",
        "    lw a0, 24(s1)", "    call hex32",
        "    li a0, '\\n'", "    call putc",
        "    addi s1, s1, 32", "    addi s4, s4, -1", "    j 1b",
        "9:  li t0, PLATFORM_FINISHER_BASE", "    li t1, FINISHER_PASS", "    sw t1, 0(t0)",
        "8:  j 8b",
        "",
        "putc: li t0, PLATFORM_UART0_BASE", "    sb a0, 0(t0)", "    ret",
        "nib: andi a0, a0, 0x1f   // fflags: two hex digits", "    mv t6, ra",
        "    mv a2, a0", "    srli a0, a2, 4", "    call digit", "    andi a0, a2, 15",
        "    call digit", "    mv ra, t6", "    ret",
        "digit: li t0, 10", "    blt a0, t0, 2f", "    addi a0, a0, 'a' - 10 - '0'",
        "2:  addi a0, a0, '0'", "    j putc",
        "hex32: mv t6, ra", "    mv a2, a0", "    li a3, 28",
        "3:  srl a0, a2, a3", "    andi a0, a0, 15", "    call digit", "    addi a3, a3, -4",
        "    bgez a3, 3b", "    mv ra, t6", "    ret",
    ]
    if xlen == 64:
        out += ["hex_out: mv t6, ra", "    mv a2, a0", "    li a3, 60",
                "4:  srl a0, a2, a3", "    andi a0, a0, 15", "    call digit",
                "    addi a3, a3, -4", "    bgez a3, 4b", "    mv ra, t6", "    ret"]
    out += [
        "    // a trapped case: record mcause (low byte) and skip the instruction",
        "    .balign 4",
        "trap: csrr t0, mcause", "    ori t0, t0, 0x100", "    sw t0, 24(s1)",
        "    csrr t0, mepc", "    addi t0, t0, 4", "    csrw mepc, t0", "    mret",
    ]
    data += ["mark:", f"    .quad {MARK_F:#x}, {MARK_X & ((1 << xlen) - 1):#x}",
             "    .section .bss", "    .balign 8", "results:", f"    .space {32 * len(cases)}"]
    return "\n".join(line for line in out if line) + "\n" + "\n".join(data) + "\n"
