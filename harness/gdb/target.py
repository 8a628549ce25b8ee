"""What gdb sees: the register file and the target description XML.

The XML is generated, never hand-written: integer registers and pc in the standard
``org.gnu.gdb.riscv.cpu`` feature, every CSR of harness/abi/csr.py that this hart
implements, except the floating-point ones, in ``org.gnu.gdb.riscv.csr`` (with the
bit fields of harness/abi/csr.py as gdb flags types, so ``p $mstatus`` names the bits
that are set), and the privilege level as the ``priv`` register of
``org.gnu.gdb.riscv.virtual``, as QEMU does.

Register numbers (the ``p``/``P`` packets) follow gdb's own RISC-V numbering: x0..x31
are 0..31, pc is 32, CSR n is 65 + n and priv is 65 + 4096. The ``g`` packet carries
x0..x31 and pc; gdb fetches the rest one by one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from xml.sax.saxutils import quoteattr

from ..abi.csr import Csr, Field, csr_fields
from ..abi.registers import ABI_NAMES, FRAME_POINTER

__all__ = [
    "CSR_BASE",
    "GDB_REGISTER_NAMES",
    "PC_REGNUM",
    "PRIV_REGNUM",
    "RegKind",
    "Register",
    "TargetDescription",
    "csr_candidates",
]

# gdb's org.gnu.gdb.riscv.cpu feature names x8 `fp`, not `s0`.
GDB_REGISTER_NAMES = tuple("fp" if n == FRAME_POINTER else name
                           for n, name in enumerate(ABI_NAMES))
PC_REGNUM = 32
CSR_BASE = 65
CSR_COUNT = 4096
PRIV_REGNUM = CSR_BASE + CSR_COUNT
_POINTERS = {"ra": "code_ptr", "sp": "data_ptr", "gp": "data_ptr", "tp": "data_ptr"}
# Trap vectors and return addresses print as code (gdb names the symbol); causes as
# plain numbers (their one field is the number itself). Other CSRs with fields in
# harness/abi/csr.py get a flags type; the rest are unsigned numbers (gdb's "int" would
# print an interrupt's cause, or a RAM address in mscratch on RV32, as negative).
_CODE_PTR_CSRS = frozenset({Csr.MEPC, Csr.SEPC, Csr.MTVEC, Csr.STVEC})
_PLAIN_CSRS = frozenset({Csr.MCAUSE, Csr.SCAUSE})
# The floating-point CSRs go with the f registers, which are not described (the teaching
# kernel has no FPU state); with mstatus.FS off the hart cannot read them either.
_FLOAT_CSRS = frozenset({Csr.FFLAGS, Csr.FRM, Csr.FCSR})
PMP_CFG_COUNT = 16
PMP_ADDR_COUNT = 64


class RegKind(Enum):
    GPR = "gpr"
    PC = "pc"
    CSR = "csr"
    PRIV = "priv"


@dataclass(frozen=True)
class Register:
    """A register as gdb's target description numbers it: an x register, a CSR, pc or the
    privilege level."""
    name: str
    regnum: int
    kind: RegKind
    index: int          # x index, CSR number, or 0
    bits: int
    type: str
    fields: tuple[Field, ...] = ()


def _high_halves() -> frozenset[int]:
    """CSRs that are the upper half of another one (cycleh of cycle ...): RV32 only."""
    names = {c.name for c in Csr}
    return frozenset(int(c) for c in Csr if c.name.endswith("H") and c.name[:-1] in names)


def csr_candidates(xlen: int) -> list[tuple[str, int]]:
    """(name, number) of every CSR harness/abi/csr.py names that can exist at this XLEN,
    PMP banks expanded from their first register."""
    high = _high_halves()
    out: list[tuple[str, int]] = []
    for c in Csr:
        if xlen == 64 and int(c) in high:
            continue
        if c in (Csr.PMPCFG0, Csr.PMPADDR0) or c in _FLOAT_CSRS:
            continue
        out.append((c.name.lower(), int(c)))
    # pmpcfg1 and pmpcfg3 ... exist only on RV32 (spec 3.7.1)
    out += [(f"pmpcfg{i}", int(Csr.PMPCFG0) + i) for i in range(PMP_CFG_COUNT)
            if xlen == 32 or i % 2 == 0]
    out += [(f"pmpaddr{i}", int(Csr.PMPADDR0) + i) for i in range(PMP_ADDR_COUNT)]
    return sorted(out, key=lambda t: t[1])


def _csr_fields(number: int, xlen: int) -> tuple[Field, ...]:
    try:
        csr = Csr(number)
    except ValueError:
        return ()
    if csr in _CODE_PTR_CSRS or csr in _PLAIN_CSRS:
        return ()
    return csr_fields(csr, xlen)


class TargetDescription:
    """The registers of an `xlen`-bit hart whose implemented CSRs satisfy `has_csr`."""

    def __init__(self, xlen: int, has_csr: Callable[[int], bool]) -> None:
        self.xlen = xlen
        self.bytes = xlen // 8
        regs = [Register(name, i, RegKind.GPR, i, xlen, _POINTERS.get(name, "int"))
                for i, name in enumerate(GDB_REGISTER_NAMES)]
        regs.append(Register("pc", PC_REGNUM, RegKind.PC, 0, xlen, "code_ptr"))
        for name, number in csr_candidates(xlen):
            if not has_csr(number):
                continue
            fields = _csr_fields(number, xlen)
            kind = ("code_ptr" if number in _CODE_PTR_CSRS
                    else f"{name}_bits" if fields else f"uint{xlen}")
            regs.append(Register(name, CSR_BASE + number, RegKind.CSR, number, xlen, kind,
                                 fields))
        regs.append(Register("priv", PRIV_REGNUM, RegKind.PRIV, 0, xlen, "int"))
        self.registers: tuple[Register, ...] = tuple(regs)
        self.by_number = {r.regnum: r for r in regs}
        self.by_name = {r.name: r for r in regs}
        self.g_registers = tuple(r for r in regs if r.kind in (RegKind.GPR, RegKind.PC))

    @property
    def architecture(self) -> str:
        return f"riscv:rv{self.xlen}"

    def csrs(self) -> Iterable[Register]:
        return (r for r in self.registers if r.kind is RegKind.CSR)

    def xml(self) -> str:
        out = ['<?xml version="1.0"?>',
               '<!DOCTYPE target SYSTEM "gdb-target.dtd">',
               "<target>",
               f"<architecture>{self.architecture}</architecture>",
               "<osabi>none</osabi>",
               '<feature name="org.gnu.gdb.riscv.cpu">']
        out += [self._reg(r) for r in self.g_registers]
        out.append("</feature>")
        out.append('<feature name="org.gnu.gdb.riscv.csr">')
        for r in self.csrs():
            if r.fields and r.type.endswith("_bits"):
                out.append(self._flags(r))
            out.append(self._reg(r, group="csr"))
        out.append("</feature>")
        out.append('<feature name="org.gnu.gdb.riscv.virtual">')
        out.append(self._reg(self.by_number[PRIV_REGNUM], group="system"))
        out.append("</feature>")
        out.append("</target>")
        return "\n".join(out) + "\n"

    @staticmethod
    def _reg(r: Register, group: str | None = None) -> str:
        extra = f" group={quoteattr(group)}" if group else ""
        return (f"<reg name={quoteattr(r.name)} bitsize=\"{r.bits}\" regnum=\"{r.regnum}\" "
                f"type={quoteattr(r.type)}{extra}/>")

    def _flags(self, r: Register) -> str:
        lines = [f"<flags id={quoteattr(r.type)} size=\"{self.bytes}\">"]
        for f in r.fields:
            lsb = f.position(self.xlen)
            msb = lsb + f.width - 1
            if msb >= self.xlen:
                continue
            lines.append(f"  <field name={quoteattr(f.name)} start=\"{lsb}\" end=\"{msb}\"/>")
        lines.append("</flags>")
        return "\n".join(lines)
