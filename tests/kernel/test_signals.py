"""Signals (kernel/signal.c): sigtests' exact console on privlab (RV64 and RV32) and on
QEMU 7.2, and the flagship trap flow of one caught signal, `privlab trace --user
sigdemo`: the kill ecall, the sret into the handler, the sigreturn ecall, and the sret
back to the instruction after the kill's ecall."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kernel.qemu_boot import boot_qemu, needs_qemu
from kernel.test_privlab_kernel import run_user
from privlab.abi.csr import Exc, Priv
from privlab.api import Session
from privlab.build.images import Images
from privlab.cli.main import main
from privlab.kernelinfo.symbols import ElfSymbols
from privlab.machine import Stop
from privlab.trace.flow import FlowRow
from privlab.trace.syscalls import signal_names, signal_set_text, signal_text

CASES = ["handler_gets_signum", "registers_after_a_handler", "handler_may_return",
         "handler_smashes_stack", "interrupted_loop_continues", "mask_blocks_until_unmasked",
         "sigprocmask_returns_old_mask", "handler_blocks_its_signal", "ignored_signals",
         "default_terminates", "fork_keeps_handlers", "exec_resets_handlers",
         "kill_another_process", "sigkill_ends_pipe_read", "sigkill_ends_waitpid",
         "stop_and_continue", "sigkill_ends_stopped", "kill_errors", "sigaction_errors",
         "sigreturn_without_signal"]

# The kernel's line for each child a signal's default action ended, printed just
# before the PASS of its case (the pids are the run's, the same on every machine).
KILLED_BEFORE = {
    "handler_blocks_its_signal": "[kernel] pid 11 (sigtests) killed by signal SIGTERM",
    "default_terminates": "[kernel] pid 14 (sigtests) killed by signal SIGTERM",
    "sigkill_ends_pipe_read": "[kernel] pid 21 (sigtests) killed by signal SIGKILL",
    "sigkill_ends_waitpid": "[kernel] pid 23 (sigtests) killed by signal SIGKILL",
    "sigkill_ends_stopped": "[kernel] pid 28 (sigtests) killed by signal SIGKILL",
}


def expected_console() -> str:
    lines = []
    for case in CASES:
        if case in KILLED_BEFORE:
            lines.append(KILLED_BEFORE[case])
        lines.append(f"PASS {case}")
    lines.append(f"sigtests: {len(CASES)} passed, 0 failed")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_sigtests_pass_with_the_exact_console(arch: str) -> None:
    m, r = run_user(arch, "sigtests")
    assert m.console.text() == expected_console()
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)


@needs_qemu
def test_sigtests_give_the_same_console_on_qemu(images: Images) -> None:
    boot = boot_qemu(images, bootargs="quiet init=sigtests")
    assert boot.output == expected_console()
    assert boot.status == 0


def test_signal_names_and_sets_come_from_abi_h() -> None:
    names = signal_names()
    assert (names[1], names[9], names[10], names[19], names[31]) == (
        "SIGHUP", "SIGKILL", "SIGUSR1", "SIGSTOP", "SIGSYS")
    assert len(names) == 31 and 0 not in names
    assert (signal_text(10), signal_text(0), signal_text(99)) == ("SIGUSR1", "0", "99")
    assert signal_set_text((1 << 2) | (1 << 10) | 1) == "SIGINT|SIGUSR1|0x1"
    assert signal_set_text(0) == "0"


# ---- the flagship loop ------------------------------------------------------------------

def _in_stub(images: Images, stub: str, pc: int) -> bool:
    """Is pc inside sigdemo's system-call stub of that name (from its ELF)?"""
    start, size = ElfSymbols(images.users["sigdemo"]).by_name[stub]
    return start <= pc < start + size


@pytest.fixture
def sigdemo(images: Images) -> Iterator[Session]:
    s = Session.boot("sigdemo", images=images, capture=True, bundled_disk=False)
    s.run()
    yield s
    s.close()


def _user_rows(s: Session) -> list[FlowRow]:
    """The traps from U and the srets to U, in order."""
    return [r for r in s.flow.rows()
            if (r.is_trap and r.priv_from == Priv.U) or (not r.is_trap and r.priv_to == Priv.U)]


def test_a_caught_signal_enters_the_handler_and_sigreturn_resumes_after_the_kill(
        sigdemo: Session, images: Images) -> None:
    symbols = ElfSymbols(images.users["sigdemo"]).by_name
    rows = _user_rows(sigdemo)
    kill = next(i for i, r in enumerate(rows) if r.syscall and r.syscall.name == "kill")
    ecall, into_handler = rows[kill], rows[kill + 1]
    assert ecall.code == Exc.USER_ECALL and _in_stub(images, "kill", ecall.pc)
    assert ecall.syscall is not None and ecall.syscall.call_text() == "kill(1, SIGUSR1)"
    # The sret that ends the kill goes to the handler, not to the instruction after
    # the ecall, with a0 = the signal number.
    assert not into_handler.is_trap and into_handler.returns_from == ecall.seq
    assert into_handler.target == symbols["on_usr1"][0] != ecall.pc + 4
    assert into_handler.args[0] == 10 and into_handler.signal == "→ handler for SIGUSR1"
    # The handler prints (write, returned to the handler), then calls sigreturn.
    sigreturn = next(r for r in rows[kill + 2:] if r.syscall and r.syscall.name == "sigreturn")
    assert _in_stub(images, "sigreturn", sigreturn.pc)
    between = rows[kill + 2:rows.index(sigreturn)]
    assert [r.syscall.name for r in between if r.is_trap and r.syscall] == ["write"]
    # sigreturn's sret goes back to where the kill would have returned, which the kill
    # now does, with its own result (0).
    back = rows[rows.index(sigreturn) + 1]
    assert not back.is_trap and back.returns_from == sigreturn.seq
    assert back.target == ecall.pc + 4 and back.signal == "back from SIGUSR1 handler"
    assert back.syscall is ecall.syscall and ecall.syscall.ret == 0
    assert sigreturn.syscall is not None and sigreturn.syscall.outcome == "noreturn"
    assert sigdemo.console == ("sigdemo: in the handler for signal 10\n"
                               "sigdemo: back in main, kill returned 0\n")


def test_cli_timeline_annotates_the_signal_loop(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--no-drive", "--user", "sigdemo"]) == 0
    # seq and instret (19 columns), the lanes (18), the path (8), the event.
    rows = [(line[19:37], line[37:45].strip(), line[45:].rstrip())
            for line in capsys.readouterr().out.splitlines()]
    events = [event for lanes, path, event in rows   # traps from U, srets to U
              if (lanes.startswith("●") and path == "U▸S") or
              (lanes.startswith("◀") and path == "U")]
    at = next(i for i, e in enumerate(events) if e.startswith("user_ecall  kill("))
    assert events[at].startswith("user_ecall  kill(1, SIGUSR1)  pid 1  at kill+0x")
    assert events[at + 1] == "sret  → handler for SIGUSR1  pid 1  to on_usr1"
    assert events[at + 2].startswith('user_ecall  write(1, "sigdemo: in the handler')
    assert events[at + 3].startswith("sret  → 38  write  pid 1  to write+0x")
    assert events[at + 4].startswith("user_ecall  sigreturn()  pid 1  at sigreturn+0x")
    assert events[at + 5].startswith("sret  back from SIGUSR1 handler  → 0  kill  pid 1  "
                                     "to kill+0x")
    sigaction = next(e for e in events if e.startswith("user_ecall  sigaction("))
    assert sigaction.startswith("user_ecall  sigaction(SIGUSR1, {handler=0x")
    assert ", mask=0}, NULL)  pid 1" in sigaction


def test_flow_follows_a_returning_handler_and_one_handler_after_another(
        images: Images) -> None:
    # handler_may_return: the handler returns to ra = SIGRETURN_PC, which faults.
    # handler_blocks_its_signal: its first sigreturn goes straight into the handler
    # again (the SIGUSR1 it sent itself), whose sigreturn lets SIGTERM end the child.
    s = Session.boot("sigtests", ["handler_may_return", "handler_blocks_its_signal"],
                     images=images, capture=True, bundled_disk=False)
    s.run()
    try:
        _check_notes(s)
    finally:
        s.close()


def _check_notes(s: Session) -> None:
    assert s.console.splitlines()[-1] == "sigtests: 2 passed, 0 failed"
    notes = [(r.name, r.signal) for r in s.flow.rows() if r.signal]
    assert notes == [
        ("sret", "→ handler for SIGUSR1"),
        ("exec_page_fault", "the SIGUSR1 handler returned"),
        ("sret", "back from SIGUSR1 handler"),
        ("sret", "→ handler for SIGUSR1"),
        ("sret", "→ handler for SIGUSR1"),
    ]
