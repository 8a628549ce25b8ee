"""Read struct layouts and global variables from an ELF's DWARF (pyelftools).

`DwarfTypes.load(path)` collects every complete struct definition by name and every
global variable with a fixed address, so the harness reads `struct trapframe` or the
`proc[]` table exactly as the compiler laid them out: no offset is written by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..build.cache import cache_root, content_key, read_pickle, write_pickle
from ..errors import BadInput
from .dwarf_types import (
    ArrayType,
    BaseType,
    CType,
    EnumType,
    Member,
    PointerType,
    StructType,
)

__all__ = ["DwarfTypes", "Global", "MissingStructure"]

_CONSTANTS = {"DW_OP_constu", "DW_OP_consts", "DW_OP_const1u", "DW_OP_const2u",
              "DW_OP_const4u", "DW_OP_const8u", "DW_OP_const1s", "DW_OP_const2s",
              "DW_OP_const4s", "DW_OP_const8s"}
_ARITHMETIC: dict[str, Callable[[int, int], int]] = {
    "DW_OP_plus": lambda a, b: a + b, "DW_OP_minus": lambda a, b: a - b}
_SIGNED = {"DW_ATE_signed", "DW_ATE_signed_char"}
_CHAR = {"DW_ATE_signed_char", "DW_ATE_unsigned_char"}


class MissingStructure(BadInput, KeyError):
    """The kernel's DWARF lacks a struct or global a view reads: another kernel than
    privlab's (xv6, uCore). A KeyError too, so every view that already degrades on a
    missing field (a `?`, one note) degrades on it; alone it is bad input, one line."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Global:
    """A global variable of the kernel: its name, address and C type."""
    name: str
    address: int
    type: CType


_DW_OP_PLUS_UCONST = 0x23


def _member_offset(loc: Any) -> int:
    """A member's byte offset: a constant (DWARF 3 on), or in DWARF 2 (xv6 builds with
    -gdwarf-2) the location expression `DW_OP_plus_uconst N`, N in ULEB128."""
    if loc is None:
        return 0
    if isinstance(loc.value, int):
        return loc.value
    ops = list(loc.value)
    if not ops or ops[0] != _DW_OP_PLUS_UCONST:
        raise BadInput(f"a struct member's location {ops!r} is not a constant offset")
    offset = 0
    for shift, byte in enumerate(ops[1:]):
        offset |= (byte & 0x7f) << (7 * shift)
        if not byte & 0x80:
            break
    return offset


def _name(die: Any) -> str | None:
    a = die.attributes.get("DW_AT_name")
    return a.value.decode() if a is not None else None


@dataclass
class DwarfTypes:
    """The structs and globals a kernel ELF's DWARF describes."""
    path: Path
    pointer_size: int
    structs: dict[str, StructType] = field(default_factory=dict)
    globals: dict[str, Global] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> DwarfTypes:
        """Read `path`'s DWARF, or the result cached for a file with the same bytes."""
        try:
            cached = cache_root() / "dwarf" / f"{content_key(['dwarf-v3', path])}.pickle"
        except OSError as e:
            raise BadInput(f"{path}: cannot read: {e.strerror}") from e
        got = read_pickle(cached, DwarfTypes)
        if got is not None:
            got.path = path
            return got
        out = cls._read(path)
        write_pickle(cached, out)
        return out

    @classmethod
    def _read(cls, path: Path) -> DwarfTypes:
        from elftools.elf.elffile import ELFFile  # a cached table needs no pyelftools

        with path.open("rb") as f:
            elf = ELFFile(f)
            if not elf.has_dwarf_info():
                raise BadInput(f"{path}: has no DWARF debug information (build with -g)")
            out = cls(path, elf.elfclass // 8)
            _Reader(out).read(elf.get_dwarf_info())
        return out

    def struct(self, name: str) -> StructType:
        try:
            return self.structs[name]
        except KeyError:
            raise MissingStructure(f"{self.path.name}: no 'struct {name}' in its DWARF") \
                from None

    def global_(self, name: str) -> Global:
        try:
            return self.globals[name]
        except KeyError:
            raise MissingStructure(f"{self.path.name}: no global variable {name!r} in its "
                                   "DWARF") from None


class _Reader:
    def __init__(self, out: DwarfTypes) -> None:
        self.out = out
        self.cache: dict[int, CType] = {}

    def read(self, dwarf: Any) -> None:
        for cu in dwarf.iter_CUs():
            for die in cu.get_top_DIE().iter_children():
                if die.tag == "DW_TAG_structure_type" and not die.attributes.get(
                        "DW_AT_declaration"):
                    name = _name(die)
                    if name and name not in self.out.structs:
                        t = self.type(die)
                        assert isinstance(t, StructType)
                        self.out.structs[name] = t
                elif die.tag == "DW_TAG_variable":
                    self.variable(die)

    def variable(self, die: Any) -> None:
        loc = die.attributes.get("DW_AT_location")
        spec = die.get_DIE_from_attribute("DW_AT_specification") \
            if "DW_AT_specification" in die.attributes else die
        name = _name(spec)
        if loc is None or name is None or name in self.out.globals:
            return
        address = self.static_address(loc.value, die.cu.structs)
        if address is None:
            return
        if "DW_AT_type" in spec.attributes:
            t = self.type(spec.get_DIE_from_attribute("DW_AT_type"))
            self.out.globals[name] = Global(name, address, t)

    @staticmethod
    def static_address(expr: Any, structs: Any) -> int | None:
        """The address a location expression names, if it is a fixed one. Besides a
        plain `DW_OP_addr A`, clang describes globals it merged into one block (its
        global-merge pass) as `DW_OP_addr BLOCK; DW_OP_plus_uconst OFFSET`: reading
        only the first operation would name the block's first variable instead."""
        if not isinstance(expr, list) or not expr:
            return None
        from elftools.dwarf.dwarf_expr import DWARFExprParser

        stack: list[int] = []
        for op in DWARFExprParser(structs).parse_expr(expr):
            if op.op_name == "DW_OP_addr" or op.op_name in _CONSTANTS:
                stack.append(op.args[0])
            elif op.op_name == "DW_OP_plus_uconst" and stack:
                stack.append(stack.pop() + op.args[0])
            elif op.op_name in _ARITHMETIC and len(stack) >= 2:
                b, a = stack.pop(), stack.pop()
                stack.append(_ARITHMETIC[op.op_name](a, b))
            else:
                return None              # a register, the stack, a piece: not static
        return stack[-1] if len(stack) == 1 and stack[-1] >= 0 else None

    def type(self, die: Any) -> CType:
        key = die.offset
        if key not in self.cache:
            self.cache[key] = self._make(die)
        return self.cache[key]

    def _target(self, die: Any) -> Any | None:
        return die.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in die.attributes \
            else None

    def _spell(self, die: Any | None) -> str:
        """A C spelling of a type, for pointer targets: 'struct proc', 'char', 'void'."""
        while die is not None and die.tag in ("DW_TAG_const_type", "DW_TAG_volatile_type"):
            die = self._target(die)
        if die is None:
            return "void"
        if die.tag == "DW_TAG_pointer_type":
            return self._spell(self._target(die)) + " *"
        prefix = {"DW_TAG_structure_type": "struct ", "DW_TAG_union_type": "union ",
                  "DW_TAG_enumeration_type": "enum "}.get(die.tag, "")
        return prefix + (_name(die) or "?")

    def _make(self, die: Any) -> CType:
        tag = die.tag
        size = die.attributes["DW_AT_byte_size"].value if "DW_AT_byte_size" in die.attributes \
            else 0
        if tag in ("DW_TAG_typedef", "DW_TAG_const_type", "DW_TAG_volatile_type"):
            target = self._target(die)
            return self.type(target) if target is not None else BaseType("void", 0, False)
        if tag == "DW_TAG_base_type":
            enc = die.attributes["DW_AT_encoding"].value
            from elftools.dwarf.enums import ENUM_DW_ATE
            names = {v: k for k, v in ENUM_DW_ATE.items()}
            e = names.get(enc, "")
            return BaseType(_name(die) or "?", size, e in _SIGNED, e in _CHAR)
        if tag == "DW_TAG_pointer_type":
            return PointerType(self._spell(self._target(die)), self.out.pointer_size)
        if tag == "DW_TAG_enumeration_type":
            vals = tuple((c.attributes["DW_AT_const_value"].value, _name(c) or "?")
                         for c in die.iter_children() if c.tag == "DW_TAG_enumerator")
            return EnumType(_name(die) or "?", size, vals)
        if tag == "DW_TAG_array_type":
            elem = self.type(self._target(die))
            count = 1
            for sub in die.iter_children():
                if sub.tag == "DW_TAG_subrange_type":
                    if "DW_AT_count" in sub.attributes:
                        count *= sub.attributes["DW_AT_count"].value
                    elif "DW_AT_upper_bound" in sub.attributes:
                        count *= sub.attributes["DW_AT_upper_bound"].value + 1
            return ArrayType(elem, count)
        if tag in ("DW_TAG_structure_type", "DW_TAG_union_type"):
            members = []
            for m in die.iter_children():
                if m.tag != "DW_TAG_member":
                    continue
                loc = m.attributes.get("DW_AT_data_member_location")
                members.append(Member(_name(m) or "?", _member_offset(loc),
                                      self.type(self._target(m))))
            return StructType(_name(die) or "?", size, tuple(members))
        return BaseType(_name(die) or tag, size, False)
