"""Reverse execution through the real gdb-multiarch: reverse-stepi (the bs
packet) and reverse-continue (bc), advertised in qSupported as ReverseStep+ and
ReverseContinue+; the stub records the run (harness/api/timetravel.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

from gdb.helpers import ECALL, Served, boot, find_insn
from privlab.build.images import Images
from privlab.gdb.stub import Stub

Gdb = Callable[..., str]
Serve = Callable[..., Served]


def values(out: str) -> list[str]:
    return re.findall(r"^\$\d+ = (.*)$", out, re.M)


def test_qsupported_advertises_reverse_step_and_continue(images: Images) -> None:
    m = boot(images)
    try:
        reply = Stub(m).dispatch(b"qSupported:multiprocess+;swbreak+")
        assert reply is not None and b";ReverseStep+;ReverseContinue+" in reply
        assert Stub(m, reverse=False).dispatch(b"qSupported:x+").find(b"Reverse") == -1  # type: ignore[union-attr]
        assert Stub(m, reverse=False).dispatch(b"bs") == b""    # unknown packet: empty
    finally:
        m.close()


def test_reverse_stepi_out_of_an_ecall_restores_the_csrs(
        served: Serve, gdb: Gdb, images: Images) -> None:
    s = served("hello")
    ecall = find_insn(images.users["hello"], "write", ECALL)
    out = gdb(s.port, [f"hbreak *{ecall:#x}", "continue",
                       "p $scause", "p/x $sepc", "p ($sstatus >> 8) & 1", "p $a7",
                       "stepi", "p $priv", "p $scause", f"p $sepc == {ecall:#x}",
                       "reverse-stepi", "p $priv", f"p $pc == {ecall:#x}",
                       "p $scause", "p/x $sepc", "p ($sstatus >> 8) & 1", "p $a7",
                       "stepi", "p $priv", "p $scause", "kill"])
    v = values(out)
    assert len(v) == 15, out
    before, after_step, back, again = v[0:4], v[4:7], v[7:13], v[13:15]
    assert after_step == ["1", "8", "1"], out          # in S at the vector: user_ecall
    assert back[:2] == ["0", "1"], out                 # back in U, at the ecall
    assert back[2:] == before, out                     # scause, sepc, SPP, a7 as before
    assert again == ["1", "8"], out                    # and forward again the same
    assert before[3] == "64", out                      # write


def test_reverse_continue_returns_to_the_previous_breakpoint_hit(
        served: Serve, gdb: Gdb, images: Images) -> None:
    """hello makes two system calls, write (64) then exit (93): from the second stop
    at syscall(), reverse-continue goes back to the first, and once more to the start
    of the recording (gdb: no more reverse-execution history)."""
    s = served("hello")
    out = gdb(s.port, ["break syscall", "continue", "p cpus[0].proc->trapframe->a7",
                       "p $mcycle == 0", "continue", "p cpus[0].proc->trapframe->a7",
                       "reverse-continue", "p cpus[0].proc->trapframe->a7",
                       "p/x $pc", "reverse-continue", "p/x $pc",
                       "continue", "p cpus[0].proc->trapframe->a7", "kill"])
    v = values(out)
    assert [v[0], v[2], v[3]] == ["64", "93", "64"], out
    assert "No more reverse-execution history." in out, out
    assert v[5] == "0x80000000", out                   # the reset vector: the start
    assert v[6] == "64", out                           # forward again: the same write
