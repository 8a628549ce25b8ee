"""The structures of an ELF file, read with struct as the System V gABI lays them out:
the header, the program headers, the section headers and the symbol table, for both
classes and both byte orders.

One reader for the loader (harness/machine/loader.py: what a run places in RAM) and the
symbolizer (harness/kernelinfo/symbols.py: names for addresses). pyelftools, which the
inspectors keep for DWARF, costs 20 ms to import and walk a small ELF: a third of a
riscv-tests program's whole run, paid again for every ELF a course builds.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = ["EM_RISCV", "PT_LOAD", "SHN_UNDEF", "ElfError", "ProgramHeader", "RawElf", "Section",
           "Symbol"]

EM_RISCV = 243
PT_LOAD = 1
SHN_UNDEF = 0

# The ELF header after e_ident, a program header, a section header and a symbol, for
# each class (Elf32_* and Elf64_*), without the byte order.
_LAYOUT = {32: ("HHIIIIIHHHHHH", "IIIIIIII", "IIIIIIIIII", "IIIBBH"),
           64: ("HHIQQQIHHHHHH", "IIQQQQQQ", "IIQQQQIIQQ", "IBBHQQ")}
_CLASSES = {1: 32, 2: 64}                     # e_ident[EI_CLASS]
_ORDERS = {1: "<", 2: ">"}                    # e_ident[EI_DATA]


class ElfError(ValueError):
    """The file is truncated, or its headers point outside it."""


@dataclass(frozen=True)
class ProgramHeader:
    """A program header (segment): its type, flags, place in the file and in memory."""
    type: int
    flags: int
    offset: int
    vaddr: int
    paddr: int
    filesz: int
    memsz: int


@dataclass(frozen=True)
class Section:
    """A section header: its name, type, place in the file and linked section."""
    name: str
    type: int
    offset: int
    size: int
    link: int


@dataclass(frozen=True)
class Symbol:
    """A symbol table entry; `info & 0xF` is its type (STT_*)."""
    name: str
    value: int
    size: int
    info: int
    shndx: int


class RawElf:
    """An ELF image in memory. The constructor reads the header; the rest is read when
    asked for. Anything outside the file is an ElfError."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        try:
            cls, order = _CLASSES.get(data[4]), _ORDERS.get(data[5])
            if data[:4] != b"\x7fELF" or cls is None or order is None:
                raise ElfError(f"e_ident class {data[4]}, data {data[5]}")
            self._ehdr, self._phdr, self._shdr, self._sym = (
                struct.Struct(order + f) for f in _LAYOUT[cls])
            (_, self.machine, _, self.entry, self._phoff, self._shoff, _, _, self._phentsize,
             self._phnum, self._shentsize, self._shnum, self._shstrndx) = \
                self._ehdr.unpack_from(data, 16)
        except (IndexError, struct.error) as e:
            raise ElfError(f"the ELF header: {e}") from None
        self.xlen = cls

    def program_headers(self) -> list[ProgramHeader]:
        out = []
        for i in range(self._phnum):
            fields = self._unpack(self._phdr, self._phoff + i * self._phentsize, "a program header")
            if self.xlen == 64:
                p_type, flags, offset, vaddr, paddr, filesz, memsz, _ = fields
            else:
                p_type, offset, vaddr, paddr, filesz, memsz, flags, _ = fields
            out.append(ProgramHeader(p_type, flags, offset, vaddr, paddr, filesz, memsz))
        return out

    def sections(self) -> list[Section]:
        """Every section header, named. No section headers (a stripped image), or names
        kept by the extended numbering no ELF of a course uses (SHN_XINDEX): none."""
        if self._shoff == 0 or self._shnum == 0 or self._shstrndx >= self._shnum:
            return []
        raw = [self._unpack(self._shdr, self._shoff + i * self._shentsize, "a section header")
               for i in range(self._shnum)]
        names = raw[self._shstrndx]          # sh_name, sh_type, ..., offset [4], size [5]
        return [Section(self._string(names[4], names[5], s[0]), s[1], s[4], s[5], s[6])
                for s in raw]

    def section(self, name: str) -> Section | None:
        return next((s for s in self.sections() if s.name == name), None)

    def symbols(self) -> list[Symbol]:
        """The entries of `.symtab` in order, the null entry first; none without it."""
        table = self._symtab()
        if table is None:
            return []
        rows, strtab = table
        value, size, info, shndx = self._sym_fields
        return [Symbol(self._string(strtab.offset, strtab.size, row[0]), row[value], row[size],
                       row[info], row[shndx])
                for row in self._sym.iter_unpack(rows)]

    def defined_symbols(self) -> dict[str, int]:
        """Name -> value of each named symbol of `.symtab` defined in a section (not
        SHN_UNDEF), the first of a name winning: what `symbols()` gives, filtered,
        without a record per entry (a kernel's table is thousands of entries, most of
        them the assembler's `.L` labels, and a run reads it at every start)."""
        table = self._symtab()
        if table is None:
            return {}
        rows, strtab = table
        names = self.data[strtab.offset:strtab.offset + strtab.size]
        value_at, _, _, shndx_at = self._sym_fields
        out: dict[str, int] = {}
        for row in self._sym.iter_unpack(rows):
            at = row[0]
            if at and row[shndx_at] != SHN_UNDEF:
                end = names.find(b"\0", at)
                if end < 0:
                    raise ElfError(f"a name at {strtab.offset + at:#x} runs past its string "
                                   "table")
                name = names[at:end].decode("utf-8", "replace")
                if name not in out:
                    out[name] = row[value_at]
        return out

    @property
    def _sym_fields(self) -> tuple[int, int, int, int]:
        """Where a symbol's value, size, info and section index are in its row."""
        return (1, 2, 3, 5) if self.xlen == 32 else (4, 5, 1, 3)

    def _symtab(self) -> tuple[bytes, Section] | None:
        """`.symtab`'s whole rows and its string table's section, or None."""
        sections = self.sections()
        symtab = next((s for s in sections if s.name == ".symtab"), None)
        if symtab is None:
            return None
        if symtab.link >= len(sections):
            raise ElfError(f".symtab links section {symtab.link} of {len(sections)}")
        rows = self.data[symtab.offset:symtab.offset + symtab.size]
        if len(rows) < symtab.size:
            raise ElfError("the symbol table runs past the end of the file")
        return rows[:len(rows) - len(rows) % self._sym.size], sections[symtab.link]

    def _unpack(self, layout: struct.Struct, at: int, what: str) -> tuple[int, ...]:
        try:
            return layout.unpack_from(self.data, at)
        except struct.error:
            raise ElfError(f"{what} at {at:#x} is past the end of the file") from None

    def _string(self, table: int, size: int, at: int) -> str:
        """The NUL-terminated string at `at` in the string table at `table`."""
        end = self.data.find(b"\0", table + at, table + size)
        if end < 0:
            raise ElfError(f"a name at {table + at:#x} runs past its string table")
        return self.data[table + at:end].decode("utf-8", "replace")
