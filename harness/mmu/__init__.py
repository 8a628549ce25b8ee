"""Sv39 and Sv32 address translation, mirroring the hardware walk step by step.

`walk(memory, satp, va, access, context, xlen)` returns a `Walk` (every level, and
the physical address or the fault as a value); `read_page_table(memory, satp, xlen)`
reads a whole table as a tree with merged ranges.

The tree's names load on first use (PEP 562): a trace decodes satp on every run and
reads whole tables only when asked. (`walk` stays eager: the submodule of that name
would otherwise shadow the function once anything imported it.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazyload import lazy_exports
from .address import PAGE_SIZE, PPN, PhysAddr, VirtAddr
from .scheme import (
    PTE_FIELDS,
    SCHEMES,
    SV32,
    SV39,
    PagingScheme,
    Pte,
    PteFlag,
    SatpValue,
    decode_satp,
)
from .walk import (
    Access,
    Fault,
    FaultKind,
    PhysicalMemory,
    TranslationContext,
    Walk,
    WalkStep,
    context_from_status,
    walk,
)

if TYPE_CHECKING:
    from .tree import Mapping, PageTable, TableEntry, TableNode, read_page_table

__all__ = [
    "PAGE_SIZE",
    "PPN",
    "PTE_FIELDS",
    "SCHEMES",
    "SV32",
    "SV39",
    "Access",
    "Fault",
    "FaultKind",
    "Mapping",
    "PageTable",
    "PagingScheme",
    "PhysAddr",
    "PhysicalMemory",
    "Pte",
    "PteFlag",
    "SatpValue",
    "TableEntry",
    "TableNode",
    "TranslationContext",
    "VirtAddr",
    "Walk",
    "WalkStep",
    "context_from_status",
    "decode_satp",
    "read_page_table",
    "walk",
]

__getattr__ = lazy_exports(__name__, globals(), dict.fromkeys(
    ("Mapping", "PageTable", "TableEntry", "TableNode", "read_page_table"), "tree"))
