"""A minimal raw GDB remote protocol client, for the tests gdb itself cannot do:
malformed packets, bad checksums, vanishing mid-packet, fuzzing."""

from __future__ import annotations

import socket
import time

from privlab.gdb.codec import Ack, Decoder, Packet, encode

TIMEOUT = 20.0


class Client:
    def __init__(self, port: int, *, ack: bool = True) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.decoder = Decoder()
        self.items: list[object] = []
        self.ack = ack
        self.console: list[str] = []     # what O packets said

    def close(self) -> None:
        self.sock.close()

    def raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _next(self) -> object:
        deadline = time.monotonic() + TIMEOUT
        while not self.items:
            if time.monotonic() > deadline:
                raise TimeoutError("no reply from the stub")
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("the stub closed the connection")
            self.items += self.decoder.feed(data)
        return self.items.pop(0)

    def ack_item(self) -> Ack:
        item = self._next()
        assert isinstance(item, Ack), f"expected an acknowledgement, got {item!r}"
        return item

    def packet(self) -> bytes:
        """The next packet, skipping acknowledgements and O (console) packets."""
        while True:
            item = self._next()
            if isinstance(item, Packet):
                if self.ack:
                    self.raw(b"+")
                if item.payload.startswith(b"O") and item.payload != b"OK":
                    self.console.append(bytes.fromhex(item.payload[1:].decode()).decode())
                    continue
                return item.payload

    def ask(self, payload: bytes) -> bytes:
        self.raw(encode(payload))
        return self.packet()
