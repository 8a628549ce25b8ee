"""Whatever a client sends, and however it leaves, the stub keeps the machine and
keeps answering."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from gdb.helpers import Served, boot, symbol
from gdb.rsp import Client
from privlab.build.images import Images
from privlab.gdb.codec import checksum, encode
from privlab.machine import Stop

Serve = Callable[..., Served]
STOPPED = b"T05thread:1;"
G_REPLY_LENGTH = 33 * 16          # x0..x31 and pc, 8 bytes each in hex
LONG = ["1000000000"]
WAIT = 20.0


def still_answers(port: int) -> Client:
    c = Client(port)
    assert c.ask(b"?") == STOPPED
    assert len(c.ask(b"g")) == G_REPLY_LENGTH
    return c


def wait_for(cond: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not cond():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


MALFORMED = [b"m", b"mzz,4", b"m80000000", b"m80000000,", b"M80000000,4:zz", b"M80000000,2:00",
             b"G12", b"Gzz", b"P1", b"P1=zz", b"P1=00", b"pzz", b"p", b"p99999", b"Z0",
             b"Z0,xyz,2", b"Z0,80000001,2", b"Z9,0,0", b"Z2,0,0", b"X80000000,4:ab", b"X8,zz:",
             b"qXfer:features:read:target.xml:zz", b"qXfer:features:read:other.xml:0,10",
             b"H", b"Hq1", b"Hg7", b"T7", b"vCont;x", b"vCont;s:7", b"qRcmd,zz",
             b"P1041=0200000000000000", b"c80000000zz"]


def test_malformed_packets_get_errors_and_the_stub_answers_on(served: Serve) -> None:
    s = served("hello")
    c = Client(s.port)
    for payload in MALFORMED:
        reply = c.ask(payload)
        assert reply.startswith(b"E") or reply == b"", (payload, reply)
        assert c.ask(b"?") == STOPPED, payload
    assert s.machine.hart.pc == 0x80000000 and s.machine.hart.state.instret == 0


def test_unknown_packets_get_the_empty_reply(served: Serve) -> None:
    c = Client(served("hello").port)
    for payload in (b"qFooBar", b"vFlashErase:0,10", b"!", b"jThreads", b"QNonStop:1",
                    b"qTStatus", b"vMustReplyEmpty", b"i", b"\x7f"):   # bc, bs: reverse
        assert c.ask(payload) == b"", payload


def test_bad_checksum_is_refused_and_not_executed(served: Serve) -> None:
    s = served("hello")
    c = Client(s.port)
    before = c.ask(b"m80000000,4")
    body = b"M80000000,4:ffffffff"
    c.raw(b"$" + body + b"#%02x" % ((checksum(body) + 1) & 0xFF))
    assert c.ack_item().value == "-"
    assert c.ask(b"m80000000,4") == before


def test_client_vanishing_mid_packet_leaves_the_machine_to_the_next_client(
        served: Serve) -> None:
    s = served("hello")
    first = Client(s.port)
    assert first.ask(b"s") == STOPPED
    first.raw(b"$m8000")      # half a packet, then gone
    first.close()
    second = still_answers(s.port)
    assert s.machine.hart.state.instret == 1
    assert second.ask(b"c") == b"W00"
    assert s.finish().stop is Stop.HALT


def test_client_vanishing_while_the_guest_runs_stops_it(served: Serve) -> None:
    s = served("compute", LONG)
    first = Client(s.port)
    first.raw(encode(b"c"))
    wait_for(lambda: s.machine.hart.state.instret > 5_000_000, "the guest never ran")
    first.close()
    second = Client(s.port)
    assert second.ask(b"?") in (STOPPED, b"T02thread:1;")
    at = s.machine.hart.state.instret
    time.sleep(0.2)
    assert s.machine.hart.state.instret == at   # held, not running
    assert second.ask(b"vKill;1") == b"OK"
    assert s.finish().stop is Stop.USER


def test_interrupt_byte_stops_a_running_guest(served: Serve) -> None:
    s = served("compute", LONG)
    c = Client(s.port)
    c.raw(encode(b"c"))
    wait_for(lambda: s.machine.hart.state.instret > 5_000_000, "the guest never ran")
    c.raw(b"\x03")
    assert c.packet() == b"T02thread:1;"
    assert c.ask(b"?") == b"T02thread:1;"


def test_interrupt_right_behind_the_continue_stops_at_once(served: Serve) -> None:
    s = served("compute", LONG)
    c = Client(s.port)
    c.raw(encode(b"c") + b"\x03")
    assert c.packet() == b"T02thread:1;"
    assert s.machine.hart.state.instret < 5_000_000


def test_stale_interrupt_after_a_stop_does_not_stop_the_next_continue(
        served: Serve) -> None:
    s = served("hello")
    c = Client(s.port)
    assert c.ask(b"s") == STOPPED
    c.raw(b"\x03")            # crossed the stop reply on the wire
    assert c.ask(b"c") == b"W00"


# -- fuzzing ----------------------------------------------------------------------------

SEED = 20240601
ROUNDS = 5000
NUMBERS = [0, 1, 2, 4, 8, 0x20, 0x41, 0x100, 0x1000, 0x10000, 0x7FFFFFFF, 0x80000000,
           0x80200000, 0x87FFFFF8, 0x3FFFFFF000, (1 << 64) - 1, 1 << 70]
COMMANDS = ["?", "g", "G{hex}", "p{num}", "P{num}={hex}", "m{num},{num}", "M{num},{num}:{hex}",
            "X{num},{num}:{bytes}", "Z{kind},{num},{num}", "z{kind},{num},{num}",
            "H{gc}{tid}", "T{tid}", "qSupported:{text}", "qXfer:features:read:{annex}:{num},{num}",
            "qAttached", "qC", "qfThreadInfo", "qsThreadInfo", "qRcmd,{monitor}", "qSymbol::",
            "QStartNoAckMode", "vCont?", "vMustReplyEmpty", "q{text}", "v{text}", "{text}"]
MONITOR = ["help", "traps", "traps 5", "traps x", "csr", "pagetable", "translate 0x10000",
           "translate", "phys 0x80000000 16", "phys 0 16", "phys-write 0x80400000 00",
           "memory physical", "memory virtual", "memory sideways", "status", "'", ""]


def _field(rng: random.Random, name: str) -> str:
    if name == "num":
        n = rng.choice([*NUMBERS, rng.getrandbits(rng.choice((8, 32, 64)))])
        return rng.choice([f"{n:x}", f"{n:X}", "", "-1", "zz", f"{n:x}{n:x}"])
    if name == "hex":
        return "".join(rng.choice("0123456789abcdefXz") for _ in range(rng.randrange(0, 40)))
    if name == "bytes":
        return "".join(chr(rng.randrange(32, 127)) for _ in range(rng.randrange(0, 12)))
    if name == "kind":
        return str(rng.randrange(0, 6))
    if name == "gc":
        return rng.choice("gcx")
    if name == "tid":
        return rng.choice(["0", "1", "-1", "2", "p1.1", "zz", ""])
    if name == "annex":
        return rng.choice(["target.xml", "x.xml", ""])
    if name == "monitor":
        return rng.choice(MONITOR).encode().hex()
    return "".join(chr(rng.randrange(32, 127)) for _ in range(rng.randrange(0, 20)))


def fuzz_packet(rng: random.Random) -> bytes:
    template = rng.choice(COMMANDS)
    out = ""
    while "{" in template:
        head, _, rest = template.partition("{")
        name, _, template = rest.partition("}")
        out += head + _field(rng, name)
    payload = (out + template).encode()
    if rng.random() < 0.1:   # damage it
        i = rng.randrange(len(payload) + 1)
        payload = payload[:i] + bytes(rng.randrange(256) for _ in range(3)) + payload[i:]
    return payload


SESSION_ENDERS = (b"c", b"C", b"s", b"S", b"k", b"D", b"vCont;", b"vKill", b"vAttach", b"R",
                  b"vRun", b"r")


def test_fuzzed_packets_never_kill_the_stub(served: Serve) -> None:
    rng = random.Random(SEED)
    s = served("hello")
    c = Client(s.port, ack=False)
    for _ in range(ROUNDS):
        payload = fuzz_packet(rng)
        if payload.startswith(SESSION_ENDERS):
            continue
        roll = rng.random()
        if roll < 0.8:
            c.raw(encode(payload))
            c.packet()
        elif roll < 0.9:   # a bad checksum: refused
            c.raw(b"$" + payload.replace(b"#", b"") + b"#zz")
        else:              # line noise, then make sure framing is back in step
            c.raw(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64))) + b"#00")
            c.raw(encode(b"qC"))
            while c.packet() != b"QC1":
                pass
    c.raw(encode(b"?"))
    assert c.packet() == STOPPED
    assert s.thread.is_alive()
    assert not [t for t in c.console if "internal error" in t]
    assert "internal error" not in s.log.getvalue()
    c.close()
    still_answers(s.port)


# -- sessions ---------------------------------------------------------------------------

def test_attaching_to_a_free_running_guest_stops_it(served: Serve) -> None:
    s = served("compute", LONG, wait=False)
    wait_for(lambda: s.machine.hart.state.instret > 5_000_000, "the guest never ran")
    c = Client(s.port)
    assert c.ask(b"?") == STOPPED
    at = s.machine.hart.state.instret
    time.sleep(0.2)
    assert s.machine.hart.state.instret == at


def test_after_detach_the_guest_runs_and_a_new_gdb_can_attach(served: Serve) -> None:
    s = served("compute", LONG)
    c = Client(s.port)
    assert c.ask(b"Z0,10000,2") == b"OK"        # removed by the detach
    assert c.ask(b"D") == b"OK"
    c.close()
    wait_for(lambda: s.machine.hart.state.instret > 5_000_000, "the guest did not run on")
    again = still_answers(s.port)
    assert s.machine.breakpoints == set()
    assert again.ask(b"vKill;1") == b"OK"
    assert s.finish().stop is Stop.USER


def test_instruction_budget_ends_the_session_with_status_124(
        served: Serve, images: Images) -> None:
    plain = boot(images, "hello").run(max_insns=1000)   # where --max-insns stops
    s = served("hello", max_insns=1000)
    c = Client(s.port)
    assert c.ask(b"c") == b"W7c"
    assert any("instruction budget exhausted" in t for t in c.console)
    result = s.finish()
    assert result.stop is Stop.BUDGET and result.status == 124
    assert result.instret == plain.instret


def test_memory_read_running_into_an_unmapped_page_is_short(
        served: Serve, images: Images) -> None:
    s = served("hello")
    c = Client(s.port)
    assert c.ask(b"Z1,%x,2" % symbol(images.users["hello"], "write")) == b"OK"
    assert c.ask(b"c").startswith(b"T05")
    page = 0x10000
    while not c.ask(b"m%x,1" % (page + 0x1000)).startswith(b"E"):
        page += 0x1000
    end = page + 0x1000          # first unmapped page after hello's image
    assert len(c.ask(b"m%x,8" % (end - 4))) == 8          # 4 bytes, in hex
    assert c.ask(b"m%x,8" % end) == b"E14"


def test_a_second_debugger_is_turned_away_at_once_with_the_reason(
        served: Serve, gdb_bare: Callable[..., str]) -> None:
    s = served("hello")
    first = still_answers(s.port)
    start = time.monotonic()
    out = gdb_bare(s.port, ["set architecture riscv:rv64"])
    assert time.monotonic() - start < 10, out
    assert "another debugger is attached" in out, out
    assert "Ignoring packet error" not in out and "unrecognized item" not in out, out
    assert first.ask(b"?") == STOPPED           # the first session goes on
    assert "refused a second debugger" in s.log.getvalue()


def test_a_new_session_starts_with_virtual_addresses(served: Serve) -> None:
    s = served("hello")
    first = Client(s.port)
    assert first.ask(b"qRcmd," + b"memory physical".hex().encode()) == b"OK"
    first.close()                      # gone without a word
    second = still_answers(s.port)
    assert second.ask(b"qRcmd," + b"memory".hex().encode()) == b"OK"
    assert second.console[-1] == "gdb's memory accesses use virtual addresses\n"


def test_an_address_longer_than_64_bits_is_an_error_not_wrapped_round(served: Serve) -> None:
    s = served("hello")
    c = Client(s.port)
    ram = c.ask(b"m80000000,4")
    assert len(ram) == 8 and not ram.startswith(b"E")
    assert c.ask(b"m180000000" + b"0" * 8 + b",4") == b"E01"    # 2^68 + 2^31 + ...: wraps to RAM
    assert c.ask(b"M1" + b"0" * 8 + b"80000000,4:00000000") == b"E01"
    assert c.ask(b"m80000000,4") == ram                         # nothing written


def test_a_client_that_acknowledges_nothing_drives_the_guest_as_mit_gradelib_does(
        served: Serve, images: Images) -> None:
    """MIT 6.1810's grading scripts (gradelib.py) attach to `make qemu-gdb` with a
    client of their own: it sends `Z1,ADDR,1` and `c` back to back without waiting for
    a reply, never acknowledges a packet, and takes the first T05 as the breakpoint."""
    s = served("hello")
    c = Client(s.port, ack=False)
    write = symbol(images.users["hello"], "write")
    c.raw(encode(b"Z1,%x,1" % write) + encode(b"c"))
    assert c.packet() == b"OK"
    assert c.packet() == STOPPED
    assert s.machine.hart.pc == write
    c.raw(encode(b"z1,%x,1" % write) + encode(b"c"))
    assert c.packet() == b"OK"
    assert c.packet() == b"W00"
    assert s.finish().exit_status == 0
