"""load_elf reads an ELF with struct (harness/machine/loader.py): for every ELF the build
makes, RV64 and RV32, it reads what pyelftools reads; a damaged ELF is one line of bad
input."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from machine.asm import build_asm
from privlab.build.images import Images
from privlab.errors import BadInput
from privlab.machine.elfread import SHN_UNDEF, RawElf
from privlab.machine.loader import ElfImage, Segment, load_elf


def _pyelftools(path: Path) -> ElfImage:
    """The reading the loader replaced: pyelftools' segments and `.symtab`."""
    data = path.read_bytes()
    elf = ELFFile(io.BytesIO(data))
    assert elf["e_machine"] == "EM_RISCV"
    segments = tuple(
        Segment(vaddr=s["p_vaddr"], paddr=s["p_paddr"],
                data=data[s["p_offset"]:s["p_offset"] + s["p_filesz"]], memsz=s["p_memsz"],
                flags=s["p_flags"], offset=s["p_offset"])
        for s in elf.iter_segments() if s["p_type"] == "PT_LOAD" and s["p_memsz"])
    symbols: dict[str, int] = {}
    symtab = elf.get_section_by_name(".symtab")
    for sym in symtab.iter_symbols() if symtab is not None else ():
        if sym.name and sym["st_shndx"] != "SHN_UNDEF":
            symbols.setdefault(sym.name, sym["st_value"])
    return ElfImage(path=path, xlen=elf.elfclass, entry=elf["e_entry"], segments=segments,
                    symbols=symbols)


def _elves(images: Images) -> list[Path]:
    return [images.firmware, images.kernel, *images.users.values()]


def _same(path: Path) -> None:
    ours, theirs = load_elf(path), _pyelftools(path)
    assert (ours.xlen, ours.entry, ours.segments) == (theirs.xlen, theirs.entry, theirs.segments)
    assert ours.symbols == theirs.symbols
    assert [s.offset for s in ours.segments] == [s.offset for s in theirs.segments]


def test_every_rv64_elf_reads_as_pyelftools_reads_it(images: Images) -> None:
    elves = _elves(images)
    assert len(elves) > 10
    for path in elves:
        _same(path)
    kernel = load_elf(images.kernel)
    assert kernel.xlen == 64 and len(kernel.symbols) > 100 and "main" in kernel.symbols


def test_the_loaders_symbols_are_the_symbol_tables_defined_names(images: Images) -> None:
    """defined_symbols (the loader's, at every start) filters what symbols() lists."""
    elf = RawElf(images.kernel.read_bytes())
    rows = elf.symbols()
    assert len(rows) > 1000                   # the assembler's labels among them
    first: dict[str, int] = {}
    for sym in rows:
        if sym.name and sym.shndx != SHN_UNDEF:
            first.setdefault(sym.name, sym.value)
    assert elf.defined_symbols() == first


def test_every_rv32_elf_reads_as_pyelftools_reads_it(images32: Images) -> None:
    for path in _elves(images32):
        _same(path)
    assert load_elf(images32.kernel).xlen == 32


def test_a_bare_program_and_its_tohost(tmp_path: Path) -> None:
    """riscv-tests' HTIF: the loader finds `tohost` among the symbols."""
    for arch in ("rv64", "rv32"):
        elf = build_asm("PASS\n.section .tohost, \"aw\"\n.globl tohost\ntohost: .dword 0\n",
                        arch)
        _same(elf)
        assert load_elf(elf).symbol("tohost") is not None


def _patched(elf: Path, tmp_path: Path, at: int, fmt: str, value: int) -> Path:
    data = bytearray(elf.read_bytes())
    struct.pack_into(fmt, data, at, value)
    out = tmp_path / f"patched-{at}.elf"
    out.write_bytes(bytes(data))
    return out


def test_an_elf_without_section_headers_has_no_symbols(tmp_path: Path) -> None:
    elf = build_asm("PASS")
    stripped = _patched(elf, tmp_path, 0x3C, "<H", 0)          # e_shnum = 0
    image = load_elf(stripped)
    assert image.symbols == {}
    assert image.segments == load_elf(elf).segments


@pytest.mark.parametrize(("at", "fmt", "value", "says"), [
    (4, "<B", 3, "truncated or corrupt ELF (e_ident class 3, data 1)"),       # EI_CLASS
    (5, "<B", 0, "truncated or corrupt ELF (e_ident class 2, data 0)"),       # EI_DATA
    (0x12, "<H", 62, "ELF for EM_X86_64, not RISC-V"),                         # e_machine
    (0x12, "<H", 9999, "ELF for machine 9999, not RISC-V"),
    (0x20, "<Q", 1 << 40, "truncated or corrupt ELF"),                         # e_phoff
    (0x28, "<Q", 1 << 40, "truncated or corrupt ELF"),                         # e_shoff
])
def test_a_damaged_header_is_one_line_of_bad_input(tmp_path: Path, at: int, fmt: str,
                                                   value: int, says: str) -> None:
    bad = _patched(build_asm("PASS"), tmp_path, at, fmt, value)
    with pytest.raises(BadInput, match="^" + str(bad).replace(".", r"\.") + ": " +
                       says.replace("(", r"\(").replace(")", r"\)")) as e:
        load_elf(bad)
    assert "\n" not in str(e.value)


def test_a_short_elf_is_truncated_or_corrupt(tmp_path: Path) -> None:
    bad = tmp_path / "bad.elf"
    bad.write_bytes(b"\x7fELF" + b"\0" * 12)
    with pytest.raises(BadInput, match="truncated or corrupt ELF"):
        load_elf(bad)
    bad.write_bytes(b"\x7fELF\x02")
    with pytest.raises(BadInput, match="truncated or corrupt ELF"):
        load_elf(bad)
