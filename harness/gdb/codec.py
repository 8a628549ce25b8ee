"""GDB remote serial protocol framing: packets, checksums, escaping, acknowledgements.

A packet is ``$payload#cc``: `cc` is the sum of the payload bytes as sent, modulo 256,
in two hex digits. Inside a payload the bytes ``$ # } *`` travel as ``}`` followed by
the byte XOR 0x20 (gdb escapes binary data that way and reads any reply that way).
Outside packets the peer sends ``+``/``-`` (acknowledgements) and 0x03 (an interrupt
request: Ctrl-C). Replies are never run-length encoded: gdb does not need it, and
the saving on a local socket is not worth the ambiguity.

`Decoder` is fed whatever the socket delivers, in any fragments, and returns complete
items; it never raises on bad input (a bad checksum or an oversized packet becomes an
item the server answers with ``-``), so no byte sequence can stop the server.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..errors import BadInput

__all__ = [
    "INTERRUPT",
    "MAX_PACKET",
    "Ack",
    "BadPacket",
    "Decoder",
    "Interrupt",
    "Item",
    "Packet",
    "PacketError",
    "checksum",
    "encode",
    "escape",
    "from_hex",
    "parse_hex",
    "to_hex",
    "unescape",
]

INTERRUPT = 0x03
ESCAPE = 0x7D           # '}'
ESCAPE_XOR = 0x20
MUST_ESCAPE = frozenset(b"$#}*")
MAX_PACKET = 1 << 20    # larger "packets" are garbage: dropped, answered with '-'


class PacketError(BadInput):
    """A packet's contents do not parse (bad hex, missing field, value out of range)."""


def checksum(data: bytes) -> int:
    return sum(data) & 0xFF


def escape(data: bytes) -> bytes:
    out = bytearray()
    for b in data:
        if b in MUST_ESCAPE:
            out += bytes((ESCAPE, b ^ ESCAPE_XOR))
        else:
            out.append(b)
    return bytes(out)


def unescape(data: bytes) -> bytes:
    if ESCAPE not in data:
        return data
    out = bytearray()
    it = iter(data)
    for b in it:
        if b == ESCAPE:
            nxt = next(it, None)
            if nxt is None:
                raise PacketError("packet ends in the middle of an escape")
            out.append(nxt ^ ESCAPE_XOR)
        else:
            out.append(b)
    return bytes(out)


def encode(payload: bytes) -> bytes:
    """The bytes on the wire for one packet."""
    body = escape(payload)
    return b"$" + body + b"#%02x" % checksum(body)


def to_hex(data: bytes) -> bytes:
    return data.hex().encode()


def from_hex(text: bytes) -> bytes:
    try:
        return bytes.fromhex(text.decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        raise PacketError(f"not hex: {text[:40]!r}") from None


def parse_hex(text: bytes, what: str = "number") -> int:
    """A non-negative hex number as gdb writes them (no prefix, no sign)."""
    if not text or len(text) > 32 or any(c not in b"0123456789abcdefABCDEF" for c in text):
        raise PacketError(f"bad {what}: {text[:40]!r}")
    return int(text, 16)


# -- decoder items -----------------------------------------------------------------------

@dataclass(frozen=True)
class Packet:
    """A well-formed packet; `payload` is unescaped."""

    payload: bytes


class Ack(Enum):
    ACK = "+"
    NACK = "-"


@dataclass(frozen=True)
class Interrupt:
    """0x03 outside a packet: the user pressed Ctrl-C in gdb."""


@dataclass(frozen=True)
class BadPacket:
    """A packet that arrived damaged: the sender should retransmit it."""

    reason: str


Item = Packet | Ack | Interrupt | BadPacket


class _State(Enum):
    IDLE = 0
    DATA = 1
    SUM1 = 2
    SUM2 = 3


class Decoder:
    """Incremental framing: feed() bytes as they arrive, get complete items back."""

    def __init__(self, max_packet: int = MAX_PACKET) -> None:
        self.max_packet = max_packet
        self._state = _State.IDLE
        self._body = bytearray()
        self._sum = bytearray()
        self._overflow = False

    @property
    def in_packet(self) -> bool:
        """True while a packet has started but not ended (a client vanishing now
        leaves half a packet behind)."""
        return self._state is not _State.IDLE

    def feed(self, data: bytes) -> list[Item]:
        items: list[Item] = []
        for b in data:
            item = self._byte(b)
            if item is not None:
                items.append(item)
        return items

    def _start(self) -> None:
        self._state = _State.DATA
        self._body.clear()
        self._sum.clear()
        self._overflow = False

    def _byte(self, b: int) -> Item | None:
        st = self._state
        if st is _State.IDLE:
            if b == ord("$"):
                self._start()
            elif b == ord("+"):
                return Ack.ACK
            elif b == ord("-"):
                return Ack.NACK
            elif b == INTERRUPT:
                return Interrupt()
            return None     # line noise between packets is ignored
        if st is _State.DATA:
            if b == ord("#"):
                self._state = _State.SUM1
            elif b == ord("$"):
                self._start()   # a new packet before the old one ended: resynchronise
            elif len(self._body) < self.max_packet:
                self._body.append(b)
            else:
                self._overflow = True
            return None
        self._sum.append(b)
        if st is _State.SUM1:
            self._state = _State.SUM2
            return None
        self._state = _State.IDLE
        return self._finish()

    def _finish(self) -> Item:
        body = bytes(self._body)
        if self._overflow:
            return BadPacket(f"packet longer than {self.max_packet} bytes")
        try:
            want = parse_hex(bytes(self._sum), "checksum")
        except PacketError:
            return BadPacket(f"bad checksum digits {bytes(self._sum)!r}")
        if want != checksum(body):
            return BadPacket(f"checksum {want:02x} != {checksum(body):02x}")
        try:
            return Packet(unescape(body))
        except PacketError as e:
            return BadPacket(str(e))
