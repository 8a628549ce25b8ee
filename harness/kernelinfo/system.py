"""Everything known about the software in a machine: its ELF images, symbols, and
(for the bundled kernel) the DWARF mirrors.

`SystemInfo.symbolize(addr, satp)` finds an address in the firmware, the kernel or a
user program; an address none of them is linked at (the trampoline page, which the
kernel maps at the top of every address space) is translated through `satp` and
looked up by its physical address, since the kernel is linked at physical addresses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..errors import BadInput, GuestError

TYPE_CHECKING = False
if TYPE_CHECKING:      # loaded when first asked for: a plain run never needs them
    from ..mmu.walk import PhysicalMemory
    from .mirrors import KernelInfo
    from .symbols import Location, Symbolizer

__all__ = ["SystemInfo"]


@dataclass
class SystemInfo:
    """The images a machine runs. `program` names the user program whose symbols
    win for user addresses (they are all linked at the same place). `abi` names the
    kernel profile its process table is read with (harness/abi/kernel_profiles.py:
    `--abi`), until `kernel_info` is first asked for."""

    xlen: int
    firmware: Path | None = None
    kernel: Path | None = None
    users: dict[str, Path] = field(default_factory=dict)
    program: str | None = None
    bare: Path | None = None
    abi: str = "rcore"
    _aliases: set[int] = field(default_factory=set)

    @cached_property
    def symbolizer(self) -> Symbolizer:
        from .symbols import Symbolizer

        s = Symbolizer()
        for name, path in (("firmware", self.firmware), ("kernel", self.kernel),
                           ("program", self.bare)):
            if path is not None and _is_elf(path):    # a raw firmware has no symbols
                s.add_path(name, path)
        for name, path in self.users.items():
            s.add_path(name, path, user=True)
        return s

    @cached_property
    def kernel_info(self) -> KernelInfo | None:
        """The kernel's DWARF mirrors, or None for a bare-metal program. A kernel
        booted bare (`--bios none`, as xv6's Makefile boots it) is read as one when
        `abi` names another kernel's profile than privlab's own."""
        kernel = self.kernel or (self.bare if self.abi != "rcore" else None)
        if kernel is None:
            return None
        from ..abi.kernel_profiles import kernel_profile
        from .mirrors import KernelInfo

        try:
            return KernelInfo.load(kernel, kernel_profile(self.abi))
        except BadInput:
            return None

    def symbolize(self, addr: int, satp: int | None = None,
                  memory: PhysicalMemory | None = None, program: str | None = None) -> Location:
        prefer = program or self.program
        loc = self.symbolizer.lookup(addr, prefer)
        if loc.image is not None or satp is None or memory is None:
            return loc
        from ..mmu.address import PAGE_SIZE
        from ..mmu.walk import Access, walk

        page = addr & ~(PAGE_SIZE - 1)
        if page in self._aliases:
            return loc
        self._aliases.add(page)       # try each page once
        try:
            w = walk(memory, satp, page, Access.EXECUTE, xlen=self.xlen)
        except GuestError:
            return loc
        if w.pa is None:
            return loc
        target = self.symbolizer.lookup(int(w.pa))
        if target.image in ("kernel", "firmware"):
            self.symbolizer.add_alias(page, PAGE_SIZE, int(w.pa))
            return self.symbolizer.lookup(addr, prefer)
        return loc

    def address_of(self, symbol: str, image: str | None = None) -> int | None:
        """A symbol's address in `image`, or in the first image (program first) that has it."""
        s = self.symbolizer
        names = [image] if image else [self.program, "program", "kernel", "firmware"]
        for n in names:
            img = s.image(n) if n else None
            if img is not None and symbol in img.by_name:
                return img.by_name[symbol][0]
        return None

    def close(self) -> None:
        if "symbolizer" in self.__dict__:
            self.symbolizer.close()


def _is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False
