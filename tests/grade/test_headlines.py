"""A failure's first line (the scoreboard's "why") is the first thing that went wrong:
the test program's own FAIL line before a later expectation, how a hang or a panic
ended the run rather than "did not finish", and a PASS line found after output that
did not end its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from privlab.build.images import build_user_programs
from privlab.grade.checks import stop_at_syscall
from privlab.grade.errors import GradeFailure
from privlab.grade.under_test import KernelUnderTest


def test_a_program_that_failed_and_powered_off_headlines_its_fail_line(
        kernel: KernelUnderTest) -> None:
    """lab_lazy's test once said `expected a getppid system call within 150,000,000
    instructions` of a program that had printed its FAIL line and powered off."""
    run = kernel.boot("lab_taskinfo", "nosuchmode", kernel.token)
    with pytest.raises(GradeFailure) as failed:
        stop_at_syscall(run, "getppid")
    first, second = failed.value.message.splitlines()[:2]
    assert first == "FAIL: unknown mode"
    assert second.startswith("(the test program's own check failed first; then the run "
                             "ended before any getppid system call: powered off with exit "
                             "status 1)")


def test_a_hang_says_so_in_its_headline(kernel: KernelUnderTest) -> None:
    run = kernel.boot("compute", "1000000000")
    with pytest.raises(GradeFailure) as failed:
        run.run_to_exit(2_000_000)
    assert failed.value.message.startswith(
        "the kernel did not finish the program: hang: still running after 2,0")


PARTIAL_LINE = r'''
#include "user.h"
int main(int argc, char **argv) {
  write(1, "checking", 8);               // no newline: the PASS line runs into it
  printf("PASS %s\n", argv[1]);
  return 0;
}
'''


def test_a_pass_line_after_output_without_a_newline_is_found(kernel: KernelUnderTest,
                                                             tmp_path: Path) -> None:
    src = tmp_path / "partial.c"
    src.write_text(PARTIAL_LINE)
    elf = build_user_programs([src], tmp_path / "bin")["partial"]
    run = kernel.boot(str(elf), kernel.token)
    run.expect_pass()
    assert f"checkingPASS {kernel.token}\n" in run.output
