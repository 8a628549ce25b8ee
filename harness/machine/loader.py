"""Loading RISC-V ELF files: validation with one-line errors, segments and symbols.

The headers and the symbol table are read by harness/machine/elfread.py: 0.2 ms for a
course kernel's few hundred symbols, 1.3 ms for the bundled kernel's 4,600. (Until
December 2026 pyelftools read them, and its results were cached under the ELF's SHA-256:
20 ms for every ELF run for the first time, a millisecond for the hash and the cached
entry later. tests/machine/test_elf_loader.py checks the two readings agree.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BadInput
from .elfread import EM_RISCV, PT_LOAD, ElfError, RawElf

__all__ = ["ElfImage", "Segment", "load_elf"]

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
    return _parse_checked(p, data)


def _parse_checked(p: Path, data: bytes) -> ElfImage:
    try:
        return _parse(p, data)
    except ElfError as e:
        raise BadInput(f"{p}: truncated or corrupt ELF ({e})") from e


_MACHINES = {3: "EM_386", 62: "EM_X86_64", 40: "EM_ARM", 183: "EM_AARCH64", 8: "EM_MIPS",
             20: "EM_PPC", 21: "EM_PPC64", 22: "EM_S390"}   # for the message alone


def _parse(p: Path, data: bytes) -> ElfImage:
    """The ELF's class, entry, PT_LOAD segments and defined symbols."""
    elf = RawElf(data)
    if elf.machine != EM_RISCV:
        raise BadInput(f"{p}: ELF for {_MACHINES.get(elf.machine, f'machine {elf.machine}')}, "
                       "not RISC-V")
    segments = []
    for ph in elf.program_headers():
        if ph.type != PT_LOAD or ph.memsz == 0:
            continue
        if ph.filesz > ph.memsz:     # QEMU's load_elf refuses it too (ELF_LOAD_INVALID)
            raise BadInput(f"{p}: a segment's file size {ph.filesz:#x} is larger than its "
                           f"memory size {ph.memsz:#x}")
        if ph.offset + ph.filesz > len(data):
            raise BadInput(f"{p}: truncated: a segment needs bytes {ph.offset:#x}-"
                           f"{ph.offset + ph.filesz:#x} but the file has {len(data):#x}")
        segments.append(Segment(vaddr=ph.vaddr, paddr=ph.paddr,
                                data=data[ph.offset:ph.offset + ph.filesz], memsz=ph.memsz,
                                flags=ph.flags, offset=ph.offset))
    if not segments:
        raise BadInput(f"{p}: has no loadable segments")
    return ElfImage(path=p, xlen=elf.xlen, entry=elf.entry, segments=tuple(segments),
                    symbols=elf.defined_symbols())
