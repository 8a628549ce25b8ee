"""What the harness knows about a kernel from its ELF: DWARF struct layouts, the
process table and trap frames it mirrors, and address symbolization."""

from harness.kernelinfo.dwarf import DwarfTypes, Global
from harness.kernelinfo.dwarf_types import (
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
from harness.kernelinfo.mirrors import KernelInfo, Process, ProcessTable
from harness.kernelinfo.symbols import ElfSymbols, Location, Symbolizer

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
