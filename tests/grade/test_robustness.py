"""Whatever a submission does, the grader reports it as failed tests with a diagnosis,
never a crash or a lost report."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from privlab.course.reports import write_reports
from privlab.course.sandbox import UNSEALED_ENV
from privlab.course.submission_build import build_submission, copy_submission, staging_slot
from privlab.grade.model import GradeReport, TestResult

from .conftest import grade_lab, variant

ONE_TEST = "test_counts_exactly_the_calls_made"


def _only(report: GradeReport) -> str:
    result = report.by_name()[ONE_TEST]
    assert not result.passed and result.score == 0
    return result.output


def test_compile_error_is_a_failed_build_test_with_the_compiler_output(tmp_path: Path) -> None:
    sub = variant(tmp_path, {"taskinfo.c": ("sizeof(ti));\n", "sizeof(ti))\n")})
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
    # One headline: the event limit stopped the run, not the instruction budget.
    assert ("\n\nstopped: more than 250,000 traps and xRETs (a trap loop that makes "
            "progress)\npc 0x") in output
    assert "hang: still running" not in output


def test_links_loops_and_pipes_in_kernel_are_left_out_and_named_in_the_build_test(
        tmp_path: Path) -> None:
    """Whatever a submission's tree holds, the grader copies its regular files and
    grades it: no grader error, no traceback, every test in the report."""
    sub = variant(tmp_path / "sub", {})
    kernel = sub / "kernel"
    (kernel / "loop").symlink_to("loop")                      # a link to itself
    (kernel / "up").symlink_to(".")                           # a directory loop
    (kernel / ".#taskinfo.c").symlink_to("alice@host.1234")   # an editor's lock file
    os.mkfifo(kernel / "fifo")
    (kernel / "include" / "notes.h").write_text("// a header kept elsewhere\n")
    (kernel / "notes.h").symlink_to("include/notes.h")        # a link to a file: copied
    report = grade_lab("taskinfo", sub, keyword=ONE_TEST, jobs=1)
    assert report.notes == [] and report.built
    assert report.by_name()[ONE_TEST].passed
    build = report.by_name()["build"].output
    for line in ("kernel/loop: a symbolic link that leads nowhere",
                 "kernel/up: a symbolic link to a directory (not followed)",
                 "kernel/.#taskinfo.c: a symbolic link that leads nowhere",
                 "kernel/fifo: a named pipe"):
        assert line in build
    assert "notes.h" not in build and "Traceback" not in build


def test_copy_submission_keeps_regular_files_and_follows_only_file_links(
        tmp_path: Path) -> None:
    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "include").mkdir(parents=True)
    (src / "include" / "a.h").write_text("a")
    (src / "b.c").symlink_to(src / "include" / "a.h")
    (src / "inc2").symlink_to(src / "include")
    (src / "x.o").write_text("stale object")
    (dst / "old").mkdir(parents=True)
    skipped = copy_submission(src, dst)
    assert skipped == ["kernel/inc2: a symbolic link to a directory (not followed)"]
    assert sorted(str(p.relative_to(dst)) for p in dst.rglob("*")) == [
        "b.c", "include", "include/a.h"]
    assert not (dst / "b.c").is_symlink() and (dst / "b.c").read_text() == "a"


def test_submission_without_kernel_in_a_fresh_cache_is_a_failed_build_not_a_grader_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh grading machine (every Gradescope container) has no staging slot yet."""
    monkeypatch.setenv("PRIVLAB_CACHE", str(tmp_path / "cache"))
    (tmp_path / "sub").mkdir()
    report = grade_lab("taskinfo", tmp_path / "sub", keyword=ONE_TEST, jobs=1)
    assert report.notes == [] and not report.built
    assert "no kernel/ directory" in report.by_name()["build"].output
    assert "did not build" in _only(report)


def test_a_build_that_never_ends_is_stopped_and_is_a_failed_build(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`#include "/dev/zero"` keeps an unsealed compiler reading forever: the build
    has a wall-clock limit, and the compiler is killed with it. Sealed (the default),
    the compiler may not open /dev/zero at all."""
    sub = variant(tmp_path, {"taskinfo.c": ("#include", '#include "/dev/zero"\n#include')})
    with staging_slot() as slot:
        sealed = build_submission(sub, slot, timeout=60)
        monkeypatch.setenv(UNSEALED_ENV, "1")
        start = time.perf_counter()
        built = build_submission(sub, slot, timeout=3)
        took = time.perf_counter() - start
    assert not sealed.ok
    assert sealed.output.startswith("the build tried to read /dev/zero, outside the "
                                    "submission"), sealed.output
    assert not built.ok and took < 30
    assert "the build did not finish within 3 seconds" in built.output


def test_file_names_that_are_not_utf8_are_shown_escaped_and_the_reports_written(
        tmp_path: Path) -> None:
    """A file or directory name with bytes that are not UTF-8 (Python holds them as
    lone surrogates) crashed writing report.txt with a UnicodeEncodeError traceback."""
    src = tmp_path / "src"
    src.mkdir()
    os.symlink(b"/nowhere", os.path.join(os.fsencode(src), b"bad\xff\nname.c"))
    skipped = copy_submission(src, tmp_path / "dst")
    assert skipped == ["kernel/bad\\xff\\x0aname.c: a symbolic link that leads nowhere "
                       "(No such file or directory)"]
    submission = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"caf\xe9"))
    report = GradeReport("taskinfo", submission, [
        TestResult("build", 0, 0, "failed", f"{submission}/kernel/x.c: error", ran=True)])
    write_reports(report, tmp_path / "out")
    assert "caf\\xe9/kernel/x.c: error" in (tmp_path / "out" / "report.txt").read_text()
    json.loads((tmp_path / "out" / "results.json").read_text())
    os.mkdir(submission)  # and graded for real: the build test names it, escaped
    graded = grade_lab("taskinfo", Path(submission), keyword=ONE_TEST, jobs=1)
    assert graded.notes == [] and "caf\\xe9: no kernel/ directory" in graded.tests[0].output
