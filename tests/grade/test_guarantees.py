"""The grader's guarantees in isolation: which returns to U-mode the ABI allows
(harness/grade/resumes.py, on hand-made event sequences), and a grader without
Landlock refusing to build. The cheating submissions of test_cheats.py run the real
thing."""

from __future__ import annotations

from pathlib import Path

import pytest

from privlab.abi.csr import Exc, Priv
from privlab.abi.syscall_table import load_syscall_table
from privlab.cli.main import main
from privlab.course.sandbox import SandboxError
from privlab.course.submission_build import build_submission
from privlab.grade.resumes import CallRules, check_resumes
from privlab.trace import Event, TrapEvent, XretEvent
from privlab.trace.syscalls import call_specs

from .conftest import variant

ENTRY, SATP, CHILD = 0x10000, 0x8000000000000081, 0x8000000000000099
RULES = CallRules.from_specs(call_specs(load_syscall_table()))
NUMBERS = {name: number for number, name in RULES.names.items()}


class Events:
    """A run's events, written one call at a time."""

    def __init__(self) -> None:
        self.log: list[Event] = []

    def trap(self, epc: int, *, code: int = Exc.USER_ECALL, interrupt: bool = False,
             satp: int = SATP,
             args: tuple[int, ...] = (0,) * 8) -> Events:
        self.log.append(TrapEvent(len(self.log), 0, interrupt, code, code, epc, 0, Priv.U,
                                  Priv.S, 0, 0, 0, satp, args))
        return self

    def call(self, name: str, epc: int, *args: int, satp: int = SATP) -> Events:
        regs = (*args, *(0,) * (7 - len(args)), NUMBERS[name])
        return self.trap(epc, satp=satp, args=regs)

    def sret(self, pc: int, satp: int = SATP) -> Events:
        self.log.append(XretEvent(len(self.log), 0, "sret", 0, pc, Priv.S, Priv.U, 0, 0,
                                  satp, 0))
        return self

    def check(self) -> str | None:
        found = check_resumes(self.log, [ENTRY], RULES)
        return None if found is None else str(found)


def test_a_program_resumes_after_its_ecalls_and_where_interrupts_hit() -> None:
    run = (Events().sret(ENTRY).trap(0x10010, args=(1, 0, 0, 0, 0, 0, 0, 64)).sret(0x10014)
           .trap(0x10020, code=5, interrupt=True).sret(0x10020)
           .trap(0x10030, code=13).sret(0x10030))
    assert run.check() is None


def test_a_return_after_exit_is_named() -> None:
    run = Events().sret(ENTRY).call("exit", 0x10040).sret(0x10100)
    assert run.check() == (
        "U-mode resumed at 0x10100 (event #2, satp 0x8000000000000081) after its system "
        "call exit (ecall at 0x10040), which never returns: the kernel made an exited "
        "process run again")


def test_a_return_that_skips_or_redirects_a_call_is_named() -> None:
    run = Events().sret(ENTRY).call("sigreturn", 0x10040).sret(0x10048)
    assert run.check() is not None and "which is not after its system call sigreturn" \
        in (run.check() or "")
    assert Events().sret(0x10200).check() == (
        "U-mode resumed at 0x10200 (event #0, satp 0x8000000000000081), which is no "
        "program's entry point: a process's first return to user mode must be at an ELF "
        "entry or a fork's return")


def test_fork_children_threads_alarm_handlers_and_sigreturn_are_allowed() -> None:
    handler, thread = 0x10300, 0x10400
    run = (Events().sret(ENTRY).call("fork", 0x10040).sret(0x10044)
           .sret(0x10044, satp=CHILD)                         # the child's first return
           .call("thread_create", 0x10050, thread).sret(0x10054).sret(thread)
           .call("sigalarm", 0x10060, 2, handler).sret(0x10064)
           .trap(0x10070, code=5, interrupt=True).sret(handler)   # the alarm fires
           .call("sigreturn", 0x10310).sret(0x10070))             # back where it hit
    assert run.check() is None
    # Without the registration the same handler entry is a forged return.
    forged = Events().sret(ENTRY).trap(0x10070, code=5, interrupt=True).sret(handler)
    assert "which is not after its last trap (s_timer at 0x10070)" in (forged.check() or "")


def test_a_grader_without_landlock_refuses_to_build(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("privlab.course.submission_build.landlock_abi", lambda: 0)
    monkeypatch.delenv("PRIVLAB_UNSEALED_BUILD", raising=False)
    with pytest.raises(SandboxError, match=r"^cannot seal the submission's build: this "
                       r"Linux \(.*\) has no Landlock: .*; set PRIVLAB_UNSEALED_BUILD=1 to "
                       r"grade without the sandbox"):
        build_submission(variant(tmp_path, {}), tmp_path / "slot")


def test_privlab_grade_without_landlock_refuses_in_one_line_with_status_1(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("privlab.course.submission_build.landlock_abi", lambda: 0)
    monkeypatch.delenv("PRIVLAB_UNSEALED_BUILD", raising=False)
    status = main(["grade", "taskinfo", "--submission", str(tmp_path),
                   "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 1 and len(err.splitlines()) == 1, err
    assert err.startswith("privlab: cannot seal the submission's build: "), err
    assert not (tmp_path / "out").exists()
