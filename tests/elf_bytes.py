"""Reading an ELF image's bytes at a virtual address, for the inspector tests."""

from __future__ import annotations

from pathlib import Path

from privlab.machine import load_elf


def elf_code(path: Path, addr: int, size: int) -> bytes:
    """Bytes of an ELF image at a virtual address (from its loadable segments)."""
    image = load_elf(path)
    for seg in image.segments:
        if seg.vaddr <= addr < seg.vaddr + len(seg.data):
            off = addr - seg.vaddr
            return seg.data[off:off + size]
    raise KeyError(hex(addr))
