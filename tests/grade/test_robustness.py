"""Whatever a submission does, the grader reports it as failed tests with a diagnosis,
never a crash or a lost report."""

from __future__ import annotations

from pathlib import Path

from harness.grade.model import GradeReport

from .conftest import grade_lab, variant

ONE_TEST = "test_counts_exactly_the_calls_made"


def _only(report: GradeReport) -> str:
    result = report.by_name()[ONE_TEST]
    assert not result.passed and result.score == 0
    return result.output


def test_compile_error_is_a_failed_build_test_with_the_compiler_output(tmp_path: Path) -> None:
    sub = variant(tmp_path, {"taskinfo.c": ("return -1;\n}", "return -1\n}")})
    report = grade_lab("taskinfo", sub, keyword=ONE_TEST, jobs=1)
    build = report.by_name()["build"]
    assert not report.built and build.status == "failed"
    assert "taskinfo.c" in build.output and "error:" in build.output
    assert str(sub / "kernel" / "taskinfo.c") in build.output  # paths point at the submission
    assert "did not build" in _only(report)
    assert report.score == 0 and report.max_score > 0


def test_missing_kernel_directory_is_a_failed_build(tmp_path: Path) -> None:
    report = grade_lab("taskinfo", tmp_path, keyword=ONE_TEST, jobs=1)
    assert not report.built and "no kernel/ directory" in report.by_name()["build"].output


def test_hang_is_a_failed_test_naming_the_budget(tmp_path: Path) -> None:
    sub = variant(tmp_path, {"sysproc.c": ("long sys_getpid(void) { return",
                                           "long sys_getpid(void) { for (;;) {} return")})
    output = _only(grade_lab("taskinfo", sub, keyword=ONE_TEST, jobs=1))
    assert "hang: still running after" in output and "last traps:" in output


def test_kernel_panic_is_a_failed_test_quoting_the_panic(tmp_path: Path) -> None:
    panicking = "long sys_getpid(void) { panic(\"boom %d\", 7); return"
    sub = variant(tmp_path, {"sysproc.c": ("long sys_getpid(void) { return", panicking)})
    output = _only(grade_lab("taskinfo", sub, keyword=ONE_TEST, jobs=1))
    assert "kernel panic: boom 7" in output
    assert "| panic: boom 7" in output  # the console lines are shown too


def test_trap_storm_is_a_failed_test_with_the_machines_diagnosis(tmp_path: Path) -> None:
    sub = variant(tmp_path, {
        "sysproc.c": ("long sys_getpid(void) { return",
                      "long sys_getpid(void) { *(volatile int *)8 = 1; return"),
        "trap.c": ("  panic(\"kernel trap:", "  return;\n  panic(\"kernel trap:")})
    output = _only(grade_lab("taskinfo", sub, keyword=ONE_TEST, jobs=1))
    assert "trap storm" in output and "store_page_fault" in output


def test_runaway_output_is_stopped_and_failed(tmp_path: Path) -> None:
    sub = variant(tmp_path, {"sysproc.c": (
        "long sys_getpid(void) { return",
        "long sys_getpid(void) { for (;;) printf(\"spam spam spam spam\\n\"); return")})
    output = _only(grade_lab("taskinfo", sub, keyword=ONE_TEST, jobs=1))
    assert "runaway output" in output and "spam" in output
    assert len(output) < 20_000


def test_endless_trap_loop_is_stopped_before_it_fills_memory(tmp_path: Path) -> None:
    looping = "long sys_getpid(void) { for (;;) sbi_set_timer(r_time() + 1000000); return"
    sub = variant(tmp_path, {"sysproc.c": ("long sys_getpid(void) { return", looping)})
    output = _only(grade_lab("taskinfo", sub, keyword=ONE_TEST, jobs=1))
    assert "more than 250,000 traps and xRETs" in output
