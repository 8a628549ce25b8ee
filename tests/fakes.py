"""Synthetic guest state for golden tests: physical memory holding hand-built page
tables, and event logs holding hand-built trap/xRET records."""

from __future__ import annotations

from privlab.abi.csr import Priv
from privlab.errors import GuestError
from privlab.machine.events import FIELD_NAMES, RECORD, EventLog
from privlab.native import EventKind

RAM_BASE = 0x8000_0000
_I = {n: i for i, n in enumerate(FIELD_NAMES)}


class FakeMemory:
    """Sparse physical memory: pages of zeros until written; outside RAM raises."""

    def __init__(self, base: int = RAM_BASE, size: int = 1 << 27) -> None:
        self.base, self.size = base, size
        self.pages: dict[int, bytearray] = {}

    def _page(self, pa: int) -> bytearray:
        if not self.base <= pa < self.base + self.size:
            raise GuestError(f"physical range {pa:#x} is not RAM")
        return self.pages.setdefault(pa & ~0xFFF, bytearray(0x1000))

    def read(self, paddr: int, size: int) -> bytes:
        out = bytearray()
        while len(out) < size:
            pa = paddr + len(out)
            n = min(size - len(out), 0x1000 - (pa & 0xFFF))
            out += self._page(pa)[pa & 0xFFF:(pa & 0xFFF) + n]
        return bytes(out)

    def write(self, paddr: int, data: bytes) -> None:
        for i, b in enumerate(data):
            self._page(paddr + i)[(paddr + i) & 0xFFF] = b

    def pte(self, table: int, index: int, value: int, size: int = 8) -> None:
        self.write(table + index * size, value.to_bytes(size, "little"))


def pte(pa: int, flags: str) -> int:
    """A PTE for physical address pa with flags spelled 'vrwxugad' (any order)."""
    bits = {"v": 0, "r": 1, "w": 2, "x": 3, "u": 4, "g": 5, "a": 6, "d": 7}
    value = (pa >> 12) << 10
    for c in flags:
        value |= 1 << bits[c]
    return value


def record(kind: str, frm: Priv, to: Priv, *, instret: int, code: int = 0,
           interrupt: bool = False, epc: int = 0, pc: int = 0, tval: int = 0,
           satp: int = 0, args: tuple[int, ...] = (), hart: int = 0) -> bytes:
    f = [0] * len(FIELD_NAMES)
    f[_I["kind"]] = int(EventKind.TRAP if kind == "trap" else EventKind.XRET)
    if kind == "xret":
        code = int(frm == Priv.S)      # the record's code: 1 for sret, 0 for mret
    f[_I["instret"]], f[_I["code"]], f[_I["interrupt"]] = instret, code, int(interrupt)
    f[_I["cause"]] = ((1 << 63) if interrupt else 0) | code if kind == "trap" else 0
    f[_I["epc"]], f[_I["pc"]], f[_I["tval"]], f[_I["satp"]] = epc, pc, tval, satp
    f[_I["priv_from"]], f[_I["priv_to"]], f[_I["hart"]] = int(frm), int(to), hart
    for i, a in enumerate(args):
        f[_I[f"a{i}"]] = a
    return RECORD.pack(*f)


def log_of(records: list[bytes]) -> EventLog:
    log = EventLog()
    log.append_raw(b"".join(records))
    return log


__all__ = ["RAM_BASE", "FakeMemory", "log_of", "pte", "record"]


A_SATP, B_SATP, K_SATP = 0x8000000000087F36, 0x8000000000087F10, 0x8000000000087FFF
DBCN, TIME = 0x4442434E, 0x54494D45
TRAMPOLINE, USERVEC, USERRET_SRET = 0x3FFFFFF000, 0x3FFFFFF000, 0x3FFFFFF118
MTVEC = 0x8000_0228


def demo_events() -> list[bytes]:
    """A small invented run with everything the flow must handle: boot, a write with
    its nested SBI call, fork (parent and child returns), a yield that switches to the
    child, a page fault that kills it, a timer interrupt, and exit."""
    U, S, M = Priv.U, Priv.S, Priv.M
    A, B, K = A_SATP, B_SATP, K_SATP
    return [
        record("xret", M, S, instret=62, pc=0x8020_0000, epc=0x8000_0424),
        record("xret", S, U, instret=1000, pc=0x10000, epc=USERRET_SRET, satp=A, args=(1,)),
        record("trap", U, S, instret=1100, code=8, epc=0x10E5A, pc=USERVEC, satp=A,
               args=(1, 0x3FFFFFDD58, 14, 0, 0, 0, 0, 64)),
        record("trap", S, M, instret=1500, code=9, epc=0x8020_2470, pc=MTVEC, satp=K,
               args=(14, 0x8020_9068, 0, 0, 0, 0, 0, DBCN)),
        record("xret", M, S, instret=1600, pc=0x8020_2474, epc=0x8000_02BC, satp=K, args=(0,)),
        record("xret", S, U, instret=1700, pc=0x10E5E, epc=USERRET_SRET, satp=A, args=(14,)),
        record("trap", U, S, instret=1800, code=8, epc=0x10E80, pc=USERVEC, satp=A,
               args=(0, 0, 0, 0, 0, 0, 0, 220)),
        record("xret", S, U, instret=2500, pc=0x10E84, epc=USERRET_SRET, satp=A, args=(2,)),
        record("trap", U, S, instret=2600, code=8, epc=0x10E90, pc=USERVEC, satp=A,
               args=(0, 0, 0, 0, 0, 0, 0, 124)),
        record("xret", S, U, instret=2900, pc=0x10E84, epc=USERRET_SRET, satp=B, args=(0,)),
        record("trap", U, S, instret=3000, code=13, epc=0x10F00, pc=USERVEC, tval=0x8, satp=B),
        record("xret", S, U, instret=3400, pc=0x10E94, epc=USERRET_SRET, satp=A, args=(0,)),
        record("trap", U, S, instret=3500, code=5, interrupt=True, epc=0x10EA0, pc=USERVEC,
               satp=A),
        record("trap", S, M, instret=3550, code=9, epc=0x8020_2600, pc=MTVEC, satp=K,
               args=(123456, 0, 0, 0, 0, 0, 0, TIME)),
        record("xret", M, S, instret=3600, pc=0x8020_2604, epc=0x8000_02BC, satp=K, args=(0,)),
        record("xret", S, U, instret=3700, pc=0x10EA0, epc=USERRET_SRET, satp=A, args=(5,)),
        record("trap", U, S, instret=3800, code=8, epc=0x10E60, pc=USERVEC, satp=A,
               args=(0, 0, 0, 0, 0, 0, 0, 93)),
    ]
