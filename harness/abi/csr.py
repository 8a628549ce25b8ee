"""CSR numbers, fields, privilege levels and trap causes, as data.

This module is the single source of truth for everything that names a CSR or one of
its bits: trap delivery (the native core's `csr_gen.h` is generated from it), the
inspectors, and the GDB target description. Names and numbers follow the RISC-V
privileged specification v1.12 (chapters 2, 3 and 4); cause names follow QEMU's
`-d int` output so a privlab trace and a QEMU log read the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "CSR_FIELDS",
    "EXCEPTION_NAMES",
    "INTERRUPT_NAMES",
    "MCONTROL_FIELDS",
    "PMPCFG_FIELDS",
    "SSTATUS_MASK",
    "Csr",
    "Exc",
    "Field",
    "Irq",
    "PmpMode",
    "Priv",
    "cause_name",
    "csr_fields",
    "decode_cause",
    "encode_cause",
]


class Priv(IntEnum):
    """Privilege levels, with the encoding of mstatus.MPP and Unicorn's PRIV register."""

    U = 0
    S = 1
    M = 3

    @property
    def letter(self) -> str:
        return self.name


class Csr(IntEnum):
    """CSR addresses (privileged spec v1.12, tables 2.2 to 2.5)."""

    # Floating point (unprivileged spec)
    FFLAGS = 0x001
    FRM = 0x002
    FCSR = 0x003
    # Unprivileged counters
    CYCLE = 0xC00
    TIME = 0xC01
    INSTRET = 0xC02
    HPMCOUNTER3 = 0xC03     # first of hpmcounter3..31
    CYCLEH = 0xC80
    TIMEH = 0xC81
    INSTRETH = 0xC82
    HPMCOUNTER3H = 0xC83
    # Supervisor
    SSTATUS = 0x100
    SIE = 0x104
    STVEC = 0x105
    SCOUNTEREN = 0x106
    SENVCFG = 0x10A
    SSCRATCH = 0x140
    SEPC = 0x141
    SCAUSE = 0x142
    STVAL = 0x143
    STIMECMP = 0x14D        # Sstc
    STIMECMPH = 0x15D
    SIP = 0x144
    SATP = 0x180
    # Machine information
    MVENDORID = 0xF11
    MARCHID = 0xF12
    MIMPID = 0xF13
    MHARTID = 0xF14
    MCONFIGPTR = 0xF15
    # Machine trap setup and handling
    MSTATUS = 0x300
    MISA = 0x301
    MEDELEG = 0x302
    MIDELEG = 0x303
    MIE = 0x304
    MTVEC = 0x305
    MCOUNTEREN = 0x306
    MENVCFG = 0x30A
    MSTATUSH = 0x310
    MENVCFGH = 0x31A
    MCOUNTINHIBIT = 0x320
    MHPMEVENT3 = 0x323      # first of mhpmevent3..31
    MSCRATCH = 0x340
    MEPC = 0x341
    MCAUSE = 0x342
    MTVAL = 0x343
    MIP = 0x344
    # Memory protection (first of each bank; pmpcfg0..15, pmpaddr0..63 follow)
    PMPCFG0 = 0x3A0
    PMPADDR0 = 0x3B0
    # Debug triggers (Sdtrig): tselect picks the trigger tdata1..3 show
    TSELECT = 0x7A0
    TDATA1 = 0x7A1
    TDATA2 = 0x7A2
    TDATA3 = 0x7A3
    TINFO = 0x7A4
    # Machine counters (hpm: the first of each bank of 29, 3..31)
    MCYCLE = 0xB00
    MINSTRET = 0xB02
    MHPMCOUNTER3 = 0xB03
    MCYCLEH = 0xB80
    MINSTRETH = 0xB82
    MHPMCOUNTER3H = 0xB83

    @property
    def level(self) -> Priv:
        """Lowest privilege that may access this CSR: address bits [9:8]."""
        level = (self >> 8) & 3
        return Priv.M if level >= 2 else Priv(level)

    @property
    def read_only(self) -> bool:
        """Address bits [11:10] == 0b11 mark a read-only CSR."""
        return (self >> 10) & 3 == 3


class Exc(IntEnum):
    """Synchronous exception codes (xcause with the interrupt bit clear), table 3.6,
    named as QEMU's `-d int` names them: `Exc.USER_ECALL` is "user_ecall" in every
    view and CAUSE_USER_ECALL in C (riscv_gen.h), one spelling to grep for."""

    MISALIGNED_FETCH = 0
    FAULT_FETCH = 1
    ILLEGAL_INSTRUCTION = 2
    BREAKPOINT = 3
    MISALIGNED_LOAD = 4
    FAULT_LOAD = 5
    MISALIGNED_STORE = 6
    FAULT_STORE = 7
    USER_ECALL = 8
    SUPERVISOR_ECALL = 9
    MACHINE_ECALL = 11
    EXEC_PAGE_FAULT = 12
    LOAD_PAGE_FAULT = 13
    STORE_PAGE_FAULT = 15


class Irq(IntEnum):
    """Interrupt codes (xcause with the interrupt bit set); bit n of mip/mie is code n.
    Named as QEMU names them too: `Irq.S_TIMER` is "s_timer", CAUSE_IRQ_S_TIMER in C."""

    S_SOFTWARE = 1
    M_SOFTWARE = 3
    S_TIMER = 5
    M_TIMER = 7
    S_EXTERNAL = 9
    M_EXTERNAL = 11


# Codes the spec gives to the hypervisor extension, which privlab's harts lack: named
# for a view that meets one, never raised.
_HYPERVISOR_EXCEPTIONS = {10: "virtual_supervisor_ecall"}
_OTHER_INTERRUPTS = {0: "u_software", 2: "vs_software", 4: "u_timer", 6: "vs_timer",
                     8: "u_external", 10: "vs_external"}

def _names(codes: type[IntEnum], others: dict[int, str]) -> dict[int, str]:
    named: dict[int, str] = {int(c): c.name.lower() for c in codes}
    return dict(sorted({**named, **others}.items()))


EXCEPTION_NAMES: dict[int, str] = _names(Exc, _HYPERVISOR_EXCEPTIONS)
INTERRUPT_NAMES: dict[int, str] = _names(Irq, _OTHER_INTERRUPTS)


def cause_name(interrupt: bool, code: int) -> str:
    """QEMU's name for a cause, or ``reserved_<code>``."""
    table = INTERRUPT_NAMES if interrupt else EXCEPTION_NAMES
    return table.get(code, f"reserved_{code}")


def encode_cause(interrupt: bool, code: int, xlen: int) -> int:
    """The raw xcause value: the interrupt flag is the top bit (bit XLEN-1)."""
    return (int(interrupt) << (xlen - 1)) | code


def decode_cause(cause: int, xlen: int) -> tuple[bool, int]:
    """Split a raw xcause into (interrupt, code)."""
    top = 1 << (xlen - 1)
    return bool(cause & top), cause & (top - 1)


@dataclass(frozen=True)
class Field:
    """One bit field of a CSR. `lsb` < 0 counts from the top: -1 is bit XLEN-1."""

    name: str
    lsb: int
    width: int = 1
    doc: str = ""
    xlen: int | None = None  # the field exists only for this XLEN

    def position(self, xlen: int) -> int:
        return self.lsb if self.lsb >= 0 else xlen + self.lsb

    def mask(self, xlen: int) -> int:
        return ((1 << self.width) - 1) << self.position(xlen)

    def extract(self, value: int, xlen: int) -> int:
        return (value >> self.position(xlen)) & ((1 << self.width) - 1)

    def insert(self, value: int, field_value: int, xlen: int) -> int:
        m = self.mask(xlen)
        return (value & ~m) | ((field_value << self.position(xlen)) & m)


_STATUS_FIELDS: tuple[Field, ...] = (
    Field("SIE", 1, doc="S-mode interrupts enabled"),
    Field("MIE", 3, doc="M-mode interrupts enabled"),
    Field("SPIE", 5, doc="SIE before the last trap into S"),
    Field("UBE", 6, doc="U-mode data accesses are big-endian"),
    Field("MPIE", 7, doc="MIE before the last trap into M"),
    Field("SPP", 8, doc="privilege before the last trap into S (0 U, 1 S)"),
    Field("VS", 9, 2, doc="vector unit state"),
    Field("MPP", 11, 2, doc="privilege before the last trap into M"),
    Field("FS", 13, 2, doc="floating-point unit state (0 off)"),
    Field("XS", 15, 2, doc="other extensions' state"),
    Field("MPRV", 17, doc="M-mode loads/stores translate as MPP"),
    Field("SUM", 18, doc="S-mode may access U pages"),
    Field("MXR", 19, doc="loads from executable pages succeed"),
    Field("TVM", 20, doc="trap S-mode satp/sfence.vma"),
    Field("TW", 21, doc="trap wfi below M"),
    Field("TSR", 22, doc="trap sret in S"),
    Field("UXL", 32, 2, doc="U-mode XLEN", xlen=64),
    Field("SXL", 34, 2, doc="S-mode XLEN", xlen=64),
    Field("SBE", 36, doc="S-mode data big-endian", xlen=64),
    Field("MBE", 37, doc="M-mode data big-endian", xlen=64),
    Field("SD", -1, doc="some dirty state (FS/VS/XS)"),
)

_SSTATUS_NAMES = ("SIE", "SPIE", "UBE", "SPP", "VS", "FS", "XS", "SUM", "MXR", "UXL", "SD")


def _interrupt_fields(levels: str) -> tuple[Field, ...]:
    names = {1: "SSI", 3: "MSI", 5: "STI", 7: "MTI", 9: "SEI", 11: "MEI"}
    docs = {"SI": "software", "TI": "timer", "EI": "external"}
    return tuple(
        Field(name, bit, doc=f"{name[0]}-mode {docs[name[1:]]} interrupt")
        for bit, name in names.items()
        if name[0] in levels
    )


def _exception_fields() -> tuple[Field, ...]:
    return tuple(Field(EXCEPTION_NAMES[code], int(code)) for code in Exc)


_TVEC_FIELDS = (
    Field("MODE", 0, 2, doc="0 direct, 1 vectored"),
    Field("BASE", 2, 62, doc="trap vector base >> 2"),
)
_CAUSE_FIELDS = (
    Field("CODE", 0, 63, doc="exception or interrupt code"),
    Field("INTERRUPT", -1, doc="1 for an interrupt"),
)
MCONTROL_FIELDS: tuple[Field, ...] = (
    Field("LOAD", 0, doc="match the address of loads"),
    Field("STORE", 1, doc="match the address of stores"),
    Field("EXECUTE", 2, doc="match the address of instructions executed"),
    Field("U", 3, doc="fire in U-mode"),
    Field("S", 4, doc="fire in S-mode"),
    Field("M", 6, doc="fire in M-mode"),
    Field("MATCH", 7, 4, doc="0: address equals tdata2"),
    Field("CHAIN", 11),
    Field("ACTION", 12, 4, doc="0: breakpoint exception"),
    Field("SIZELO", 16, 2, doc="access size (mcontrol, type 2)"),
    Field("TIMING", 18),
    Field("SELECT", 19),
    Field("HIT", 20),
    Field("SIZEHI", 21, 2, doc="access size, high bits (RV64)", xlen=64),
    Field("DMODE", -5, doc="only debug mode may write this trigger"),
    Field("TYPE", -4, 4, doc="2 mcontrol, 6 mcontrol6, 15 none"),
)
"""tdata1 as an address/data match trigger (Sdtrig's mcontrol, type 2). Its type 6
(mcontrol6) shares LOAD..ACTION and TYPE and keeps its SIZE at 16-19."""

_ENVCFG_FIELDS = (
    Field("FIOM", 0, doc="fence of I/O implies memory"),
    Field("CBIE", 4, 2, doc="cbo.inval enable"),
    Field("CBCFE", 6, doc="cbo.clean/flush enable"),
    Field("CBZE", 7, doc="cbo.zero enable"),
    Field("STCE", 63, doc="Sstc: stimecmp drives STIP (menvcfgh bit 31 on RV32)", xlen=64),
)

_COUNTEREN_FIELDS = (
    Field("CY", 0, doc="cycle readable below"),
    Field("TM", 1, doc="time readable below"),
    Field("IR", 2, doc="instret readable below"),
)

CSR_FIELDS: dict[Csr, tuple[Field, ...]] = {
    Csr.MSTATUS: _STATUS_FIELDS,
    Csr.SSTATUS: tuple(f for f in _STATUS_FIELDS if f.name in _SSTATUS_NAMES),
    Csr.MIE: _interrupt_fields("MS"),
    Csr.MIP: _interrupt_fields("MS"),
    Csr.SIE: _interrupt_fields("S"),
    Csr.SIP: _interrupt_fields("S"),
    Csr.MIDELEG: _interrupt_fields("S"),
    Csr.MEDELEG: _exception_fields(),
    Csr.MTVEC: _TVEC_FIELDS,
    Csr.STVEC: _TVEC_FIELDS,
    Csr.MCAUSE: _CAUSE_FIELDS,
    Csr.SCAUSE: _CAUSE_FIELDS,
    Csr.MCOUNTEREN: _COUNTEREN_FIELDS,
    Csr.SCOUNTEREN: _COUNTEREN_FIELDS,
    Csr.TDATA1: MCONTROL_FIELDS,
    Csr.MENVCFG: _ENVCFG_FIELDS,
}

class PmpMode(IntEnum):
    """pmpcfg.A: how a PMP entry's address register is read (spec 3.7.1)."""

    OFF = 0
    TOR = 1      # top of range: from the previous entry's address to this one's
    NA4 = 2      # naturally aligned four bytes
    NAPOT = 3    # naturally aligned power of two, size encoded in the low bits


PMPCFG_FIELDS: tuple[Field, ...] = (
    Field("R", 0, doc="readable"),
    Field("W", 1, doc="writable"),
    Field("X", 2, doc="executable"),
    Field("A", 3, 2, doc="address matching mode (a PmpMode)"),
    Field("L", 7, doc="locked: applies to M-mode too, until reset"),
)
"""The fields of one PMP entry's byte in pmpcfgN."""

_SATP_FIELDS = {
    64: (
        Field("PPN", 0, 44, doc="root page table physical page number"),
        Field("ASID", 44, 16, doc="address-space identifier"),
        Field("MODE", 60, 4, doc="0 bare, 8 Sv39, 9 Sv48"),
    ),
    32: (
        Field("PPN", 0, 22, doc="root page table physical page number"),
        Field("ASID", 22, 9, doc="address-space identifier"),
        Field("MODE", 31, 1, doc="0 bare, 1 Sv32"),
    ),
}


def csr_fields(csr: Csr, xlen: int) -> tuple[Field, ...]:
    """The fields of `csr` that exist at this XLEN, widths clipped to XLEN."""
    if csr == Csr.SATP:
        return _SATP_FIELDS[xlen]
    out = []
    for f in CSR_FIELDS.get(csr, ()):
        if f.xlen not in (None, xlen):
            continue
        if f.lsb >= 0 and f.lsb + f.width > xlen - (1 if csr in _TOP_BIT_CSRS else 0):
            f = Field(f.name, f.lsb, xlen - f.lsb - (1 if csr in _TOP_BIT_CSRS else 0), f.doc)
        out.append(f)
    return tuple(out)


_TOP_BIT_CSRS = frozenset({Csr.MCAUSE, Csr.SCAUSE})


def _status_mask(names: tuple[str, ...], xlen: int) -> int:
    mask = 0
    for f in _STATUS_FIELDS:
        if f.name in names and f.xlen in (None, xlen):
            mask |= f.mask(xlen)
    return mask


SSTATUS_MASK: dict[int, int] = {xlen: _status_mask(_SSTATUS_NAMES, xlen) for xlen in (32, 64)}
"""Bits of mstatus that sstatus shows (spec 4.1.1), per XLEN."""
