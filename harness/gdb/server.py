"""The socket side of the stub: listening, sessions, Ctrl-C, clients that vanish.

    server = GdbServer(machine, Address("127.0.0.1", 1234), wait=True)
    result = server.serve()      # returns when the guest ends or gdb kills it

One client at a time. Without a client the guest runs freely (or, with wait=True
before the first client, holds at reset); a client connecting stops it. A session
ends when gdb kills (the run ends), detaches (breakpoints go, the guest runs on and a
new gdb may attach), or vanishes, even in the middle of a packet (breakpoints go, the
guest stays stopped where it was until the next gdb attaches). The machine is never
touched by the socket thread except through `Stub.interrupt()`.

Ctrl-C in privlab's own terminal ends privlab, with or without a client (exit 130).
"""

from __future__ import annotations

import queue
import select
import socket
import sys
import threading
import time
from dataclasses import dataclass
from enum import Enum
from typing import IO

from ..errors import BadInput
from ..machine import Machine, RunResult, Stop
from ..sigint import on_sigint
from .codec import Ack, BadPacket, Decoder, Interrupt, Item, Packet, encode, to_hex
from .halt import StopCause
from .stub import SessionEnd, Stub

__all__ = ["Address", "GdbServer", "parse_address"]

DEFAULT_HOST = "127.0.0.1"
POLL = 0.1              # seconds between checks for Ctrl-C while blocked on the socket
RECV = 65536
NOTE_CHUNK = 1024       # console text per O packet
MAX_RETRANSMIT = 3
GRACE = 0.5             # seconds a session has to end before a new client is refused
REFUSE_WAIT = 2.0       # seconds a refused client has to send its first packet
REFUSAL = b"E.privlab: another debugger is attached (one at a time)"


@dataclass(frozen=True)
class Address:
    """Where the GDB stub listens: a host name or address and a TCP port."""
    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def parse_address(text: str) -> Address:
    """``PORT``, ``:PORT``, ``HOST:PORT`` or ``[IPv6]:PORT``; the host defaults to
    127.0.0.1 (the stub gives full control of the machine: do not expose it lightly)."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    if text.startswith("[") and text.endswith("]"):
        raise BadInput(f"--gdb: no port in {text!r} (expected [HOST:]PORT)")
    host = host.strip("[]") or DEFAULT_HOST
    if not (port.isascii() and port.isdigit()):   # int() would take "+80", " 8", "1_0"
        raise BadInput(f"--gdb: not a port number: {port!r} (expected [HOST:]PORT)")
    number = int(port, 10)
    if not 0 <= number <= 65535:
        raise BadInput(f"--gdb: port {number} is out of range 0..65535")
    return Address(host, number)


class _Outcome(Enum):
    KILLED = "killed"
    DETACHED = "detached"
    EXITED = "exited"
    VANISHED = "vanished"
    QUIT = "quit"


class _Gone:
    """Queued by the reader when the client has closed the connection."""


class _Connection:
    """One client. A reader thread owns the receiving side: it decodes whatever
    arrives and queues the items; 0x03 (or the client going away) during a resume
    stops the machine at once, without waiting for the main thread."""

    def __init__(self, sock: socket.socket, stub: Stub) -> None:
        self.sock = sock
        self.stub = stub
        self.items: queue.Queue[Item | _Gone] = queue.Queue()
        self.last_sent = b""
        self.retransmits = 0
        self.vanished = False
        self._decoder = Decoder()
        self._lock = threading.Lock()
        self._resuming = False
        self._closed = threading.Event()
        self._reader = threading.Thread(target=self._read, name="privlab-gdb-reader",
                                        daemon=True)
        self._reader.start()

    def close(self) -> None:
        self._closed.set()
        self._reader.join()
        self.sock.close()

    def resume_done(self) -> None:
        """The stop reply for a resume is out: a 0x03 from now on is stale (it crossed
        our reply on the wire), and so is one that arrived just before."""
        with self._lock:
            self._resuming = False
            self.stub.halter.take()

    def _read(self) -> None:
        while not self._closed.is_set():
            ready, _, _ = select.select([self.sock], [], [], POLL)
            if not ready:
                continue
            try:
                data = self.sock.recv(RECV)
            except OSError:
                data = b""
            if not data:
                with self._lock:
                    self.vanished = True
                    if self._resuming:
                        self.stub.interrupt()
                self.items.put(_Gone())
                return
            for item in self._decoder.feed(data):
                with self._lock:
                    if isinstance(item, Interrupt):
                        if self._resuming:
                            self.stub.interrupt()
                        continue
                    if isinstance(item, Packet) and _resumes(item.payload):
                        self._resuming = True
                self.items.put(item)


class GdbServer:
    def __init__(self, machine: Machine, address: Address = Address(DEFAULT_HOST, 1234), *,
                 wait: bool = False, max_insns: int | None = None,
                 log: IO[str] | None = None, history_budget: int | None = None) -> None:
        self.machine = machine
        self.stub = Stub(machine, max_insns=max_insns, history_budget=history_budget)
        self.wait = wait
        self.log = log if log is not None else sys.stderr
        self._quit = threading.Event()
        try:
            infos = socket.getaddrinfo(address.host, address.port, type=socket.SOCK_STREAM)
        except OSError as e:
            raise BadInput(f"--gdb: unknown host {address.host!r} ({e})") from None
        family, _, _, _, sockaddr = infos[0]
        self._listener = socket.socket(family, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._listener.bind(sockaddr)
        except OSError as e:
            self._listener.close()
            raise BadInput(f"--gdb: cannot listen on {address}: {e.strerror}") from None
        self._listener.listen(1)
        bound = self._listener.getsockname()
        self.address = Address(address.host, int(bound[1]))

    def close(self) -> None:
        self._listener.close()

    def quit(self) -> None:
        """End serve() soon, from any thread (what Ctrl-C in privlab's terminal does)."""
        self._quit.set()
        self.stub.interrupt()

    # -- the whole run -------------------------------------------------------------
    def serve(self) -> RunResult:
        """Serve until the guest ends, gdb kills it, or quit(); the final RunResult."""
        with on_sigint(self.quit, "privlab-gdb-sigint"):   # as a plain run does
            try:
                return self._serve()
            finally:
                self.close()

    def _serve(self) -> RunResult:
        hold = self.wait
        self._say(f"gdb: listening on {self.address}"
                  + (" (the hart waits at reset until gdb attaches)" if hold else ""))
        while True:
            if not hold:
                final = self._run_free()
                if final is not None:
                    return final
            sock = self._accept()
            if sock is None:
                return self._stopped()
            outcome = self._session(sock)
            if outcome is _Outcome.EXITED:
                assert self.stub.result is not None
                return self.stub.result
            if outcome in (_Outcome.KILLED, _Outcome.QUIT):
                if outcome is _Outcome.KILLED:
                    self._say("gdb: killed by the debugger")
                return self._stopped()
            self.stub.release()
            hold = outcome is _Outcome.VANISHED
            self._say("gdb: detached; the guest runs on" if not hold else
                      f"gdb: the debugger went away; the hart waits for the next one on "
                      f"{self.address}")

    def _say(self, text: str) -> None:
        print(f"privlab: {text}", file=self.log, flush=True)

    def _stopped(self) -> RunResult:
        h = self.machine.hart
        return RunResult(Stop.USER, pc=h.pc, priv=h.priv, instret=h.state.instret,
                         last_traps=[])

    # -- without a client ------------------------------------------------------------
    def _run_free(self) -> RunResult | None:
        """Run until the guest ends (its result) or a client connects (None)."""
        stop = threading.Event()

        def watch_listener() -> None:
            while not stop.is_set():
                ready, _, _ = select.select([self._listener], [], [], POLL)
                if ready:
                    self.stub.halter.request(StopCause.ATTACH)
                    return

        t = threading.Thread(target=watch_listener, name="privlab-gdb-listen", daemon=True)
        t.start()
        try:
            while True:
                remaining = self.stub.remaining()
                if remaining == 0:
                    return self.stub.budget_result()
                result = self.stub.halter.run(remaining)
                causes = self.stub.halter.take()
                if self._quit.is_set():
                    return self._stopped()
                if StopCause.ATTACH in causes:
                    return None
                if result.stop in (Stop.HALT, Stop.ERROR, Stop.USER):
                    return result
                if result.stop is Stop.BUDGET and not causes:
                    return self.stub.budget_result()
        finally:
            stop.set()
            t.join()

    def _accept(self) -> socket.socket | None:
        while not self._quit.is_set():
            ready, _, _ = select.select([self._listener], [], [], POLL)
            if ready:
                sock, peer = self._listener.accept()
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._say(f"gdb: connection from {peer[0]}")
                return sock
        return None

    # -- a session ---------------------------------------------------------------------
    def _session(self, sock: socket.socket) -> _Outcome:
        self.stub.begin_session()
        conn = _Connection(sock, self.stub)
        over = threading.Event()
        doorman = threading.Thread(target=self._turn_away, args=(over,),
                                   name="privlab-gdb-doorman", daemon=True)
        doorman.start()
        try:
            return self._serve_connection(conn)
        finally:
            over.set()
            doorman.join()
            conn.close()
            self.stub.halter.take()   # a stop asked for by this client is void now

    def _turn_away(self, over: threading.Event) -> None:
        """During a session, answer any other client at once: otherwise it would sit in
        the listen queue until gdb's timeout, then report protocol errors."""
        while not over.is_set():
            ready, _, _ = select.select([self._listener], [], [], POLL)
            # A client that comes as the session ends (gdb detaching or hanging up and
            # connecting again) is the next session's: give this one time to end.
            if not ready or over.wait(GRACE):
                continue
            try:
                sock, peer = self._listener.accept()
            except OSError:
                continue
            self._say(f"gdb: refused a second debugger from {peer[0]} (one at a time)")
            threading.Thread(target=_refuse, args=(sock,), name="privlab-gdb-refuse",
                             daemon=True).start()

    def _serve_connection(self, conn: _Connection) -> _Outcome:
        while not self._quit.is_set():
            try:
                item = conn.items.get(timeout=POLL)
            except queue.Empty:
                continue
            if isinstance(item, _Gone):
                return _Outcome.VANISHED
            outcome = self._handle(conn, item)
            if outcome is not None:
                return outcome
        return _Outcome.QUIT

    def _send(self, conn: _Connection, data: bytes) -> None:
        try:
            conn.sock.sendall(data)
        except OSError:
            conn.vanished = True

    def _send_packet(self, conn: _Connection, payload: bytes) -> None:
        conn.last_sent = encode(payload)
        conn.retransmits = 0
        self._send(conn, conn.last_sent)

    def _handle(self, conn: _Connection, item: Item) -> _Outcome | None:
        if isinstance(item, BadPacket):
            if not self.stub.no_ack:
                self._send(conn, b"-")
        elif item is Ack.NACK:
            if conn.last_sent and conn.retransmits < MAX_RETRANSMIT and not self.stub.no_ack:
                conn.retransmits += 1
                self._send(conn, conn.last_sent)
        elif isinstance(item, Packet):
            return self._packet(conn, item.payload)
        return None

    def _packet(self, conn: _Connection, payload: bytes) -> _Outcome | None:
        if not self.stub.no_ack:
            self._send(conn, b"+")
        reply = self.stub.dispatch(payload)
        notes, self.stub.notes = self.stub.notes, []
        for note in notes:
            if not _shows_output(payload):   # gdb would take an O packet for the reply
                print(note, end="", file=self.log, flush=True)
                continue
            for i in range(0, len(note), NOTE_CHUNK):
                self._send_packet(conn, b"O" + to_hex(note[i:i + NOTE_CHUNK].encode()))
        if reply is not None:
            self._send_packet(conn, reply)
        if _resumes(payload):
            conn.resume_done()
        end = self.stub.end   # what the packet asked for, even if gdb hung up at once
        if end is SessionEnd.KILLED:
            return _Outcome.KILLED
        if end is SessionEnd.DETACHED:
            return _Outcome.DETACHED
        if end is SessionEnd.EXITED:
            return _Outcome.EXITED
        return _Outcome.VANISHED if conn.vanished else None


def _refuse(sock: socket.socket) -> None:
    """Answer a client's first packet (gdb's qSupported) with an error that gdb prints,
    then hang up."""
    decoder = Decoder()
    deadline = time.monotonic() + REFUSE_WAIT
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([sock], [], [], POLL)
            data = sock.recv(RECV) if ready else b""
            if ready and not data:
                return
            if any(isinstance(item, Packet) for item in decoder.feed(data)):
                sock.sendall(b"+" + encode(REFUSAL))
                return
    except OSError:
        pass
    finally:
        sock.close()


def _resumes(payload: bytes) -> bool:
    return payload[:1] in (b"c", b"C", b"s", b"S") or payload.startswith(b"vCont;") \
        or payload in (b"bs", b"bc")


def _shows_output(payload: bytes) -> bool:
    """Whether gdb prints O packets that come before the reply to this packet: only
    while the target runs and for `monitor`. To any other packet gdb would take an O
    packet for the reply itself, and the real reply for that of its next packet."""
    return _resumes(payload) or payload.startswith(b"qRcmd,")
