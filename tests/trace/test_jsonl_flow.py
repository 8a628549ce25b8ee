"""`privlab trace --format jsonl` writes most rows with no FlowRow at all
(harness/trace/stream.py's native stretches, jsonl.c's jsonl_flow): each run here is
traced twice, with the native stretches and with rows only, and the two files must
be the same bytes; the native stretches must also have written most of the rows
where nothing stops them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from machine.asm import build_asm

from privlab.cli import trace_cmd
from privlab.cli.main import main
from privlab.trace import jsonl
from privlab.trace.jsonl import RowsJsonl, Shown

# U makes CALLS rounds of six calls, each of a different form, then kill (an
# argument shown by name: Python writes that line) and exit (which S ends the run
# at). S returns a0 - a7 from every call and srets past the ecall.
CALLS = 1500
CALL_FORMS = f"""
    U_ECALLS_TO_S s_trap, user
user:
    li s0, {CALLS}
1:  li a0, -3                  # close(-3): an int, signed at XLEN
    li a7, 57
    ecall
    li a0, 5                   # getdents64(5, NULL, 4096): int, pointer, unsigned
    li a1, 0
    li a2, 4096
    li a7, 61
    ecall
    li a0, 0x4000              # munmap(0x4000, -1): a pointer, an unsigned all ones
    li a1, -1
    li a7, 215
    ecall
    li a0, 1                   # syscall_1000: no spec, six arguments in hex
    li a1, 0
    li a2, -2
    li a3, 3
    li a4, 4
    li a5, 5
    li a7, 1000
    ecall
    li a7, 172                 # getpid(): no arguments
    ecall
    li a0, 2                   # thread_create(0x2, NULL): two pointers
    li a1, 0
    li a7, 460
    ecall
    addi s0, s0, -1
    bnez s0, 1b
    li a0, 2                   # kill(2, SIGUSR1)
    li a1, 10
    li a7, 129
    ecall
    li a0, 0                   # exit(0): does not return
    li a7, 93
    ecall
    .align 2
s_trap:
    li t0, 93
    beq a7, t0, 2f
    sub a0, a0, a7
    csrr t0, sepc
    addi t0, t0, 4
    csrw sepc, t0
    sret
2:  PASS
"""


def _without_native(monkeypatch: pytest.MonkeyPatch) -> None:
    """`privlab trace` with rows only: RowOutput hands FlowStream no native writer."""
    made = trace_cmd.RowOutput.__init__

    def rows_only(self: trace_cmd.RowOutput, *args: object, **kwargs: object) -> None:
        made(self, *args, **kwargs)     # type: ignore[arg-type]
        self.native = None
    monkeypatch.setattr(trace_cmd.RowOutput, "__init__", rows_only)


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The events each native stretch showed."""
    shown: list[int] = []
    write = RowsJsonl.write_flow

    def counted(self: RowsJsonl, *args: object, **kwargs: object) -> Shown:
        out = write(self, *args, **kwargs)    # type: ignore[arg-type]
        shown.append(out.events)
        return out
    monkeypatch.setattr(jsonl.RowsJsonl, "write_flow", counted)
    return shown


def both_ways(tmp_path: Path, *argv: str) -> Iterator[tuple[str, int]]:
    """Trace ARGV with the native stretches, then with rows only: each file's text,
    and the events the native stretches showed."""
    for native in (True, False):
        with pytest.MonkeyPatch.context() as mp:
            shown = _counting(mp)
            if not native:
                _without_native(mp)
            out = tmp_path / f"rows-{native}.jsonl"
            assert main(["trace", "--format", "jsonl", "-o", str(out), *argv]) == 0
            yield out.read_text(), sum(shown)


def traced_twice(tmp_path: Path, *argv: str) -> tuple[str, int]:
    (native, shown), (rows, none) = both_ways(tmp_path, *argv)
    assert none == 0
    assert native == rows
    return native, shown


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_each_form_of_call_line_is_the_rows_own_and_most_rows_are_native(
        tmp_path: Path, arch: str) -> None:
    got, shown = traced_twice(tmp_path, "--capture-limit", "10", "--bios", "none", "--kernel",
                              str(build_asm(CALL_FORMS, arch)))
    lines = [json.loads(line) for line in got.splitlines()]
    events = [o for o in lines if o["kind"] != "syscall"]
    calls = {o["name"]: o for o in lines if o["kind"] == "syscall"}
    assert len(events) == 2 * (6 * CALLS + 1) + 2       # the first mret, exit's ecall
    assert shown > 0.9 * len(events)
    ones = (1 << (64 if arch == "rv64" else 32)) - 1
    assert calls["close"]["call"] == "close(-3)"
    assert calls["close"]["args"] == [ones - 2]
    assert calls["close"]["ret"] == -3 - 57
    assert calls["getdents64"]["call"] == "getdents64(5, NULL, 4096)"
    assert calls["munmap"]["call"] == f"munmap(0x4000, {ones})"
    assert calls["syscall_1000"]["call"] == \
        f"syscall_1000(0x1, 0x0, {hex(ones - 1)}, 0x3, 0x4, 0x5)"
    assert calls["syscall_1000"]["args"] == [1, 0, ones - 1, 3, 4, 5]
    assert calls["getpid"]["call"] == "getpid()" and calls["getpid"]["args"] == []
    assert calls["thread_create"]["call"] == "thread_create(0x2, NULL)"
    assert calls["kill"]["call"] == "kill(2, SIGUSR1)"
    assert calls["exit"]["outcome"] == "noreturn" and calls["exit"]["exit_seq"] is None
    assert {o["who"] for o in events} == {"user"}      # U-mode code, no process
    assert all(o["pid"] is None for o in calls.values())


@pytest.mark.parametrize(("argv", "native"), [
    # (native False: every chunk starts a process or names one, or mostly so)
    (["--no-capture", "--user", "forktree", "3"], False),
    (["--capture-limit", "20", "--user", "sigdemo"], False),
    # usertests: forks, execs, exits, pipes, signals, and stretches of one process
    (["--no-capture", "--user", "usertests"], True),
    (["--capture-limit", "100", "--user", "usertests"], True),
    (["--arch", "rv32", "--no-capture", "--user", "usertests"], False),
], ids=["forktree", "sigdemo", "usertests", "usertests-captured", "rv32-usertests"])
def test_a_kernels_run_is_the_same_bytes_with_native_stretches_and_without(
        tmp_path: Path, argv: list[str], native: bool) -> None:
    got, shown = traced_twice(tmp_path, *argv)
    assert '"kind": "syscall"' in got
    if native:
        assert shown > 0


def test_several_harts_keep_to_rows(tmp_path: Path) -> None:
    # a nesting of one hart is open while another's close: rows are shown in other
    # groups than one hart's, and a reused root's rows may take another owner
    got, shown = traced_twice(tmp_path, "--smp", "2", "--no-capture", "--user", "forktree",
                              "2")
    assert shown == 0 and '"hart": 1' in got


def test_a_trace_file_shown_as_rows_is_the_same_bytes_too(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "run.trace"
    assert main(["run", "--quiet", "--input", "x", "--trace-out", str(trace), "--bios", "none",
                 "--kernel", str(build_asm(CALL_FORMS))]) == 0
    capsys.readouterr()
    got, shown = traced_twice(tmp_path, "--from", str(trace))
    assert shown > 0.9 * got.count('"kind": "trap"') * 2
    assert '"call": "close(-3)"' in got


def test_rows_written_on_their_own_thread_reach_a_full_disk_as_one_error(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--format", "jsonl", "-o", "/dev/full", "--no-capture",
                 "--bios", "none", "--kernel", str(build_asm(CALL_FORMS))]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == \
        "privlab: No space left on device"


# 5,000 ecalls, each at its own address (and each sret to its own): more rows with
# their own tails than jsonl.c keeps (TAILS), so its cache starts over, twice.
MANY_PLACES = """
    U_ECALLS_TO_S s_trap, user
user:
    .rept 5000
    li a7, 172
    ecall
    .endr
    li a7, 93
    ecall
    .align 2
s_trap:
    li t0, 93
    beq a7, t0, 1f
    li a0, 7
    csrr t0, sepc
    addi t0, t0, 4
    csrw sepc, t0
    sret
1:  PASS
"""


def test_more_places_than_the_tail_cache_holds_are_the_same_bytes(tmp_path: Path) -> None:
    got, shown = traced_twice(tmp_path, "--no-capture", "--bios", "none", "--kernel",
                              str(build_asm(MANY_PLACES)))
    rows = [json.loads(line) for line in got.splitlines()]
    places = {o["location"] for o in rows if o["kind"] != "syscall"}
    assert len(places) > 10_000 and shown > 0.75 * len(places)
    assert sum(o["kind"] == "syscall" and o["call"] == "getpid()" and o["ret"] == 7
               for o in rows) == 5000
