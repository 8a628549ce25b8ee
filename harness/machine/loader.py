"""Loading RISC-V ELF files: validation with one-line errors, segments and symbols.

What an ELF yields (entry, segments' places, symbols) is cached by the SHA-256 of its
bytes in the build cache (`<cache>/elf-facts/`, harness/build/cache.py): pyelftools takes
most of a second over the kernel's symbol table, hashing a few hundred KiB a
millisecond. A changed file has another hash and is parsed again; an entry that
cannot be read or written is ignored.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..digest import sha256
from ..errors import BadInput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
    offset: int = field(default=0, compare=False)   # of `data` in the file

    @property
    def executable(self) -> bool:
        return bool(self.flags & PF_X)


@dataclass(frozen=True)
class ElfImage:
    """An ELF file as the loader sees it: its class, entry, loadable segments and symbols."""
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
    entry = _cache_file(data)
    image = _from_cache(p, data, entry) if entry is not None else None
    if image is None:
        image = _parse_checked(p, data)
        if entry is not None:
            _store(entry, image)
    return image


CACHE_FORMAT = 2   # bump when what is stored changes (2: segments with filesz > memsz refused)


def _cache_file(data: bytes) -> Path | None:
    from ..build.cache import cache_root

    try:
        root = cache_root()
    except OSError:
        return None
    return root / "elf-facts" / f"{sha256(data).hexdigest()}.json"


def _from_cache(p: Path, data: bytes, entry: Path) -> ElfImage | None:
    try:
        facts: dict[str, Any] = json.loads(entry.read_bytes())
        if facts.get("format") != CACHE_FORMAT:
            return None
        segments = tuple(Segment(vaddr=v, paddr=pa, data=data[off:off + size], memsz=memsz,
                                 flags=flags, offset=off)
                         for v, pa, off, size, memsz, flags in facts["segments"])
        return ElfImage(path=p, xlen=facts["xlen"], entry=facts["entry"], segments=segments,
                        symbols=facts["symbols"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _store(entry: Path, image: ElfImage) -> None:
    facts = {"format": CACHE_FORMAT, "xlen": image.xlen, "entry": image.entry,
             "segments": [[s.vaddr, s.paddr, s.offset, len(s.data), s.memsz, s.flags]
                          for s in image.segments],
             "symbols": image.symbols}
    tmp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(facts, separators=(",", ":")))
        tmp.replace(entry)      # a reader sees the whole entry or none
    except OSError:
        tmp.unlink(missing_ok=True)


def _parse_checked(p: Path, data: bytes) -> ElfImage:
    from elftools.common.exceptions import ELFError

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

    from elftools.elf.elffile import ELFFile

    elf = ELFFile(io.BytesIO(data))
    machine = elf["e_machine"]
    if machine != EM_RISCV:
        raise BadInput(f"{p}: ELF for {machine}, not RISC-V")
    xlen = 64 if elf.elfclass == 64 else 32
    segments = []
    for seg in elf.iter_segments():
        if seg["p_type"] != "PT_LOAD" or seg["p_memsz"] == 0:
            continue
        offset, filesz, memsz = seg["p_offset"], seg["p_filesz"], seg["p_memsz"]
        if filesz > memsz:          # QEMU's load_elf refuses it too (ELF_LOAD_INVALID)
            raise BadInput(f"{p}: a segment's file size {filesz:#x} is larger than its "
                           f"memory size {memsz:#x}")
        if offset + filesz > len(data):
            raise BadInput(f"{p}: truncated: a segment needs bytes {offset:#x}-"
                           f"{offset + filesz:#x} but the file has {len(data):#x}")
        segments.append(Segment(vaddr=seg["p_vaddr"], paddr=seg["p_paddr"],
                                data=data[offset:offset + filesz], memsz=memsz,
                                flags=seg["p_flags"], offset=offset))
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
