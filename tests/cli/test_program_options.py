"""Options after the program stay the program's, with one line on stderr when they are
privlab's own; and the bundled test programs refuse a test they do not have, before
running anything, with a non-zero status (userland/lib/testsel.c)."""

from __future__ import annotations

import pytest

from privlab.cli.main import main, parse
from privlab.cli.sessionargs import stray_options

NOTE = ("privlab: note: --trace-out, --smp came after the program and went to usertests "
        "as its arguments; privlab's options go before --user usertests\n")


def test_privlab_options_after_prog_stay_its_arguments_with_one_note(
        capsys: pytest.CaptureFixture[str]) -> None:
    args = parse(["run", "--smp", "3", "--user", "usertests", "--trace-out", "t.jsonl",
                  "--smp=2", "--trace-out", "u.jsonl"])
    assert (args.smp, args.trace_out) == (3, None)
    assert args.args == ["--trace-out", "t.jsonl", "--smp=2", "--trace-out", "u.jsonl"]
    assert capsys.readouterr().err == NOTE


def test_after_double_dash_the_note_names_the_program_too(
        capsys: pytest.CaptureFixture[str]) -> None:
    args = parse(["trace", "--", "hello", "--abi", "xv6"])
    assert (args.user, args.args, args.abi) == ("hello", ["--abi", "xv6"], "rcore")
    assert capsys.readouterr().err == (
        "privlab: note: --abi came after the program and went to hello as an argument; "
        "privlab's options go before --user hello\n")


def test_program_words_that_are_not_privlab_options_say_nothing(
        capsys: pytest.CaptureFixture[str]) -> None:
    parse(["run", "--user", "usertests", "-v", "--verbose", "--trace", "get_time"])
    assert capsys.readouterr().err == ""


def test_only_the_commands_own_options_are_noted(capsys: pytest.CaptureFixture[str]) -> None:
    parse(["inspect", "--user", "hello", "--trace-out", "t.jsonl", "--at", "trap:1"])
    assert capsys.readouterr().err == (     # --trace-out is run's, not inspect's
        "privlab: note: --at came after the program and went to hello as an argument; "
        "privlab's options go before --user hello\n")
    assert stray_options(["--smp=2", "--smp", "-h", "smp"], ["--smp", "-h"]) == ["--smp"]


@pytest.mark.parametrize("program", ["usertests", "fstests", "sigtests", "threadtests",
                                     "abitests"])
def test_a_test_program_refuses_a_test_it_does_not_have(
        program: str, capfd: pytest.CaptureFixture[str]) -> None:
    status = main(["run", "--input", "", "--user", program, "no_such_case"])
    out = capfd.readouterr().out
    assert status == 2
    assert (f"{program}: no test named 'no_such_case' (run {program} with no argument "
            "for all of them)") in out
    assert "PASS" not in out and "passed" not in out


def test_usertests_given_a_privlab_option_fails_instead_of_passing_nothing(
        capfd: pytest.CaptureFixture[str]) -> None:
    status = main(["run", "--input", "", "--user", "usertests", "get_time", "--trace-out",
                   "t.jsonl"])
    captured = capfd.readouterr()
    assert status == 2
    assert "usertests: no test named '--trace-out'" in captured.out
    assert "PASS get_time" not in captured.out       # refused before anything ran
    assert "--trace-out came after the program" in captured.err


def test_a_known_prefix_still_selects_its_tests(capfd: pytest.CaptureFixture[str]) -> None:
    status = main(["run", "--input", "", "--user", "usertests", "get_", "yield"])
    out = capfd.readouterr().out
    assert status == 0
    assert "PASS get_time\nPASS yield_getpid\nusertests: 2 passed, 0 failed" in out
