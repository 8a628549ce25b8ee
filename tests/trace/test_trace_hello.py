"""`privlab trace --user hello`: the exact U→S(→M→S)→U flow of hello's write, the
decoded call and its result, JSON Lines, filters, and bad input."""

from __future__ import annotations

import json
import re

import capstone
import pytest
from elf_bytes import elf_code

from privlab.abi.csr import Exc, Priv
from privlab.api import Session
from privlab.build.images import Images
from privlab.cli.main import main
from privlab.inspect.timeline import describe
from privlab.kernelinfo.symbols import ElfSymbols
from privlab.machine import Stop
from privlab.trace.flow import FlowFilter


def _ecall_of(images: Images, program: str, stub: str) -> int:
    """Where the ecall sits in the program's syscall stub, from its ELF."""
    start, size = ElfSymbols(images.users[program]).by_name[stub]
    cs = capstone.Cs(capstone.CS_ARCH_RISCV, capstone.CS_MODE_RISCV64 | capstone.CS_MODE_RISCVC)
    return next(i.address for i in cs.disasm(elf_code(images.users[program], start, size), start)
                if i.mnemonic == "ecall")


def test_write_goes_u_s_m_s_u_with_decoded_call_and_result(hello: Session,
                                                           images: Images) -> None:
    hello.run()
    rows = list(hello.flow.rows(FlowFilter(syscalls=frozenset({"write"}))))
    assert [(r.name, r.priv_from, r.priv_to) for r in rows] == [
        ("user_ecall", Priv.U, Priv.S), ("supervisor_ecall", Priv.S, Priv.M),
        ("mret", Priv.M, Priv.S), ("sret", Priv.S, Priv.U)]
    ecall, sbi, mret, sret = rows
    assert (ecall.code, ecall.pc) == (Exc.USER_ECALL, _ecall_of(images, "hello", "write"))
    assert ecall.syscall is not None and sret.syscall is ecall.syscall
    assert ecall.syscall.call_text() == 'write(1, "Hello, world!\\n", 14)'
    assert (ecall.syscall.ret, ecall.syscall.pid, ecall.syscall.process) == (14, 1, "hello")
    assert sbi.note == "sbi DBCN.WRITE" and mret.returns_from == sbi.seq
    assert sret.returns_from == ecall.seq and sret.target == ecall.pc + 4
    assert [p.letter for p in sbi.path] == ["U", "S", "M"]


def test_cli_text_shows_the_flow_rows(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--syscall", "write", "--user", "hello"]) == 0
    out = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    events = [line[19:] for line in out[1:5]]
    assert events[0].startswith('●━━━━━▶     ·     U▸S     user_ecall  write(1, "Hello, world!'
                                '\\n", 14)  pid 1  at write+0x')
    assert events[1].startswith("·     ●━━━━━▶     U▸S▸M   supervisor_ecall  sbi DBCN.WRITE  pid 1"
                                "  at sbi_console_write+0x")
    assert events[2].startswith("·     ◀━━━━━●     U▸S     mret  → 0  pid 1  to ")
    assert events[3].startswith("◀━━━━━●     ·     U       sret  → 14  write  pid 1  to write+0x")
    assert len(out) == 5


def test_cli_jsonl_lines_follow_the_architecture_format(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--format", "jsonl", "--user", "hello"]) == 0
    objs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = [o["kind"] for o in objs]
    assert set(kinds) == {"trap", "xret", "syscall"}
    assert [o["seq"] for o in objs if o["kind"] != "syscall"] == \
        list(range(len([k for k in kinds if k != "syscall"])))
    trap = next(o for o in objs if o["kind"] == "trap" and o["code"] == 8)
    assert {"seq", "instret", "interrupt", "code", "cause", "name", "epc", "tval", "from",
            "to"} <= trap.keys() and (trap["from"], trap["to"]) == ("U", "S")
    calls = [o for o in objs if o["kind"] == "syscall"]
    assert [(c["name"], c["ret"], c["outcome"]) for c in calls] == [
        ("write", 14, "returned"), ("exit", None, "noreturn")]


def test_cli_cause_and_range_filters(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--no-drive", "--cause", "supervisor_ecall", "--range", "5:",
                 "--user", "hello"]) == 0
    out = capsys.readouterr().out.splitlines()
    body = [line for line in out[1:] if "supervisor_ecall" in line or "mret" in line]
    assert body and all("U▸S▸M" in line or "mret" in line for line in body)
    assert not any("user_ecall" in line for line in out)


def test_cli_pid_filter_rejects_an_unknown_pid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--pid", "7", "--user", "hello"]) == 2
    assert capsys.readouterr().err == \
        "privlab: no process with pid 7 in this trace (pids seen: 1)\n"


@pytest.mark.parametrize(("argv", "message"), [
    (["trace", "--range", "x", "--user", "hello"],
     "privlab: --range 'x': expected START:STOP (either may be empty)\n"),
    (["trace", "--user", "no-such-program"], None),
    (["trace", "-o", "/no/such/dir/t.json", "--user", "hello"],
     "privlab: /no/such/dir/t.json: directory /no/such/dir does not exist\n"),
    (["trace", "--bios", "none"],
     "privlab: --bios none needs --kernel ELF (the program to run from M-mode)\n"),
])
def test_cli_bad_input_is_one_line_and_status_2(
        argv: list[str], message: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("privlab: ") and "Traceback" not in err
    if message is not None:
        assert err == message


def test_without_capture_pointers_are_addresses(images: Images) -> None:
    s = Session.boot("hello", images=images, capture=False)
    s.run()
    write = s.syscalls[0]
    assert write.call_text() == f"write(1, {write.args[1]:#x}, 14)" and write.ret == 14


def test_exec_argv_and_child_output_are_decoded(images: Images) -> None:
    s = Session.boot("exec", images=images, capture=True)
    s.run(max_insns=200_000_000)
    calls = {c.name: c for c in s.syscalls}
    assert "exec" in calls or "spawn" in calls
    call = calls.get("exec") or calls["spawn"]
    assert call.inputs and call.inputs[0].text.startswith('"')
    assert call.inputs[1].text.startswith('["')


def test_capture_limit_reads_the_first_calls_then_runs_on_unchanged(images: Images) -> None:
    """forktree's only write is its 43rd call: captured under a limit of 70, shown as
    an address under a limit of 12, and the run itself is the same either way."""
    runs = {}
    for limit in (70, 12):
        s = Session.boot("forktree", images=images, capture=True, capture_limit=limit)
        result = s.run(max_insns=300_000_000)
        assert result.exit_status == 0
        runs[limit] = (s.instret, [c.name for c in s.syscalls], s.syscalls)
    assert runs[70][:2] == runs[12][:2] and len(runs[12][1]) == 44
    write70, write12 = runs[70][2][42], runs[12][2][42]
    assert write70.call_text() == 'write(1, "forktree: 15 of 15 processes\\n", 29)'
    assert write12.call_text() == f"write(1, {write12.args[1]:#x}, 29)"


def test_capture_limit_keeps_the_instruction_budget(images: Images) -> None:
    plain = Session.boot("forktree", images=images)
    limited = Session.boot("forktree", images=images, capture=True, capture_limit=5)
    ends = [s.run(max_insns=2_000_000) for s in (plain, limited)]
    assert [r.stop for r in ends] == [Stop.BUDGET, Stop.BUDGET]
    assert plain.instret == limited.instret


def test_cli_capture_limit_must_not_be_negative(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--capture-limit", "-1", "--user", "hello"]) == 2
    assert capsys.readouterr().err == "privlab: --capture-limit must not be negative\n"


@pytest.mark.parametrize("capture", [True, False])
def test_each_fork_child_is_linked_to_its_own_fork(images: Images, capture: bool) -> None:
    """forktree 2: pid 1 forks 2 and 3, each of which forks two more. Each child's
    first sret names the fork that returned its pid; calls carry their own pid."""
    s = Session.boot("forktree", ["2"], images=images, capture=capture)
    assert s.run(max_insns=100_000_000).exit_status == 0
    flow = s.flow
    rows = list(flow.rows())
    forks = {r.seq: r.syscall for r in rows if r.syscall is not None
             and r.syscall.name == "fork" and r.syscall.entry_seq == r.seq}
    children = [int(r.note.rsplit("#", 1)[1]) for r in rows
                if r.note.startswith("child's return from fork()")]
    assert len(forks) == 6 and sorted(children) == sorted(forks)
    # children run in the order they were forked, each fork returning its child's pid
    assert [forks[c].ret for c in children] == [2, 3, 4, 5, 6, 7]
    if capture:
        exits = sorted(c.pid for c in flow.syscalls if c.name == "exit")
        assert exits == [1, 2, 3, 4, 5, 6, 7]
        assert {c.pid for c in flow.syscalls if c.name == "fork"} == {1, 2, 3}


def test_cli_summary_counts_only_the_calls_in_the_rows_shown(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--no-drive", "--user", "sleep", "0"]) == 0
    whole = capsys.readouterr().out.splitlines()
    assert whole[-3].split() == ["get_time", "4", "0"]
    # rows 6..9: the first two get_time calls and their returns
    assert main(["trace", "--no-drive", "--range", "6:10", "--user", "sleep", "0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 + 4 + 2 and out[-1].split() == ["get_time", "2", "0"]


def test_entry_shows_output_pointers_and_the_return_what_they_received(
        images: Images) -> None:
    s = Session.boot("sleep", ["0"], images=images, capture=True)
    s.run()
    rows = [r for r in s.flow.rows() if r.syscall is not None and r.syscall.name == "get_time"]
    entry, ret = rows[0], rows[1]
    tv = entry.syscall.args[0] if entry.syscall else 0
    assert describe(entry, 64).plain == f"user_ecall  get_time({tv:#x}, 0)  pid 1"
    assert re.fullmatch(r"sret  → 0  get_time  tv=\{sec=0, usec=\d+\}  pid 1",
                        describe(ret, 64).plain)


def test_an_mret_shows_a_result_only_when_it_ends_an_sbi_call(images: Images) -> None:
    """An mret after the machine timer returns to an interrupted program: its a0 is
    that program's, not a result."""
    s = Session.boot("compute", ["2000000"], images=images)
    s.run()
    rows = list(s.flow.rows())
    by_seq = {r.seq: r for r in rows}
    mrets = [r for r in rows if not r.is_trap and r.name == "mret" and r.returns_from is not None]
    after_timer = [r for r in mrets if by_seq[r.returns_from].name == "m_timer"]
    after_sbi = [r for r in mrets if by_seq[r.returns_from].note.startswith("sbi ")]
    assert after_timer and after_sbi
    assert all(describe(r, 64).plain == "mret  pid 1" for r in after_timer)
    assert all(describe(r, 64).plain in ("mret  → 0  pid 1", "mret  → 0  kernel")
               for r in after_sbi)


def test_cli_calls_format_is_one_row_per_call(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--format", "calls", "--user", "forktree", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["seq", "pid", "call", "result", "kernel", "insns", "where"]
    rows = [re.match(r"\s*\d+\s+(\d+)\s+(.+?)\s{2,}(.+?)\s*  at \w+\+0x[0-9a-f]+$", line)
            for line in lines[1:]]
    got = [(int(m[1]), m[2], m[3].split("  ")[0]) for m in rows if m is not None]
    assert len(got) == len(lines) - 1
    assert got == [
        (1, "fork()", "2"), (1, "fork()", "3"), (1, "waitpid(2, 1)", "2"),
        (2, "exit(1)", "does not return"), (3, "exit(1)", "does not return"),
        (1, "waitpid(3, 1)", "3"),
        (1, 'write(1, "forktree: 3 of 3 processes\\n", 27)', "27"),
        (1, "exit(0)", "does not return")]
    assert main(["trace", "--format", "calls", "--limit", "3", "--user", "forktree", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "... and 5 more calls"
