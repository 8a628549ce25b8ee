"""Typed addresses: a virtual address, a physical address, a physical page number.

They are plain integers (arithmetic and formatting work as usual) whose repr names
what they are, so a walk record printed in a notebook reads `PhysAddr(0x87f65000)`
rather than a bare number.
"""

from __future__ import annotations

from ..abi.paging import PAGE_SHIFT, PAGE_SIZE

__all__ = ["PAGE_SHIFT", "PAGE_SIZE", "PPN", "PhysAddr", "VirtAddr"]


class VirtAddr(int):
    """A virtual address, as a program or the kernel uses it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"VirtAddr({int(self):#x})"

    @property
    def page_offset(self) -> int:
        return int(self) & (PAGE_SIZE - 1)


class PhysAddr(int):
    """A guest physical address."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"PhysAddr({int(self):#x})"

    @property
    def ppn(self) -> PPN:
        return PPN(int(self) >> PAGE_SHIFT)


class PPN(int):
    """A physical page number: a physical address shifted right by 12."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"PPN({int(self):#x})"

    @property
    def addr(self) -> PhysAddr:
        return PhysAddr(int(self) << PAGE_SHIFT)
