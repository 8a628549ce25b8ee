"""`privlab run`: exit statuses, messages, and the JSON Lines trace format."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from machine.asm import build_asm


def privlab(*args: str, input: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "privlab", *args], input=input,
                          capture_output=True, timeout=300, check=False)


@pytest.fixture(scope="module")
def ecall_elf() -> Path:
    return build_asm("""
        OPEN_PMP
        la t0, user
        csrw mepc, t0
        li t0, 0x1800
        csrc mstatus, t0
        mret
    user:
        ecall
        .align 2
    trap:
        li t0, PLATFORM_UART0_BASE
        li t1, '!'
        sb t1, 0(t0)
        FAIL 42
    """)


def test_exit_status_is_the_finisher_code_and_console_is_echoed(ecall_elf: Path) -> None:
    p = privlab("run", "--bios", "none", "--kernel", str(ecall_elf))
    assert (p.returncode, p.stdout, p.stderr) == (42, b"!", b"")


def test_trace_out_writes_the_documented_jsonl_fields(ecall_elf: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    p = privlab("run", "--quiet", "--bios", "none", "--kernel", str(ecall_elf),
                "--trace-out", str(out))
    assert p.returncode == 42
    xret, trap = [json.loads(line) for line in out.read_text().splitlines()]
    assert {k: xret[k] for k in ("kind", "seq", "insn", "from", "to")} == \
        {"kind": "xret", "seq": 0, "insn": "mret", "from": "M", "to": "U"}
    assert xret["pc"] == trap["epc"]
    assert {k: trap[k] for k in ("kind", "seq", "interrupt", "code", "cause", "name", "tval",
                                 "from", "to")} == \
        {"kind": "trap", "seq": 1, "interrupt": False, "code": 8, "cause": 8,
         "name": "user_ecall", "tval": 0, "from": "U", "to": "M"}
    assert trap["instret"] == xret["instret"] + 1   # the mret retired; the ecall did not
    assert all(isinstance(v, int) for k, v in trap.items()
               if k not in ("kind", "name", "from", "to", "interrupt"))


def test_budget_exhausted_exits_124_with_pc_privilege_and_last_traps() -> None:
    elf = build_asm("""
        ecall
        .align 2
    trap:
        csrr t0, mepc
        addi t0, t0, 4
        csrw mepc, t0
        mret
    1:  j 1b
    """)
    p = privlab("run", "--bios", "none", "--kernel", str(elf), "--max-insns", "500")
    assert p.returncode == 124
    lines = p.stderr.decode().splitlines()
    assert lines[0].startswith("privlab: instruction budget of 500 exhausted at pc 0x8000")
    assert lines[0].endswith("in M-mode")
    assert lines[1] == "last traps:"
    assert "machine_ecall (exception 11) M->M" in lines[2]


def test_trap_storm_exits_3_with_the_diagnosis() -> None:
    elf = build_asm("""
        li t1, 0x88000000
        sw t0, 0(t1)
        .align 2
    trap:
        mret
    """)
    p = privlab("run", "--bios", "none", "--kernel", str(elf))
    assert p.returncode == 3
    first = p.stderr.decode().splitlines()[0]
    assert first.startswith("privlab: trap storm: fault_store (cause 0x7) at epc 0x800000")
    assert "tval 0x88000000, repeated 1000 times with no progress" in first
    assert "vector" not in first     # the handler runs: it returns to the store, which faults


def test_user_program_exit_status_is_privlab_exit_status() -> None:
    p = privlab("run", "--quiet", "--user", "hello", "one")
    assert p.returncode == 0
    p = privlab("run", "--user", "nonexistent-program")
    assert p.returncode == 2
    assert p.stderr.decode().startswith("privlab: nonexistent-program: not a bundled program")


@pytest.mark.parametrize("how", ["pipe", "--input", "--input-file"])
def test_the_shell_stops_when_its_console_input_ends(how: str, tmp_path: Path) -> None:
    """A UART has no end of file: once a pipe, a file or --input is used up and the
    shell keeps polling for more, privlab stops it (status 0, like `sh < script`)."""
    script = b"hello a\n"
    if how == "pipe":
        p = privlab("run", input=script)
    elif how == "--input":
        p = privlab("run", "--input", "hello a\\n")
    else:
        (tmp_path / "script").write_bytes(script)
        p = privlab("run", "--input-file", str(tmp_path / "script"))
    assert p.returncode == 0, p.stderr
    assert p.stdout.decode().endswith("$ hello a\nHello, world!\nargv[1] = a\n$ ")
    err = p.stderr.decode()
    assert err.startswith("\nprivlab: console input ended; the guest was waiting for more ")
    assert err.count("\n") == 2 and "M-mode" in err


def test_a_script_that_powers_off_keeps_the_guests_status() -> None:
    p = privlab("run", "--input", "exit 5\\n")
    assert p.returncode == 5 and p.stderr == b""
