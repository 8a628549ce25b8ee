"""A flattened device tree (the DTB a machine hands its firmware), written as the
Devicetree Specification v0.4, chapter 5, lays it out.

privlab writes one tree per boot and never edits one, so this is a writer only: nodes
of properties and subnodes, and `to_dtb`. The blob is a 40-byte header, the memory
reservation block (empty: its terminating entry), the structure block and the strings
block, each property's name stored once in the strings block, at its first use.
Parsing (for tests and inspectors) is the `fdt` package's job (boot/dtb.py).
"""

from __future__ import annotations

import struct

__all__ = ["Node", "Prop", "empty", "strings", "to_dtb", "words"]

FDT_MAGIC = 0xD00DFEED
FDT_BEGIN_NODE = 0x1
FDT_END_NODE = 0x2
FDT_PROP = 0x3
FDT_END = 0x9
HEADER_SIZE = 40                # ten 32-bit fields
RESERVE_ENTRY = 16              # (address, size), 64 bits each; all zero ends the block
LAST_COMPATIBLE_VERSION = 16    # what a version 17 tree is readable as

Prop = tuple[str, bytes]
"""A property: its name and its value's bytes."""


def words(name: str, *cells: int) -> Prop:
    """A property of 32-bit cells, big-endian."""
    return name, struct.pack(f">{len(cells)}I", *cells)


def strings(name: str, *values: str) -> Prop:
    """A property of strings, each ended by a NUL (a stringlist when there are several)."""
    return name, b"".join(v.encode() + b"\0" for v in values)


def empty(name: str) -> Prop:
    """A property without a value (`interrupt-controller;`)."""
    return name, b""


class Node:
    """A node: its properties (written first, in the order given) and its subnodes."""

    def __init__(self, name: str, *items: Prop | Node) -> None:
        self.name = name
        self.props: list[Prop] = []
        self.nodes: list[Node] = []
        for item in items:
            self.append(item)

    def append(self, item: Prop | Node) -> None:
        if isinstance(item, Node):
            self.nodes.append(item)
        else:
            self.props.append(item)


def _pad(data: bytearray) -> None:
    data += bytes(-len(data) % 4)


def _structure(node: Node, out: bytearray, names: dict[str, int], table: bytearray) -> None:
    out += struct.pack(">I", FDT_BEGIN_NODE) + node.name.encode() + b"\0"
    _pad(out)
    for name, value in node.props:
        offset = names.get(name)
        if offset is None:
            offset = names[name] = len(table)
            table += name.encode() + b"\0"
        out += struct.pack(">III", FDT_PROP, len(value), offset) + value
        _pad(out)
    for child in node.nodes:
        _structure(child, out, names, table)
    out += struct.pack(">I", FDT_END_NODE)


def to_dtb(root: Node, version: int = 17, boot_cpuid_phys: int = 0) -> bytes:
    """The tree as a DTB blob."""
    body = bytearray()
    table = bytearray()
    _structure(root, body, {}, table)
    body += struct.pack(">I", FDT_END)
    off_rsvmap = HEADER_SIZE
    off_struct = off_rsvmap + RESERVE_ENTRY
    off_strings = off_struct + len(body)
    total = off_strings + len(table)
    header = struct.pack(">10I", FDT_MAGIC, total, off_struct, off_strings, off_rsvmap,
                         version, LAST_COMPATIBLE_VERSION, boot_cpuid_phys, len(table),
                         len(body))
    return header + bytes(RESERVE_ENTRY) + bytes(body) + bytes(table)
