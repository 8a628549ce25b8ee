"""Cheats that must score 0: a submission that reads the grader's files at build time,
and a kernel that forges the trusted test program's control flow."""

from __future__ import annotations

from pathlib import Path

from harness.grade.handout import strip_solutions
from harness.paths import REPO_ROOT

from .conftest import grade_lab, variant

REFERENCE = REPO_ROOT / "kernel" / "taskinfo.c"
HIDDEN = REPO_ROOT / "labs" / "taskinfo" / "hidden" / "test_taskinfo_hidden.py"

INCLUDE_THE_REFERENCE = f"""// The cheat: compile the grader's own solution in.
#if __has_include("{REFERENCE}")
#include "{REFERENCE}"
#else
#error "the grader's checkout is not readable"
#endif
"""

LEAK = f"""
// The cheat: the hidden tests' source in the kernel image, printed at every boot.
__asm__(".section .rodata\\n.globl leaked\\nleaked:\\n.incbin \\"{HIDDEN}\\"\\n.byte 0\\n"
        ".text\\n");
"""
BOOT = "  bootargs_parse(boot.bootargs);"
PRINT_THE_LEAK = "\n  { extern const char leaked[]; printf(\"%s\", leaked); }"


def _handout(root: Path) -> Path:
    """The taskinfo handout: the reference kernel with the lab's solution stripped."""
    sub = variant(root, {})
    taskinfo = sub / "kernel" / "taskinfo.c"
    taskinfo.write_text(strip_solutions(taskinfo.read_text()))
    return sub


def test_including_the_reference_from_the_graders_checkout_scores_zero(tmp_path: Path) -> None:
    sub = _handout(tmp_path)
    (sub / "kernel" / "taskinfo.c").write_text(INCLUDE_THE_REFERENCE)
    report = grade_lab("taskinfo", sub, hidden=True)
    assert not report.built
    assert report.score == 0, [(t.name, t.score) for t in report.tests]
    assert (f"the build tried to read {REFERENCE}, outside the submission"
            in report.build_output), report.build_output


def test_incbin_of_the_hidden_tests_does_not_build(tmp_path: Path) -> None:
    sub = _handout(tmp_path)
    main = sub / "kernel" / "main.c"
    main.write_text(main.read_text().replace(BOOT, BOOT + PRINT_THE_LEAK, 1) + LEAK)
    report = grade_lab("taskinfo", sub, hidden=True)
    assert not report.built
    assert report.score == 0
    assert "test_counts_match_the_trace" not in report.build_output
    assert (f"the build tried to read {HIDDEN}, outside the submission"
            in report.build_output), report.build_output
