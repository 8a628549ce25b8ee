"""Hart state as records: the CSRs and registers at one moment, decoded.

A `CsrSnapshot` is taken from a hart (`CsrSnapshot.take(hart)`) and compared with an
earlier one to find what a trap changed. Field names, positions and cause names come
from privlab/abi/csr.py; nothing here knows a bit position.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from ..abi.csr import Csr, Field, Priv, cause_name, csr_fields, decode_cause
from ..abi.registers import register_number
from ..machine.hart import Hart

__all__ = ["INSPECTED_CSRS", "CsrSnapshot", "CsrValue", "RegisterSnapshot"]

SUPERVISOR_CSRS = (Csr.SSTATUS, Csr.SIE, Csr.SIP, Csr.STVEC, Csr.SSCRATCH, Csr.SEPC,
                   Csr.SCAUSE, Csr.STVAL, Csr.SATP)
MACHINE_CSRS = (Csr.MSTATUS, Csr.MIE, Csr.MIP, Csr.MEDELEG, Csr.MIDELEG, Csr.MTVEC,
                Csr.MSCRATCH, Csr.MEPC, Csr.MCAUSE, Csr.MTVAL)
INSPECTED_CSRS = SUPERVISOR_CSRS + MACHINE_CSRS


@dataclass(frozen=True)
class CsrValue:
    """One CSR's value split into its fields."""

    csr: Csr
    value: int
    xlen: int

    @property
    def name(self) -> str:
        return self.csr.name.lower()

    @property
    def fields(self) -> tuple[tuple[Field, int], ...]:
        return tuple((f, f.extract(self.value, self.xlen)) for f in csr_fields(self.csr, self.xlen))

    def field(self, name: str) -> int:
        for f, v in self.fields:
            if f.name == name:
                return v
        raise KeyError(f"{self.name} has no field {name!r}")

    @property
    def cause(self) -> str | None:
        """For mcause/scause: the cause's name."""
        if self.csr not in (Csr.MCAUSE, Csr.SCAUSE):
            return None
        return cause_name(*decode_cause(self.value, self.xlen))

    def __rich__(self) -> Text:
        parts = [f"{f.name}={v}" for f, v in self.fields]
        return Text(f"{self.name} {self.value:#x} " + " ".join(parts))


@dataclass(frozen=True)
class CsrSnapshot:
    """The values of a set of CSRs on one hart at one moment."""
    xlen: int
    priv: Priv
    pc: int
    values: tuple[tuple[Csr, int], ...]

    @classmethod
    def take(cls, hart: Hart, csrs: tuple[Csr, ...] = INSPECTED_CSRS) -> CsrSnapshot:
        vals = []
        for c in csrs:
            try:
                vals.append((c, hart.csr(c)))
            except KeyError:
                continue
        return cls(hart.xlen, hart.priv, hart.pc, tuple(vals))

    def __getitem__(self, csr: Csr) -> CsrValue:
        for c, v in self.values:
            if c == csr:
                return CsrValue(c, v, self.xlen)
        raise KeyError(f"{csr.name.lower()} is not in this snapshot")

    def get(self, csr: Csr) -> CsrValue | None:
        try:
            return self[csr]
        except KeyError:
            return None

    def changed(self, other: CsrSnapshot) -> set[Csr]:
        """CSRs whose value differs from `other`."""
        before = dict(other.values)
        return {c for c, v in self.values if c in before and before[c] != v}


@dataclass(frozen=True)
class RegisterSnapshot:
    """The x registers and pc of one hart at one moment."""
    xlen: int
    priv: Priv
    pc: int
    x: tuple[int, ...]     # x0..x31

    @classmethod
    def take(cls, hart: Hart) -> RegisterSnapshot:
        return cls(hart.xlen, hart.priv, hart.pc, tuple(hart.x(i) for i in range(32)))

    def __getitem__(self, name: str) -> int:
        if name == "pc":
            return self.pc
        n = register_number(name)
        if n is not None:
            return self.x[n]
        raise KeyError(f"no register {name!r}")
