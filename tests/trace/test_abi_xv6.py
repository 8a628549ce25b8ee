"""`--abi xv6`: a foreign kernel's system calls decoded with xv6's numbers and argument
kinds (harness/abi/xv6.tbl), beside the bundled kernel's rCore/uCore table."""

from __future__ import annotations

from pathlib import Path

import pytest
from machine.asm import build_asm

from privlab.abi.syscall_table import ABIS, abi_table, load_syscall_table
from privlab.cli.main import main
from privlab.errors import BadInput
from privlab.trace.syscalls import ArgKind, call_specs

# U-mode makes xv6's write(1, "hi\n", 3) (16) and exit(0) (2); an S-mode handler
# returns n from write and powers off at exit: a kernel in eleven instructions.
XV6_CALLS = """
    U_ECALLS_TO_S s_trap, user
user:
    li a0, 1
    la a1, msg
    li a2, 3
    li a7, 16
    ecall
    li a0, 0
    li a7, 2
    ecall
    .align 2
s_trap:
    li t0, 2
    beq a7, t0, 1f
    mv a0, a2
    csrr t0, sepc
    addi t0, t0, 4
    csrw sepc, t0
    sret
1:  PASS
    .data
msg: .ascii "hi\\n"
"""


@pytest.fixture(scope="module")
def xv6_calls() -> Path:
    return build_asm(XV6_CALLS)


def test_trace_with_the_xv6_abi_names_the_calls_and_their_arguments(
        xv6_calls: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--format", "calls", "--abi", "xv6", "--bios", "none",
                 "--kernel", str(xv6_calls)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert rows == [["1", "user", "write(1,", '"hi\\n",', "3)", "3", "6", "at", "user+0xe"],
                    ["3", "user", "exit(0)", "does", "not", "return", "at", "user+0x16"]]


def test_the_default_abi_does_not_know_xv6s_numbers(
        xv6_calls: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--format", "calls", "--bios", "none",
                 "--kernel", str(xv6_calls)]) == 0
    assert "syscall_16(0x1, 0x" in capsys.readouterr().out


def test_an_unknown_abi_is_one_line_and_status_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["trace", "--abi", "linux", "--user", "hello"])
    assert info.value.code == 2
    assert "invalid choice: 'linux' (choose from 'rcore', 'xv6', 'ucore')" \
        in capsys.readouterr().err
    with pytest.raises(BadInput,
                       match="unknown ABI 'linux' \\(choose from rcore, xv6, ucore\\)"):
        abi_table("linux")


def test_xv6s_table_has_its_21_calls_and_its_buffers_lengths() -> None:
    specs = call_specs(load_syscall_table(ABIS["xv6"]))
    assert [(n, specs[n].name) for n in (1, 2, 7, 16, 21)] == \
        [(1, "fork"), (2, "exit"), (7, "exec"), (16, "write"), (21, "close")]
    assert len(specs) == 21 and specs[2].noreturn
    read, write = specs[5].args, specs[16].args
    assert (read[1].kind, read[1].length_arg) == (ArgKind.BUF_OUT, 2)   # int n, by its name
    assert (write[1].kind, write[1].length_arg) == (ArgKind.BUF_IN, 2)
    assert specs[7].args[1].kind is ArgKind.STRV_IN


def test_the_rcore_buffers_keep_their_size_t_lengths() -> None:
    specs = call_specs(abi_table("rcore"))
    assert (specs[64].args[1].kind, specs[64].args[1].length_arg) == (ArgKind.BUF_IN, 2)
    assert specs[172].args == ()   # getpid


def test_pid_on_another_kernel_says_it_reads_the_bundled_kernels_table(
        xv6_calls: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--pid", "1", "--at", "trap:1", "--bios", "none",
                 "--kernel", str(xv6_calls)]) == 2
    assert capsys.readouterr().err == (
        "privlab: --pid reads the bundled kernel's process table (struct proc); this "
        "machine runs another kernel or a bare-metal program\n")


def test_ucores_table_takes_its_user_librarys_arguments() -> None:
    """uCore-Tutorial-Test's library: spawn(file) sets a0 alone, mmap passes five
    arguments, the lab calls sit at 400 up."""
    table = {c.name: c for c in load_syscall_table(ABIS["ucore"])}
    assert [(table[n].number, len(table[n].args)) for n in ("spawn", "mmap", "task_info",
                                                            "wait4", "clone")] == [
        (400, 1), (222, 5), (410, 1), (260, 2), (220, 0)]
