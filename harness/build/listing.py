"""A disassembly (`X.dis`) and a symbol map (`X.map`) beside each ELF the build makes.

Both are derived from the ELF alone and cached by its content, so an unchanged ELF costs
nothing. The disassembly uses capstone and labels every function and object symbol; the
map lists the loadable sections and every symbol by address.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import capstone
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from .cache import cache_root, content_key, write_if_changed

__all__ = ["disassemble", "symbol_map", "write_listings"]

_SHF_EXECINSTR = 0x4
_SHF_ALLOC = 0x2


def _symbols(elf: Any) -> list[tuple[int, int, str, str]]:
    """(address, size, type, name) for each named function/object/notype symbol."""
    table = elf.get_section_by_name(".symtab")
    if not isinstance(table, SymbolTableSection):
        return []
    out = []
    for sym in table.iter_symbols():
        kind = sym["st_info"]["type"]
        if sym.name and kind in ("STT_FUNC", "STT_OBJECT", "STT_NOTYPE") \
                and sym["st_shndx"] != "SHN_UNDEF" and not sym.name.startswith(".L"):
            out.append((sym["st_value"], sym["st_size"], kind[4:].lower(), sym.name))
    return sorted(set(out))


def disassemble(data: bytes) -> str:
    """Capstone disassembly of every executable section, with symbol labels."""
    elf = ELFFile(io.BytesIO(data))
    mode = capstone.CS_MODE_RISCV64 if elf.elfclass == 64 else capstone.CS_MODE_RISCV32
    md = capstone.Cs(capstone.CS_ARCH_RISCV, mode | capstone.CS_MODE_RISCVC)
    labels: dict[int, list[str]] = {}
    for addr, _size, _kind, name in _symbols(elf):
        labels.setdefault(addr, []).append(name)
    out = io.StringIO()
    width = elf.elfclass // 4
    for sec in elf.iter_sections():
        if not sec["sh_flags"] & _SHF_EXECINSTR or sec["sh_type"] != "SHT_PROGBITS":
            continue
        out.write(f"\nDisassembly of section {sec.name}:\n")
        code, base, offset = sec.data(), sec["sh_addr"], 0
        while offset < len(code):
            decoded = False
            for insn in md.disasm(code[offset:], base + offset):
                for name in labels.get(insn.address, []):
                    out.write(f"\n{insn.address:0{width}x} <{name}>:\n")
                out.write(f"  {insn.address:{width}x}:  {insn.bytes.hex():<8}  "
                          f"{insn.mnemonic} {insn.op_str}".rstrip() + "\n")
                offset += insn.size
                decoded = True
            if offset < len(code):  # capstone stopped at bytes it cannot decode
                step = 2 if not decoded or len(code) - offset < 4 else 4
                word = code[offset:offset + step]
                out.write(f"  {base + offset:{width}x}:  {word.hex():<8}  .byte "
                          + ", ".join(f"0x{b:02x}" for b in word) + "\n")
                offset += step
    return out.getvalue()


def symbol_map(data: bytes) -> str:
    """Loadable sections and all symbols, sorted by address."""
    elf = ELFFile(io.BytesIO(data))
    width = elf.elfclass // 4
    out = io.StringIO()
    out.write(f"Entry point: 0x{elf['e_entry']:0{width}x}\n\nSections:\n")
    for sec in elf.iter_sections():
        if sec["sh_flags"] & _SHF_ALLOC:
            out.write(f"  {sec['sh_addr']:0{width}x} {sec['sh_size']:8x}  {sec.name}\n")
    out.write("\nSymbols:\n")
    for addr, size, kind, name in _symbols(elf):
        out.write(f"  {addr:0{width}x} {size:8x} {kind:<6} {name}\n")
    return out.getvalue()


def write_listings(elf_path: Path) -> tuple[Path, Path]:
    """Write `X.dis` and `X.map` beside `X.elf` (cached by the ELF's content)."""
    data = elf_path.read_bytes()
    key = content_key(["listing-v1", data])
    results = []
    for suffix, make in ((".dis", disassemble), (".map", symbol_map)):
        cached = cache_root() / "listing" / key[:2] / f"{key}{suffix}"
        if not cached.exists():
            write_if_changed(cached, make(data))
        results.append(write_if_changed(elf_path.with_suffix(suffix), cached.read_bytes()))
    return results[0], results[1]
