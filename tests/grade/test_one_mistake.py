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


def test_a_deadlock_detector_that_never_refuses_gets_one_diagnosis(tmp_path: Path) -> None:
    """A safety check that calls every state safe: the first detection test says so,
    and every other test of a deadlock, visible or hidden, is "not run" (it requires
    that one), not a second diagnosis of the same mistake."""
    edit = {"deadlock.c": ("static int state_is_safe(struct proc *g) {\n",
                           "static int state_is_safe(struct proc *g) {\n"
                           "  if (g)\n    return 1;  // every state is safe\n")}
    report = grade_lab("deadlock", variant(tmp_path, edit), hidden=True)
    assert report.built, report.build_output
    failed = [t for t in report.tests if not t.passed]
    diagnosed = [t.name for t in failed if not t.output.startswith("not run")]
    assert diagnosed == ["test_relocking_a_held_mutex_is_a_deadlock"]
    assert len(failed) >= 8      # five visible tests and three hidden ones not run
