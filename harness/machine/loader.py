"""Loading RISC-V ELF files: validation with one-line errors, segments and symbols."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from harness.errors import BadInput

__all__ = ["ElfImage", "Segment", "load_elf"]

EM_RISCV = "EM_RISCV"
PF_X = 1


@dataclass(frozen=True)
class Segment:
    """A PT_LOAD segment: `data` is placed at `paddr`, then zero-filled to `memsz`."""

    vaddr: int
    paddr: int
    data: bytes
    memsz: int
    flags: int

    @property
    def executable(self) -> bool:
        return bool(self.flags & PF_X)


@dataclass(frozen=True)
class ElfImage:
    path: Path
    xlen: int
    entry: int
    segments: tuple[Segment, ...]
    symbols: dict[str, int] = field(default_factory=dict)

    def symbol(self, name: str) -> int | None:
        return self.symbols.get(name)


def load_elf(path: str | Path) -> ElfImage:
    """Read and validate a RISC-V ELF. Every problem is a `BadInput` with one line."""
    p = Path(path)
    if not p.exists():
        raise BadInput(f"{p}: no such file")
    if p.is_dir():
        raise BadInput(f"{p}: is a directory, not an ELF file")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise BadInput(f"{p}: cannot read: {e.strerror}") from e
    if not data.startswith(b"\x7fELF"):
        raise BadInput(f"{p}: not an ELF file")
    try:
        return _parse(p, data)
    except BadInput:
        raise
    except (ELFError, ValueError, KeyError, IndexError, OSError) as e:
        raise BadInput(f"{p}: truncated or corrupt ELF ({e})") from e
    except Exception as e:  # pyelftools raises struct/construct errors on short files
        raise BadInput(f"{p}: truncated or corrupt ELF ({type(e).__name__})") from e


def _parse(p: Path, data: bytes) -> ElfImage:
    import io

    elf = ELFFile(io.BytesIO(data))
    machine = elf["e_machine"]
    if machine != EM_RISCV:
        raise BadInput(f"{p}: ELF for {machine}, not RISC-V")
    xlen = 64 if elf.elfclass == 64 else 32
    segments = []
    for seg in elf.iter_segments():
        if seg["p_type"] != "PT_LOAD" or seg["p_memsz"] == 0:
            continue
        offset, filesz = seg["p_offset"], seg["p_filesz"]
        if offset + filesz > len(data):
            raise BadInput(f"{p}: truncated: a segment needs bytes {offset:#x}-"
                           f"{offset + filesz:#x} but the file has {len(data):#x}")
        segments.append(Segment(vaddr=seg["p_vaddr"], paddr=seg["p_paddr"],
                                data=data[offset:offset + filesz], memsz=seg["p_memsz"],
                                flags=seg["p_flags"]))
    if not segments:
        raise BadInput(f"{p}: has no loadable segments")
    symbols: dict[str, int] = {}
    symtab = elf.get_section_by_name(".symtab")
    if symtab is not None:
        for sym in symtab.iter_symbols():
            if sym.name and sym["st_shndx"] != "SHN_UNDEF":
                symbols.setdefault(sym.name, sym["st_value"])
    return ElfImage(path=p, xlen=xlen, entry=elf["e_entry"], segments=tuple(segments),
                    symbols=symbols)
