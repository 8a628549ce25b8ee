"""riscv_gen.h: the privileged spec's numbers for C and assembler, from privlab/abi.

One header for every C and assembler file of the project: the firmware, the kernel,
the user library, the conformance programs and benchmarks (one per architecture, in
the build's gen/ directory) and the native core (`render(None)`, inside
privlab_gen.h, for both XLENs). It holds only `#define NAME <integer>` lines, so `.S`
files can use it; the two name tables are initialiser macros hidden from assembler.

What it defines, each from its one Python definition:
- PRV_U/S/M: privilege levels (csr.Priv)
- CSR_<NAME>: CSR numbers (csr.Csr)
- MSTATUS_<F>, SSTATUS_<F> (masks), MSTATUS_<F>_SHIFT for multi-bit fields,
  MSTATUS_MPP_U/S/M (csr fields of mstatus and sstatus)
- IRQ_<NAME>: interrupt codes (csr.Irq); MIP_/MIE_/SIP_/SIE_<X>IP/<X>IE: their bits
- CAUSE_<NAME>: exception codes, named as QEMU's `-d int` names them (csr.EXCEPTION_NAMES)
- COUNTEREN_CY/TM/IR, PMP_R/W/X/L, PMP_A, PMP_A_SHIFT, PMP_A_<MODE> (csr fields)
- MCONTROL_* (tdata1 of an address match trigger; TYPE and DMODE per XLEN)
- PAGE_SHIFT, PAGE_SIZE, PTE_<F>, PTE_PPN_SHIFT, <SCHEME>_MODE/_LEVELS/_VPN_BITS (paging);
  PTE_COW, the kernel's own use of an RSW bit (paging.KERNEL_PTE_FIELDS)
- for one XLEN only: CAUSE_INTERRUPT, CAUSE_IRQ_<NAME>, MSTATUS_SD, SATP_MODE_SHIFT,
  SATP_MODE (this XLEN's paged mode, in place), SATP_PPN, SATP_ASID, PT_LEVELS,
  PT_INDEX_BITS
- EXCEPTION_NAMES_INIT, INTERRUPT_NAMES_INIT: `{[code] = "name", ...}` (C only)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .csr import (
    CSR_FIELDS,
    EXCEPTION_NAMES,
    INTERRUPT_NAMES,
    MCONTROL_FIELDS,
    PMPCFG_FIELDS,
    Csr,
    Exc,
    Field,
    Irq,
    PmpMode,
    Priv,
    csr_fields,
)
from .paging import (
    ALL_SCHEMES,
    KERNEL_PTE_FIELDS,
    PAGE_SHIFT,
    PAGE_SIZE,
    PTE_FIELDS,
    PTE_PPN_SHIFT,
    SCHEMES,
)

__all__ = ["render"]


def _num(name: str, value: int) -> str:
    """A code, shift or count: decimal."""
    return f"#define {name} {int(value)}"


def _mask(name: str, value: int) -> str:
    """A bit mask or an address-sized value: hexadecimal."""
    return f"#define {name} {value:#x}"


def _field_defines(prefix: str, fields: Iterable[Field], xlen: int) -> list[str]:
    out = []
    for f in fields:
        if f.lsb < 0:
            continue   # top-bit fields (SD) depend on XLEN: see _xlen_defines
        out.append(_mask(f"{prefix}_{f.name}", f.mask(xlen)))
        if f.width > 1:
            out.append(_num(f"{prefix}_{f.name}_SHIFT", f.position(xlen)))
    return out


def _interrupt_bits(csr: Csr, suffix: str) -> list[str]:
    # Fields are named SSI, MTI, ...: mip.SSIP, mie.SSIE, as the spec spells them.
    return [_mask(f"{csr.name}_{f.name}{suffix}", f.mask(64)) for f in csr_fields(csr, 64)]


def _neutral_defines(field_xlen: int) -> list[str]:
    status = csr_fields(Csr.MSTATUS, field_xlen)
    sstatus = csr_fields(Csr.SSTATUS, field_xlen)
    mpp = next(f for f in status if f.name == "MPP")
    out = ["/* Privilege levels, as mstatus.MPP encodes them. */"]
    out += [_num(f"PRV_{p.name}", p) for p in Priv]
    out += ["", "/* CSR numbers. */"]
    out += [f"#define CSR_{c.name} {int(c):#05x}" for c in Csr]
    out += ["", "/* mstatus and sstatus fields (masks; _SHIFT for multi-bit fields). */"]
    out += _field_defines("MSTATUS", status, field_xlen)
    out += [_mask(f"MSTATUS_MPP_{p.name}", mpp.insert(0, p, field_xlen)) for p in Priv]
    out += _field_defines("SSTATUS", sstatus, field_xlen)
    out += ["", "/* Interrupt codes; bit n of mip/mie (sip/sie) is interrupt code n. */"]
    out += [_num(f"IRQ_{i.name}", i) for i in Irq]
    out += _interrupt_bits(Csr.MIP, "P") + _interrupt_bits(Csr.MIE, "E")
    out += _interrupt_bits(Csr.SIP, "P") + _interrupt_bits(Csr.SIE, "E")
    out += ["", "/* Exception codes (xcause with the interrupt bit clear). */"]
    out += [_num(f"CAUSE_{EXCEPTION_NAMES[e].upper()}", e) for e in Exc]
    out += ["", "/* mcounteren/scounteren and one pmpcfg byte. */"]
    out += _field_defines("COUNTEREN", csr_fields(Csr.MCOUNTEREN, 64), 64)
    out += _field_defines("PMP", PMPCFG_FIELDS, 64)
    a_field = next(f for f in PMPCFG_FIELDS if f.name == "A")
    out += [_mask(f"PMP_A_{m.name}", a_field.insert(0, m, 64)) for m in PmpMode]
    out += ["", "/* menvcfg (RV64 layout; RV32's menvcfgh holds bits 63:32). */"]
    out += _field_defines("MENVCFG", CSR_FIELDS[Csr.MENVCFG], 64)
    out += ["", "/* tdata1 of an address match trigger (mcontrol); TYPE/DMODE: see RV32/RV64. */"]
    out += _field_defines("MCONTROL", (f for f in MCONTROL_FIELDS if f.lsb >= 0), 64)
    for f in MCONTROL_FIELDS:
        if f.lsb < 0:   # at bit XLEN - FROM_TOP, for the XLEN-neutral native core
            out += [_num(f"MCONTROL_{f.name}_FROM_TOP", -f.lsb),
                    _num(f"MCONTROL_{f.name}_WIDTH", f.width)]
    out += ["", "/* Pages and page-table entries (Sv32, Sv39, Sv48, Sv57). */"]
    out += [_num("PAGE_SHIFT", PAGE_SHIFT), _num("PAGE_SIZE", PAGE_SIZE)]
    out += _field_defines("PTE", PTE_FIELDS, 64)
    out += ["/* The kernel's software bits, inside RSW (the hart ignores them). */"]
    out += _field_defines("PTE", KERNEL_PTE_FIELDS, 64)
    out.append(_num("PTE_PPN_SHIFT", PTE_PPN_SHIFT))
    for scheme in ALL_SCHEMES:
        name = scheme.name.upper()
        out += [_num(f"{name}_MODE", scheme.satp_mode), _num(f"{name}_LEVELS", scheme.levels),
                _num(f"{name}_VPN_BITS", scheme.vpn_bits),
                _num(f"{name}_PTE_SIZE", scheme.pte_size),
                _num(f"{name}_PPN_BITS", scheme.ppn_bits)]
    for xlen in SCHEMES:                 # satp's fields per XLEN, for C that serves both
        satp = {f.name: f for f in csr_fields(Csr.SATP, xlen)}
        out += [_num(f"SATP{xlen}_MODE_SHIFT", satp["MODE"].position(xlen)),
                _num(f"SATP{xlen}_PPN_BITS", satp["PPN"].width)]
    return out


def _xlen_defines(xlen: int) -> list[str]:
    top = 1 << (xlen - 1)
    satp = {f.name: f for f in csr_fields(Csr.SATP, xlen)}
    scheme = SCHEMES[xlen]
    out = [f"/* RV{xlen} only. */", _mask("CAUSE_INTERRUPT", top)]
    out += [_mask(f"CAUSE_IRQ_{i.name}", top | i) for i in Irq]
    out.append(_mask("MSTATUS_SD", top))
    out += _field_defines("MCONTROL", (f for f in MCONTROL_FIELDS if f.lsb < 0), xlen)
    out += [_num("SATP_MODE_SHIFT", satp["MODE"].position(xlen)),
            _mask("SATP_MODE", satp["MODE"].insert(0, scheme.satp_mode, xlen)),
            _mask("SATP_ASID", satp["ASID"].mask(xlen)),
            _mask("SATP_PPN", satp["PPN"].mask(xlen)),
            _num("PT_LEVELS", scheme.levels), _num("PT_INDEX_BITS", scheme.vpn_bits)]
    return out


def _name_table(macro: str, names: dict[int, str], codes: Iterable[int]) -> str:
    entries = ", ".join(f'[{int(c)}] = "{names[c]}"' for c in codes)
    return f"#define {macro} {{{entries}}}"


def render(xlen: int | None, *, host: bool = False) -> str:
    """The header for one XLEN (a guest build), or XLEN-neutral (None: the native core,
    which serves both, gets RV64's fields and defines the top-bit constants per XLEN
    itself). `host`: for host C, every hexadecimal value carries `ull`, so a mask is
    64 bits wide whatever its value (assembler would reject the suffix)."""
    lines = ["/* Generated by harness/abi/spec_header.py from privlab/abi/csr.py and",
             " * harness/abi/paging.py: do not edit. */",
             "#ifndef RISCV_GEN_H", "#define RISCV_GEN_H", ""]
    lines += _neutral_defines(xlen or 64)
    if xlen is not None:
        lines += ["", *_xlen_defines(xlen)]
    lines += ["", "#ifndef __ASSEMBLER__",
              "/* QEMU's `-d int` names of each cause, for `static const char *t[] = ...`. */",
              _name_table("EXCEPTION_NAMES_INIT", EXCEPTION_NAMES, Exc),
              _name_table("INTERRUPT_NAMES_INIT", INTERRUPT_NAMES, Irq),
              "#endif", "", "#endif /* RISCV_GEN_H */", ""]
    text = "\n".join(lines)
    return re.sub(r"^(#define \w+ 0x[0-9a-f]+)$", r"\1ull", text, flags=re.M) if host else text
