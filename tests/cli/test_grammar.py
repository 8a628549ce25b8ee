"""One grammar and one set of machine options for every command that boots a machine,
and one default instruction budget for the non-interactive ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from privlab.cli.main import main, parse
from privlab.cli.sessionargs import split_program

BOOTING = [["run"], ["trace"], ["inspect"], ["pagetable"], ["translate", "0x10000"]]
MACHINE = ["--boot-flag", "vmprint", "--boot-flag", "timer_hz=1000", "--ram", "32",
           "--arch", "rv64", "--kernel", "k.elf", "--bios", "fw.elf", "--drive",
           "d.img,snapshot=on", "--add", "progs", "--icount-shift", "3", "--src", "h",
           "--input", "x\\n", "--max-insns", "1000", "--virtio-legacy"]


@pytest.mark.parametrize("command", BOOTING, ids=lambda c: c[0])
def test_every_booting_command_takes_the_same_machine_options(command: list[str]) -> None:
    args = parse([*command, *MACHINE])
    assert (args.boot_flag, args.ram, args.arch, args.kernel, args.bios, args.drive,
            args.add, args.icount_shift, args.src, args.input, args.max_insns,
            args.virtio_legacy) == (["vmprint", "timer_hz=1000"], 32, "rv64", "k.elf",
                                    "fw.elf", "d.img,snapshot=on", ["progs"], 3, "h",
                                    "x\\n", 1000, True)
    assert (args.user, args.args) == (None, [])


@pytest.mark.parametrize("command", BOOTING, ids=lambda c: c[0])
def test_everything_after_user_prog_is_its_arguments(command: list[str]) -> None:
    args = parse([*command, "--ram", "64", "--user", "hello", "x", "-v", "--at", "trap:6",
                  "--ram", "16", "--", "--user", "y"])
    assert (args.user, args.args, args.ram) == (
        "hello", ["x", "-v", "--at", "trap:6", "--ram", "16", "--", "--user", "y"], 64)
    if command[0] == "translate":
        assert args.va == "0x10000"
    if command[0] == "inspect":
        assert args.at == "syscall:*"         # --at went to hello


@pytest.mark.parametrize("words, program", [
    (["--ram", "64", "--", "hello", "--ram", "1"], ["hello", "--ram", "1"]),
    (["--user=hello", "x"], ["hello", "x"]),
    (["--us", "hello", "-v"], ["hello", "-v"]),           # argparse's abbreviation
    (["--input", "a", "--max-insns", "5"], None),
    (["--user"], []),
])
def test_split_program(words: list[str], program: list[str] | None) -> None:
    assert split_program(words, ["--user", "--ram", "--input"])[1] == program


@pytest.mark.parametrize("argv, message", [
    (["run", "--user"], "privlab: --user (or --) needs PROG: --user PROG [ARG ...]\n"),
    (["trace", "--"], "privlab: --user (or --) needs PROG: --user PROG [ARG ...]\n"),
    (["run", "hello", "x"], "privlab: unrecognized arguments: hello x (a program and its "
                            "arguments go last: --user PROG ARG...)\n"),
    (["translate", "0x10000", "extra", "--user", "hello"],
     "privlab: unrecognized arguments: extra (a program and its arguments go last: "
     "--user PROG ARG...)\n"),
])
def test_bad_grammar_is_one_line(argv: list[str], message: str,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        status = main(argv)
        raise SystemExit(status)
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    assert (out, err) == ("", message)


def test_translate_takes_a_programs_arguments_end_to_end(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`translate 0x10000 --user hello x`: x is hello's argument, not an error."""
    assert main(["translate", "0x10000", "--no-drive", "--at", "syscall:write:2",
                 "--user", "hello", "x"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("looked at syscall:write:2: event #")
    assert out[1].startswith("translate 0x10000  load from U-mode")


@pytest.fixture(scope="module")
def spin() -> Path:
    """A bare-metal loop that never traps, in long blocks (150 M instructions in a
    fraction of a second)."""
    from machine.asm import build_asm

    return build_asm("1:\n.rept 250\nnop\n.endr\nj 1b\n")


def unnamed(err: str) -> str:
    """A diagnosis with the pc's name (symbol+offset file:line, which every command
    adds) left out, to compare with DIAGNOSIS."""
    return re.sub(r"(pc 0x[0-9a-f]+) \S+\+0x[0-9a-f]+ \S+:\d+", r"\1", err)


DIAGNOSIS = ("instruction budget of 1000000000 exhausted at pc 0x8000000c in M-mode (the "
             "default budget: --max-insns N for another)\nno traps were taken\n")


@pytest.mark.parametrize("command", [["trace"], ["inspect"], ["pagetable"],
                                     ["translate", "0x80000000"]], ids=lambda c: c[0])
def test_the_inspectors_stop_a_hung_guest_at_the_default_budget(
        command: list[str], spin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No --max-insns: 1,000,000,000 instructions (more than the uCore course's kernels
    take to boot), exit 124, and the diagnosis `privlab run --max-insns` prints."""
    assert main([*command, "--bios", "none", "--kernel", str(spin)]) == 124
    out, err = capsys.readouterr()
    # every command names the pc, the inspectors' stop messages too
    assert re.search(r"pc 0x8000000c _start\+0xc \S+\.S:\d+ in M-mode", err), err
    if command[0] == "trace":
        assert out.splitlines()[1:] == ["(no events)"]
        assert unnamed(err) == f"privlab: {DIAGNOSIS}"
    else:
        assert (out, unnamed(err)) == ("", f"privlab: never reached syscall:*: {DIAGNOSIS}")


def test_run_prints_the_same_diagnosis_at_its_max_insns(
        spin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--bios", "none", "--kernel", str(spin), "--input", "",
                 "--max-insns", "1000000000"]) == 124
    assert unnamed(capsys.readouterr().err) == "privlab: " + DIAGNOSIS.replace(
        " (the default budget: --max-insns N for another)", "")
    assert main(["inspect", "--bios", "none", "--kernel", str(spin), "--max-insns",
                 "1000", "--at", "pc:0x1234"]) == 124
    assert unnamed(capsys.readouterr().err) == (
        "privlab: never reached pc:0x1234: instruction budget of 1000 exhausted at pc "
        "0x8000000c in M-mode\nno traps were taken\n")


def test_a_program_that_dies_before_its_first_call_suggests_its_fault(
        capsys: pytest.CaptureFixture[str]) -> None:
    """`hostile kread` loads from kernel memory at once: no system call to stop at,
    so the message names the trap that killed it."""
    assert main(["pagetable", "--no-drive", "--user", "hostile", "kread"]) == 2
    assert capsys.readouterr().err == (
        "privlab: never reached syscall:*: the guest halted with status 255 after 10 "
        "events; the program made no system call; its first exception is event #6 "
        "(load_page_fault): try --at trap:6\n")
    assert main(["pagetable", "--no-drive", "--at", "trap:6", "--user", "hostile",
                 "kread"]) == 0
    assert capsys.readouterr().out.startswith("Page table at trap:6")


def test_translate_for_a_program_that_dies_before_its_first_call_suggests_its_fault(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["translate", "0x10000", "--no-drive", "--user", "hostile", "kread"]) == 2
    assert capsys.readouterr().err == (
        "privlab: never reached syscall:*: the guest halted with status 255 after 10 "
        "events; the program made no system call; its first exception is event #6 "
        "(load_page_fault): try --at trap:6\n")
    assert main(["translate", "0x10000", "--no-drive", "--at", "trap:6", "--user",
                 "hostile", "kread"]) == 0
    assert "translate 0x10000" in capsys.readouterr().out
