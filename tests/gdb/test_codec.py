from __future__ import annotations

import pytest

from privlab.gdb.codec import (
    Ack,
    BadPacket,
    Decoder,
    Interrupt,
    Packet,
    PacketError,
    checksum,
    encode,
    escape,
    parse_hex,
    unescape,
)


def test_encode_frames_payload_with_two_digit_checksum() -> None:
    assert encode(b"OK") == b"$OK#9a"
    assert encode(b"") == b"$#00"


def test_escape_covers_dollar_hash_brace_and_star() -> None:
    assert escape(b"a$b#c}d*e") == b"a}\x04b}\x03c}]d}\x0ae"
    assert unescape(escape(bytes(range(256)))) == bytes(range(256))


def test_checksum_is_over_the_escaped_bytes() -> None:
    wire = encode(b"x*y")
    body = wire[1:wire.index(b"#")]
    assert int(wire[-2:], 16) == checksum(body)
    assert Decoder().feed(wire) == [Packet(b"x*y")]


def test_decoder_reassembles_packets_split_anywhere() -> None:
    wire = b"+" + encode(b"qSupported:swbreak+") + b"\x03" + encode(b"g") + b"-"
    for cut in range(len(wire) + 1):
        d = Decoder()
        items = d.feed(wire[:cut]) + d.feed(wire[cut:])
        assert items == [Ack.ACK, Packet(b"qSupported:swbreak+"), Interrupt(), Packet(b"g"),
                         Ack.NACK]


def test_bad_checksum_is_reported_not_raised() -> None:
    items = Decoder().feed(b"$g#00$?#3f")
    assert isinstance(items[0], BadPacket)
    assert items[1] == Packet(b"?")


def test_non_hex_checksum_and_dangling_escape_are_bad_packets() -> None:
    assert isinstance(Decoder().feed(b"$g#zz")[0], BadPacket)
    body = b"ab}"
    assert isinstance(Decoder().feed(b"$" + body + b"#%02x" % checksum(body))[0], BadPacket)


def test_dollar_inside_a_packet_restarts_framing() -> None:
    assert Decoder().feed(b"$garbage$?#3f") == [Packet(b"?")]


def test_oversized_packet_is_dropped() -> None:
    d = Decoder(max_packet=16)
    body = b"m" * 100
    assert isinstance(d.feed(b"$" + body + b"#%02x" % checksum(body))[0], BadPacket)
    assert d.feed(encode(b"?")) == [Packet(b"?")]


def test_noise_between_packets_is_ignored() -> None:
    assert Decoder().feed(b"hello\n" + encode(b"?")) == [Packet(b"?")]


def test_in_packet_tracks_half_received_packets() -> None:
    d = Decoder()
    d.feed(b"$m8000")
    assert d.in_packet
    d.feed(b"0000,4#")
    assert d.in_packet
    d.feed(b"00")
    assert not d.in_packet


@pytest.mark.parametrize("text", [b"", b"xyz", b"-1", b"1" * 40, b"0x10"])
def test_parse_hex_rejects_what_gdb_never_sends(text: bytes) -> None:
    with pytest.raises(PacketError):
        parse_hex(text)
