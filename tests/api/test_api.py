"""The Session facade: booting, running to events, stepping, registers and decoded
CSRs, memory by physical and virtual address, subscriptions, and bad input."""

from __future__ import annotations

import pytest

from privlab.abi.csr import Csr, Exc, Priv
from privlab.api import Session, parse_point, run_to
from privlab.build.images import Images
from privlab.errors import BadInput
from privlab.machine import Stop
from privlab.machine.events import TrapEvent, XretEvent
from privlab.machine.until import AtAddress
from privlab.trace.syscalls import SyscallRecord


def test_run_until_syscall_stops_at_the_trap_vector_with_the_call_decoded(
        hello: Session) -> None:
    r = hello.run_until_syscall("write")
    assert r.stop is Stop.EVENT and hello.priv == Priv.S
    assert hello.pc == hello.csr("stvec").field("BASE") << 2
    assert hello.csr("scause").cause == "user_ecall"
    assert hello.csr(Csr.SSTATUS).field("SPP") == 0
    assert (hello.reg("a7"), hello.reg("a0"), hello.reg("a2")) == (64, 1, 14)
    assert hello.read_string(hello.reg("a1")) == b"Hello, world!\n"


def test_run_until_trap_counts_traps_of_one_cause(hello: Session) -> None:
    r = hello.run_until_trap(2, "user_ecall")
    assert isinstance(r.event, TrapEvent) and r.event.args[7] == 93   # the second: exit


def test_run_until_priv_enters_user_mode_at_the_program_entry(hello: Session) -> None:
    hello.run_until_priv("U")
    entry = hello.info.address_of("_start", "hello")
    assert (hello.priv, hello.pc) == (Priv.U, entry)


def test_run_until_event_stops_right_after_that_event(hello: Session) -> None:
    r = hello.run_until_event(5)
    assert isinstance(r.event, XretEvent) and r.event.seq == 5 and len(hello.events) == 6
    with pytest.raises(BadInput, match="event #3 has already happened"):
        hello.run_until_event(3)


def _stepped_from_reset(images: Images, n: int) -> list[tuple[int, int]]:
    """(instret, pc) after each of n single steps from reset: the reference."""
    s = Session.boot("hello", images=images)
    try:
        out = []
        for _ in range(n):
            s.step()
            out.append((s.instret, s.pc))
        return out
    finally:
        s.close()


@pytest.mark.parametrize("target", [1, 5, 23, 2000])
def test_run_until_instret_stops_exactly_there(hello: Session, images: Images,
                                               target: int) -> None:
    """Not at the next block boundary: the core stops before the block that would
    cross the target and the last instructions are single-stepped."""
    ref = _stepped_from_reset(images, target + 10)
    at = next(i for i, (instret, _) in enumerate(ref) if instret == target)
    assert hello.run_until_instret(target).stop is Stop.EVENT
    assert (hello.instret, hello.pc) == ref[at]
    for i in range(1, 4):              # and a step after a run is one instruction
        hello.step()
        assert (hello.instret, hello.pc) == ref[at + i]


def test_a_plain_budget_ends_at_a_block_boundary_and_changes_nothing(images: Images) -> None:
    """--max-insns and a grader's slices stop at the first block boundary at or
    after the budget; splitting a run into slices leaves the guest's trace alone."""
    whole = Session.boot("hello", images=images)
    sliced = Session.boot("hello", images=images)
    try:
        assert whole.run().exit_status == 0
        r = sliced.run(max_insns=100_000)
        assert r.stop is Stop.BUDGET and 100_000 <= sliced.instret < 100_000 + 512
        while sliced.run(max_insns=12_345).stop is Stop.BUDGET:
            pass
        assert sliced.instret == whole.instret
        assert [e.to_json() for e in sliced.events] == [e.to_json() for e in whole.events]
    finally:
        whole.close()
        sliced.close()


def test_step_over_the_ecall_takes_the_trap(hello: Session, images: Images) -> None:
    hello.run_until_syscall("write")
    ecall = hello.events[-1]
    assert isinstance(ecall, TrapEvent)
    s2 = Session.boot("hello", images=images)
    try:
        assert s2.run(until=AtAddress(ecall.epc)).stop is Stop.BREAKPOINT
        assert s2.priv == Priv.U and s2.read_virt(s2.pc, 4) == (0x73).to_bytes(4, "little")
        s2.step()
        assert (s2.priv, s2.pc, s2.csr("sepc").value) == (Priv.S, ecall.vector, ecall.epc)
    finally:
        s2.close()


def test_registers_and_csrs_can_be_written(hello: Session) -> None:
    hello.run_until_syscall("write")
    hello.set_reg("t3", 0x1234)
    hello.set_csr("sscratch", 0xABC0)
    assert hello.reg("x28") == 0x1234 and hello.csr("sscratch").value == 0xABC0


def test_virtual_and_physical_reads_agree_through_the_walk(hello: Session) -> None:
    hello.run_until_syscall("write")
    buf = hello.reg("a1")
    walk = hello.translate(buf, "r", priv="U")
    assert walk.pa is not None
    assert hello.read_phys(int(walk.pa), 14) == hello.read_virt(buf, 14) == b"Hello, world!\n"
    hello.write_virt(buf, b"Howdy")
    assert hello.read_phys(int(walk.pa), 7) == b"Howdy, "


def test_subscriptions_see_traps_xrets_and_completed_syscalls(hello: Session) -> None:
    traps: list[TrapEvent] = []
    xrets: list[XretEvent] = []
    calls: list[SyscallRecord] = []
    h1, h2 = hello.on_trap(traps.append), hello.on_xret(xrets.append)
    hello.on_syscall(calls.append)
    hello.run_until_syscall("write")
    h1.remove()
    h2.remove()
    hello.run()
    assert traps and all(t.seq < 7 for t in traps) and all(x.seq < 7 for x in xrets)
    assert [(c.name, c.ret) for c in calls] == [("write", 14), ("exit", None)]
    assert calls[0].call_text() == 'write(1, "Hello, world!\\n", 14)'


def test_console_text(hello: Session) -> None:
    assert hello.run().status == 0 and hello.console == "Hello, world!\n"


@pytest.mark.parametrize(("call", "message"), [
    (lambda s: s.reg("x32"), "no register 'x32'"),
    (lambda s: s.csr("nosuch"), "unknown CSR 'nosuch'"),
    (lambda s: s.run_until_syscall("frobnicate"), "no system call named 'frobnicate'"),
    (lambda s: s.run_until_trap(cause="tea_break"), "unknown cause 'tea_break'"),
    (lambda s: s.run_until_symbol("no_such_symbol"), "no symbol 'no_such_symbol'"),
])
def test_bad_names_are_bad_input(hello: Session, call: object, message: str) -> None:
    with pytest.raises(BadInput, match=message):
        call(hello)  # type: ignore[operator]


@pytest.mark.parametrize("text", ["trap", "trap:x", "pc:", "priv:Q", "what:1", "trap:-1"])
def test_bad_points_are_rejected(text: str) -> None:
    with pytest.raises(BadInput):
        parse_point(text)


def test_run_to_a_point_past_the_end_says_why(hello: Session) -> None:
    with pytest.raises(BadInput, match=r"never reached syscall:read: the guest halted with "
                                       r"status 0 after 12 events"):
        run_to(hello, "syscall:read")


def test_bare_metal_program_session() -> None:
    from conformance.programs import build_program
    s = Session.bare(build_program("exc_ecall", "rv64"))
    try:
        assert s.run(max_insns=1_000_000).stop is Stop.HALT
        traps = [r for r in s.flow.rows() if r.is_trap]
        assert traps and traps[0].code == Exc.MACHINE_ECALL and traps[0].priv_from == Priv.M
        with pytest.raises(BadInput, match="no kernel"):
            s.processes()
    finally:
        s.close()


def test_stopping_just_before_a_timer_interrupt_leaves_the_trace_alone(images: Images) -> None:
    """A run takes a due interrupt at the next block boundary. Stopping a few
    instructions before the boundary where the machine timer was taken, and going on,
    must take it at that same boundary, not where the run resumed."""
    whole = Session.boot("compute", ["5000000"], images=images)
    try:
        assert whole.run().exit_status == 0
        reference = [e.to_json() for e in whole.events]
        timers = [e for e in whole.events if isinstance(e, TrapEvent) and e.interrupt
                  and e.name == "m_timer"]
        assert len(timers) >= 3
    finally:
        whole.close()
    for t in timers[:3]:
        for back in (1, 2, 3):
            s = Session.boot("compute", ["5000000"], images=images)
            try:
                assert s.run_until_instret(t.instret - back).stop is Stop.EVENT
                assert s.run().exit_status == 0
                assert [e.to_json() for e in s.events] == reference, (t.seq, back)
            finally:
                s.close()
