"""One mistake costs the points of one test: no base-system test repeats a lab's check."""

from __future__ import annotations

from pathlib import Path

from .conftest import grade_lab, variant


def test_a_task_info_that_ignores_copyouts_failure_costs_one_point(tmp_path: Path) -> None:
    """A task_info that returns 0 whatever copyout said fails the lab's bad-pointer test
    (1 point) and nothing else: the base tests' hostile program no longer passes bad
    pointers to task_info as well."""
    edit = {"taskinfo.c": ("  return copyout(p->pagetable, info, &ti, sizeof(ti));\n",
                           "  (void)copyout(p->pagetable, info, &ti, sizeof(ti));\n"
                           "  return 0;\n")}
    report = grade_lab("taskinfo", variant(tmp_path, edit))
    assert report.built, report.build_output
    assert [t.name for t in report.tests if not t.passed] == ["test_bad_pointers_return_minus_one"]
    assert report.score == report.max_score - 1
