"""Addresses in a failed run's diagnosis, named from the images the grader built:
symbol+offset from their symbol tables and file:line from their DWARF line tables,
written as `privlab inspect` writes a Location (`0x80208324 sys_getpid+0xa
kernel/sysproc.c:15`), so a student reads where the kernel was, not only a number.

A backtrace's return addresses are named by the call they return from, as a debugger
names a caller's frame. A call to a function that never returns (`panic`) can be the
last instruction of its caller; the address after it is then the first byte of the
next function, which is not in the call chain (named by itself, kerneltrap's frame
read `exception_name` or `virtio_disk_init`, depending on the layout). An address
that follows no call instruction is not a return address at all (a saved frame
pointer, a stray word): it is left out of the named backtrace, and said so; the
console lines still show everything the kernel printed.
"""

from __future__ import annotations

import re
import struct
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import DWARFError, ELFError

from ..kernelinfo.symbols import Location
from ..kernelinfo.system import SystemInfo
from ..mmu.walk import PhysicalMemory

__all__ = ["NamedBacktrace", "Namer", "backtrace_after", "call_before", "system_info"]

# What a kernel ELF the grader has never seen may throw while its tables are read.
_UNREADABLE = (OSError, ValueError, KeyError, IndexError, struct.error, ELFError, DWARFError)

SEPC = re.compile(r"\bsepc=(0x[0-9a-fA-F]+)")
KILLED = re.compile(r"\((?P<program>[^()\s]+)\) killed:")   # kernel/trap.c kill_for_fault


_INFOS: OrderedDict[tuple[object, ...], SystemInfo] = OrderedDict()
KEPT_INFOS = 4


def _stamp(path: Path) -> tuple[str, int, int, int]:
    try:
        st = path.stat()
    except OSError:
        return (str(path), 0, 0, 0)
    return (str(path), st.st_ino, st.st_size, st.st_mtime_ns)


def system_info(xlen: int, firmware: Path, kernel: Path,
                users: Mapping[str, Path]) -> SystemInfo:
    """The images' SystemInfo, shared by the runs of one test process: reading a
    kernel's DWARF the first time costs about a second, and every failure of a
    session names addresses of the same kernel. Keyed by the files' identity, so a
    kernel rebuilt at the same path is read afresh."""
    key = (xlen, _stamp(firmware), _stamp(kernel),
           tuple(sorted((name, _stamp(p)) for name, p in users.items())))
    info = _INFOS.get(key)
    if info is None:
        info = _INFOS[key] = SystemInfo(xlen, firmware=firmware, kernel=kernel,
                                        users=dict(users))
        while len(_INFOS) > KEPT_INFOS:
            _INFOS.popitem(last=False)[1].close()
    _INFOS.move_to_end(key)
    return info


def _is_call(insn: int) -> bool:
    """jal or jalr that links through ra (or t0, the alternate link register)."""
    opcode, rd, funct3 = insn & 0x7F, (insn >> 7) & 0x1F, (insn >> 12) & 0x7
    return rd in (1, 5) and (opcode == 0x6F or (opcode == 0x67 and funct3 == 0))


def _is_compressed_call(half: int, xlen: int) -> bool:
    """c.jalr (rs1 != 0), or c.jal, which exists only on RV32."""
    c_jalr = (half & 0xF07F) == 0x9002 and (half >> 7) & 0x1F != 0
    return c_jalr or (xlen == 32 and (half & 0xE003) == 0x2001)


def call_before(code: bytes, xlen: int) -> int | None:
    """`code` is the 4 bytes before a return address: how many of them the call
    instruction ending there takes (4, or 2 for a compressed call), None if no call
    ends there."""
    if len(code) != 4:
        return None
    word = int.from_bytes(code, "little")
    if word & 0x3 == 0x3 and _is_call(word):
        return 4
    half = word >> 16
    if half & 0x3 != 0x3 and _is_compressed_call(half, xlen):
        return 2
    return None


@dataclass(frozen=True)
class NamedBacktrace:
    """A printed backtrace: each return address's line, and those left out."""

    frames: list[str]
    left_out: list[int]


class Namer:
    """Names addresses of one graded run. `program` is the user program whose
    symbols name user addresses (None: do not name them, e.g. after an exec)."""

    def __init__(self, info: SystemInfo, memory: PhysicalMemory | None = None,
                 program: str | None = None) -> None:
        self.info = info
        self.memory = memory
        self.program = program

    def location(self, addr: int, satp: int | None = None,
                 program: str | None = None) -> Location:
        """Where `addr` is; the bare address if no image names it, or if the image's
        tables cannot be read (a diagnosis never fails for that)."""
        try:
            return self.info.symbolize(addr, satp, self.memory, program or self.program)
        except _UNREADABLE:
            return Location(addr)

    def where(self, addr: int, satp: int | None = None, program: str | None = None) -> str:
        """`0x80208324 sys_getpid+0xa kernel/sysproc.c:15`, as much of it as is known."""
        loc = self.location(addr, satp, program)
        return _shown(addr, loc, addr - loc.offset if loc.symbol else None)

    def return_address(self, ra: int) -> str | None:
        """A return address named by the call it returns from (the call's symbol, the
        offset of `ra` from that symbol, the call's file:line); None if no call
        instruction of a kernel or firmware image ends at `ra`."""
        here = self.location(ra - 1)
        if here.image is None:
            return None
        try:
            image = self.info.symbolizer.image(here.image)
            code = image.code(ra - 4, 4) if image is not None else None
        except _UNREADABLE:
            return None
        size = call_before(code or b"", self.info.xlen)
        if size is None:
            return None
        call = self.location(ra - size)
        return _shown(ra, call, call.addr - call.offset if call.symbol else None)

    def backtrace(self, addresses: Sequence[int]) -> NamedBacktrace:
        frames, left_out = [], []
        for ra in addresses:
            named = self.return_address(ra)
            if named is None:
                left_out.append(ra)
            else:
                frames.append(named)
        return NamedBacktrace(frames, left_out)

    def sepc_lines(self, lines: Sequence[str]) -> list[str]:
        """`sepc=0x... NAME FILE:LINE` for each `sepc=` the lines print (a kernel
        trap's panic, a killed process's line, which names its program), once each."""
        out: list[str] = []
        for line in lines:
            killed = KILLED.search(line)
            program = killed.group("program") if killed else None
            for m in SEPC.finditer(line):
                named = f"sepc={self.where(int(m.group(1), 16), program=program)}"
                if named not in out:
                    out.append(named)
        return out


def _shown(addr: int, loc: Location, start: int | None) -> str:
    parts = [f"{addr:#x}"]
    if loc.symbol is not None and start is not None:
        offset = addr - start
        parts.append(loc.symbol if offset == 0 else f"{loc.symbol}+{offset:#x}")
    if loc.source:
        parts.append(loc.source)
    return " ".join(parts)


_BACKTRACE_LINE = re.compile(r"^\s*(0x[0-9a-fA-F]+)\s*$")


def backtrace_after(lines: Sequence[str], start: int) -> list[int] | None:
    """The addresses under the first `backtrace:` line at or after `start` (what
    panic() prints, kernel/backtrace.c), or None if there is none."""
    head = next((i for i in range(start, len(lines)) if lines[i].strip() == "backtrace:"),
                None)
    if head is None:
        return None
    out = []
    for line in lines[head + 1:]:
        m = _BACKTRACE_LINE.match(line)
        if m is None:
            break
        out.append(int(m.group(1), 16))
    return out
