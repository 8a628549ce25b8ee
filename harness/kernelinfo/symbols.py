"""Addresses to names: symbol+offset from the ELF symbol table, file:line from DWARF.

`Symbolizer` knows several images at once (firmware, kernel, user programs) and
aliases such as the trampoline page, which the kernel links at one address and maps
at another (the top virtual page).

What privlab reads of an image to name addresses is kept per file content in its
cache (`ElfTable`): the symbols whole, and each compilation unit's line table once a
lookup has needed it. Reading DWARF with pyelftools took about a tenth of a second of
every `privlab trace`; a table read back takes a millisecond. The ELF itself is opened
only for what the table lacks: a unit no lookup has needed yet, or the bytes the
disassembler shows (`ElfSymbols.code`).
"""

from __future__ import annotations

import bisect
import contextlib
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..build.cache import cache_root, content_key, read_pickle, write_pickle
from ..machine.elfread import PT_LOAD, SHN_UNDEF, RawElf
from ..paths import REPO_ROOT

__all__ = ["ElfSymbols", "Location", "Symbolizer"]

STT_NOTYPE, STT_OBJECT, STT_FUNC = 0, 1, 2
SHN_LORESERVE = 0xFF00
MAX_LABEL_DISTANCE = 0x10000  # a size-less label covers at most this much after it


def read_symtab(elf: RawElf) -> list[tuple[int, int, str, bool]]:
    """(address, size, name, is_function) of each named code or data symbol."""
    out = []
    for sym in elf.symbols():
        kind = sym.info & 0xF
        if kind not in (STT_NOTYPE, STT_OBJECT, STT_FUNC) or sym.shndx == SHN_UNDEF \
                or sym.shndx >= SHN_LORESERVE or not sym.name \
                or sym.name.startswith((".L", "$")):
            continue
        out.append((sym.value, sym.size, sym.name, kind == STT_FUNC))
    return out


@dataclass(frozen=True)
class Location:
    """Where an address is: the image, the symbol and offset, and the source line when
    known."""
    addr: int
    image: str | None = None
    symbol: str | None = None
    offset: int = 0
    file: str | None = None
    line: int | None = None

    @cached_property
    def name(self) -> str:
        """`symbol+0x1c`, or the bare hex address when no symbol covers it (made once:
        a trace names the same few locations on row after row)."""
        if self.symbol is None:
            return f"{self.addr:#x}"
        return self.symbol if self.offset == 0 else f"{self.symbol}+{self.offset:#x}"

    @property
    def source(self) -> str | None:
        return f"{self.file}:{self.line}" if self.file and self.line else None

    def __str__(self) -> str:
        return self.name + (f" ({self.source})" if self.source else "")


LineRow = tuple[str, int] | None      # (file, line); None: the end of a sequence
Lines = tuple[list[int], list[LineRow]]   # a unit's rows by address, and what they say
TABLE_FORMAT = "elf-table-v2"


@dataclass
class ElfTable:
    """What privlab has read of an ELF to name addresses, kept per file content: its
    class, its symbols (the preferred one first at each address), the first symbol of
    each name and its PT_LOAD ranges, read whole; and of its DWARF, what lookups have
    needed so far: .debug_aranges, the compilation units' pc ranges (read at the first
    address aranges do not cover: clang writes no aranges), and the line table of each
    unit an address was asked in. A lookup that needs more reads it and stores the
    table again, so one run pays for a unit once, and later runs not at all."""

    xlen: int
    syms: list[tuple[int, int, str, bool]]
    by_name: dict[str, tuple[int, int]]
    ranges: list[tuple[int, int]]
    dwarf: bool
    aranges: list[tuple[int, int, int]] = field(default_factory=list)  # lo, hi, unit
    units: list[tuple[int, int, int]] | None = None                   # lo, hi, unit
    lines: dict[int, Lines] = field(default_factory=dict)              # by unit offset

    @staticmethod
    def cache_path(path: Path) -> Path:
        """Where the table of a file with `path`'s bytes is kept (file names are shown
        relative to this checkout, so it is part of the key)."""
        return cache_root() / "symbols" / \
            f"{content_key([TABLE_FORMAT, str(REPO_ROOT), path])}.pickle"

    @classmethod
    def load(cls, path: Path, cached: Path) -> ElfTable:
        got = read_pickle(cached, ElfTable)
        if got is not None:
            return got
        out = cls.read(path)
        out.store(cached)
        return out

    def store(self, cached: Path) -> None:
        with contextlib.suppress(OSError):    # a read-only cache: read again next time
            write_pickle(cached, self)

    @classmethod
    def read(cls, path: Path) -> ElfTable:
        """The symbols and ranges of `path` (its DWARF is read as lookups need it)."""
        import io

        from elftools.elf.elffile import ELFFile

        data = path.read_bytes()
        raw = RawElf(data)               # headers and symbols; pyelftools for DWARF alone
        with io.BytesIO(data) as f:
            elf = ELFFile(f)
            syms = read_symtab(raw)
            by_name: dict[str, tuple[int, int]] = {}
            for addr, size, name, _ in syms:
                by_name.setdefault(name, (addr, size))
            names = {t[2] for t in syms}

            def marker(name: str) -> bool:
                """`x` or `x_start` where `x_end` exists: a region marker, not code's
                name."""
                return f"{name.removesuffix('_start')}_end" in names

            # At one address, prefer a function, a sized symbol, a name that is no region
            # marker (uservec over trampoline), then one that does not look reserved.
            syms.sort(key=lambda t: (t[0], not t[3], t[1] == 0, marker(t[2]),
                                     t[2].startswith("_")))
            ranges = [(ph.vaddr, ph.vaddr + ph.memsz)
                      for ph in raw.program_headers() if ph.type == PT_LOAD]
            dwarf = elf.has_dwarf_info()
            out = cls(raw.xlen, syms, by_name, ranges, dwarf)
            if dwarf:
                aranges = elf.get_dwarf_info().get_aranges()
                if aranges is not None:
                    out.aranges = [(e.begin_addr, e.begin_addr + e.length, e.info_offset)
                                   for e in aranges.entries]
            return out

    def arange_unit(self, addr: int) -> int | None:
        """The unit .debug_aranges puts `addr` in, if it does."""
        return next((unit for lo, hi, unit in self.aranges if lo <= addr < hi), None)

    def range_unit(self, addr: int) -> int | None:
        """The first unit whose pc range holds `addr` (`units` read)."""
        return next((unit for lo, hi, unit in self.units or () if lo <= addr < hi), None)


def _unit_ranges(dwarf: Any) -> list[tuple[int, int, int]]:
    """Each compilation unit's pc range from its top DIE's low and high pc."""
    out = []
    for cu in dwarf.iter_CUs():
        top = cu.get_top_DIE()
        lo = top.attributes.get("DW_AT_low_pc")
        hi = top.attributes.get("DW_AT_high_pc")
        if lo is None or hi is None:
            continue
        end = hi.value if hi.form == "DW_FORM_addr" else lo.value + hi.value
        out.append((lo.value, end, cu.cu_offset))
    return out


def _unit_lines(dwarf: Any, unit: int) -> Lines:
    """One unit's line-table rows by address (an end of sequence before a row at the
    same address)."""
    prog = dwarf.line_program_for_CU(dwarf.get_CU_at(unit))
    if prog is None:
        return [], []
    files = _file_names(prog)
    pairs: list[tuple[int, LineRow]] = []
    for entry in prog.get_entries():
        st = entry.state
        if st is None:
            continue
        pairs.append((st.address, None if st.end_sequence else (files.get(st.file, "?"),
                                                                st.line)))
    pairs.sort(key=lambda p: (p[0], p[1] is not None))
    return [a for a, _ in pairs], [r for _, r in pairs]


class ElfSymbols:
    """Symbols and line tables of one ELF file."""

    def __init__(self, path: Path, name: str | None = None) -> None:
        self.path = path
        self.name = name or path.stem
        self._cached = ElfTable.cache_path(path)
        self._table = ElfTable.load(path, self._cached)
        self.xlen = self._table.xlen
        self._syms = self._table.syms                 # addr, size, name, function
        self._addrs = [s[0] for s in self._syms]
        self.by_name = self._table.by_name
        self.ranges = self._table.ranges
        self._dwarf: Any | None = None
        self._file: Any | None = None
        self._contents: list[tuple[int, bytes]] | None = None

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            self._dwarf = None

    def _elf(self) -> Any:
        """The ELF, opened the first time a lookup needs what the table lacks."""
        from elftools.elf.elffile import ELFFile

        if self._file is None:
            self._file = self.path.open("rb")
        return ELFFile(self._file)

    def contains(self, addr: int) -> bool:
        return any(lo <= addr < hi for lo, hi in self.ranges)

    def code(self, addr: int, size: int) -> bytes | None:
        """The `size` bytes the image loads at `addr` (from its PT_LOAD segments'
        file contents), or None if they are not all in one segment's file part."""
        if self._contents is None:
            self._contents = [(s["p_vaddr"], s.data()) for s in self._elf().iter_segments()
                              if s["p_type"] == "PT_LOAD"]
        for start, data in self._contents:
            if start <= addr and addr + size <= start + len(data):
                return data[addr - start:addr - start + size]
        return None

    def symbol(self, addr: int) -> tuple[str, int] | None:
        """The symbol covering addr and the offset into it."""
        i = bisect.bisect_right(self._addrs, addr) - 1
        # Walk back over symbols at the same address to the preferred one.
        while i > 0 and self._addrs[i - 1] == self._addrs[i]:
            i -= 1
        if i < 0:
            return None
        start, size, name, _ = self._syms[i]
        if (size and addr < start + size) or (not size and addr - start < MAX_LABEL_DISTANCE):
            return name, addr - start
        return None

    def line(self, addr: int) -> tuple[str, int] | None:
        """The source line of `addr` in the line table of the unit it lies in (by
        .debug_aranges, else by the units' pc ranges): the last row at or before it,
        None past the end of its sequence."""
        table = self._table
        if not table.dwarf:
            return None
        unit = table.arange_unit(addr)
        if unit is None:
            if table.units is None:
                table.units = _unit_ranges(self._dwarf_info())
                table.store(self._cached)
            unit = table.range_unit(addr)
        if unit is None:
            return None
        lines = table.lines.get(unit)
        if lines is None:
            lines = table.lines[unit] = _unit_lines(self._dwarf_info(), unit)
            table.store(self._cached)
        addrs, rows = lines
        i = bisect.bisect_right(addrs, addr) - 1
        return rows[i] if i >= 0 else None

    def _dwarf_info(self) -> Any:
        if self._dwarf is None:
            self._dwarf = self._elf().get_dwarf_info()
        return self._dwarf


def _file_names(prog: Any) -> dict[int, str]:
    """Line-program file indexes to paths relative to the repository when possible."""
    header = prog.header
    dirs = [d.decode() if isinstance(d, bytes) else str(d)
            for d in header["include_directory"]]
    version = header["version"]
    out: dict[int, str] = {}
    for i, fe in enumerate(header["file_entry"]):
        name = fe.name.decode() if isinstance(fe.name, bytes) else str(fe.name)
        d = fe.dir_index
        if version >= 5:
            base = dirs[d] if d < len(dirs) else ""
        else:
            base = dirs[d - 1] if 0 < d <= len(dirs) else ""
        full = Path(base) / name if base else Path(name)
        if not full.is_absolute():       # recorded relative (harness/build's prefix map)
            shown = os.path.normpath(full)
        else:
            try:
                shown = str(full.resolve().relative_to(REPO_ROOT))
            except (ValueError, OSError):
                shown = str(full)
        out[i if version >= 5 else i + 1] = shown
    return out


@dataclass(frozen=True)
class Alias:
    """`size` bytes at virtual `va` are the image's bytes linked at `target`."""

    va: int
    size: int
    target: int


class Symbolizer:
    """Symbolizes addresses across the images of a system. Images given by path are
    opened the first time they are needed; `user` images (all linked at the same
    address) are searched only when named as `prefer`."""

    def __init__(self, images: list[ElfSymbols] | None = None) -> None:
        self.images: list[ElfSymbols] = list(images or [])
        self._lazy: dict[str, Path] = {}
        self._user: set[str] = set()
        self.aliases: list[Alias] = []

    def add(self, image: ElfSymbols) -> None:
        self.images.append(image)

    def add_path(self, name: str, path: Path, user: bool = False) -> None:
        self._lazy[name] = path
        if user:
            self._user.add(name)

    def add_alias(self, va: int, size: int, target: int) -> None:
        self.aliases.append(Alias(va, size, target))

    def image(self, name: str) -> ElfSymbols | None:
        if name in self._lazy:
            self.images.append(ElfSymbols(self._lazy.pop(name), name))
        return next((i for i in self.images if i.name == name), None)

    def _candidates(self, prefer: str | None) -> list[ElfSymbols]:
        for name in [n for n in self._lazy if n not in self._user]:
            self.image(name)
        first = self.image(prefer) if prefer else None
        rest = [i for i in self.images if i is not first and i.name not in self._user]
        return ([first] if first else []) + rest

    def lookup(self, addr: int, prefer: str | None = None) -> Location:
        """Where addr is: `prefer` names the image to try first (the user program
        whose address space it is, when several are linked at the same address)."""
        link = addr
        for a in self.aliases:
            if a.va <= addr < a.va + a.size:
                link = a.target + (addr - a.va)
        for img in self._candidates(prefer):
            if not img.contains(link):
                continue
            sym = img.symbol(link)
            line = img.line(link)
            return Location(addr, img.name, sym[0] if sym else None, sym[1] if sym else 0,
                            line[0] if line else None, line[1] if line else None)
        return Location(addr)

    def close(self) -> None:
        for i in self.images:
            i.close()
