"""C types as the kernel's DWARF describes them, and values decoded from bytes.

A small model: base types, enums, pointers, arrays and structs. Values decode to
plain Python (int, str for char arrays, `EnumValue`, lists, `StructValue`), so a
trap frame or a process-table entry reads like the C struct it mirrors.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TypeAlias

__all__ = [
    "ArrayType",
    "BaseType",
    "CType",
    "EnumType",
    "EnumValue",
    "Member",
    "PointerType",
    "StructType",
    "StructValue",
    "Value",
    "decode_value",
]


@dataclass(frozen=True)
class BaseType:
    """A C base type (`int`, `char`, `uint64`)."""
    name: str
    size: int
    signed: bool
    char: bool = False


@dataclass(frozen=True)
class EnumType:
    """A C enum: its size and its named values."""
    name: str
    size: int
    values: tuple[tuple[int, str], ...]

    def name_of(self, value: int) -> str | None:
        return next((n for v, n in self.values if v == value), None)


@dataclass(frozen=True)
class PointerType:
    """A C pointer, named by the type it points to."""
    target: str        # "struct proc", "char", "void", ...
    size: int


@dataclass(frozen=True)
class ArrayType:
    """A C array of `count` elements."""
    elem: CType
    count: int

    @property
    def size(self) -> int:
        return self.elem.size * self.count


@dataclass(frozen=True)
class Member:
    """A struct member: its name, byte offset and type."""
    name: str
    offset: int
    type: CType


@dataclass(frozen=True)
class StructType:
    """A C struct: its size and members in declaration order."""
    name: str
    size: int
    members: tuple[Member, ...]

    def member(self, name: str) -> Member:
        for m in self.members:
            if m.name == name:
                return m
        raise KeyError(f"struct {self.name} has no member {name!r}")

    def has(self, name: str) -> bool:
        return any(m.name == name for m in self.members)


CType: TypeAlias = BaseType | EnumType | PointerType | ArrayType | StructType


@dataclass(frozen=True)
class EnumValue:
    """A decoded enum value, with its name when the enum has one for it."""
    value: int
    name: str | None

    def __str__(self) -> str:
        return self.name if self.name is not None else str(self.value)


@dataclass(frozen=True)
class StructValue:
    """A decoded struct: members in declaration order."""

    type: StructType
    address: int
    values: tuple[tuple[str, Value], ...]

    def __getitem__(self, name: str) -> Value:
        for n, v in self.values:
            if n == name:
                return v
        raise KeyError(f"struct {self.type.name} has no member {name!r}")

    def __iter__(self) -> Iterator[tuple[str, Value]]:
        return iter(self.values)

    def get_int(self, name: str) -> int:
        v = self[name]
        if isinstance(v, EnumValue):
            return v.value
        if not isinstance(v, int):
            raise TypeError(f"{self.type.name}.{name} is not an integer")
        return v


Value: TypeAlias = int | str | EnumValue | list["Value"] | StructValue


def _int(data: bytes, offset: int, size: int, signed: bool) -> int:
    return int.from_bytes(data[offset:offset + size], "little", signed=signed)


def decode_value(t: CType, data: bytes, offset: int = 0, address: int = 0) -> Value:
    """Decode `t` from `data` at `offset` (`address` is where data[0] sits in memory)."""
    if isinstance(t, BaseType):
        return _int(data, offset, t.size, t.signed)
    if isinstance(t, EnumType):
        v = _int(data, offset, t.size, False)
        return EnumValue(v, t.name_of(v))
    if isinstance(t, PointerType):
        return _int(data, offset, t.size, False)
    if isinstance(t, ArrayType):
        if isinstance(t.elem, BaseType) and t.elem.char:
            raw = data[offset:offset + t.count]
            return raw.split(b"\0", 1)[0].decode("latin-1")
        return [decode_value(t.elem, data, offset + i * t.elem.size, address)
                for i in range(t.count)]
    return StructValue(t, address + offset, tuple(
        (m.name, decode_value(m.type, data, offset + m.offset, address)) for m in t.members))
