"""What the harness knows about a kernel from its ELF: DWARF struct layouts, the
process table and trap frames it mirrors, and address symbolization.

The names load on first use (PEP 562): `privlab run` imports privlab.kernelinfo.system
on every boot, and the DWARF readers (pyelftools) behind these names cost start-up
time that a run which never looks inside the kernel should not pay."""

from __future__ import annotations

from ..lazyload import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .dwarf import DwarfTypes, Global
    from .dwarf_types import (
        ArrayType,
        BaseType,
        CType,
        EnumType,
        EnumValue,
        Member,
        PointerType,
        StructType,
        StructValue,
        Value,
        decode_value,
    )
    from .mirrors import KernelInfo, Process, ProcessTable
    from .symbols import ElfSymbols, Location, Symbolizer

__all__ = [
    "ArrayType",
    "BaseType",
    "CType",
    "DwarfTypes",
    "ElfSymbols",
    "EnumType",
    "EnumValue",
    "Global",
    "KernelInfo",
    "Location",
    "Member",
    "PointerType",
    "Process",
    "ProcessTable",
    "StructType",
    "StructValue",
    "Symbolizer",
    "Value",
    "decode_value",
]

_HOME = {
    **dict.fromkeys(("DwarfTypes", "Global"), "dwarf"),
    **dict.fromkeys(("ArrayType", "BaseType", "CType", "EnumType", "EnumValue", "Member",
                     "PointerType", "StructType", "StructValue", "Value", "decode_value"),
                    "dwarf_types"),
    **dict.fromkeys(("KernelInfo", "Process", "ProcessTable"), "mirrors"),
    **dict.fromkeys(("ElfSymbols", "Location", "Symbolizer"), "symbols"),
}


__getattr__ = lazy_exports(__name__, globals(), _HOME)
