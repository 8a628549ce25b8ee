"""Both directions for every lab: the reference kernel scores 100% (hidden tests
included); the handout (its solution removed) builds, boots, scores 0 on the lab's
own tests and keeps full marks on the base-system tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.grade.handout import make_handout
from harness.grade.labs import BASE_DIR, all_labs, find_lab
from harness.paths import REPO_ROOT

from .conftest import grade_lab

LABS = [lab.name for lab in all_labs()]


def test_there_are_six_labs_each_with_tests_hidden_tests_and_a_students_page() -> None:
    assert LABS == ["taskinfo", "mmap", "stride", "vmprint", "backtrace", "trap"]
    for lab in all_labs():
        assert list(lab.directory.glob("test_*.py")), lab.name
        assert list(lab.hidden_dir.glob("test_*.py")), lab.name
        assert lab.readme.is_file(), lab.name


@pytest.mark.parametrize("name", LABS)
def test_reference_scores_full_marks(name: str) -> None:
    report = grade_lab(name, REPO_ROOT, hidden=True)
    failed = {t.name: t.output for t in report.tests if not t.passed}
    assert failed == {} and report.score == report.max_score > 0
    assert any(t.visibility == "after_published" for t in report.tests)


@pytest.mark.parametrize("name", LABS)
def test_handout_scores_zero_on_its_lab_and_full_marks_on_the_base(name: str,
                                                                   tmp_path: Path) -> None:
    lab = find_lab(name)
    changed = make_handout([lab], tmp_path / "handout")
    assert sorted(changed) == sorted(lab.solution_files)
    report = grade_lab(name, tmp_path / "handout", hidden=True)
    assert report.built, report.build_output
    base = {t.name for t in report.tests if t.nodeid.split("/")[0] == BASE_DIR.name}
    assert len(base) >= 3
    for t in report.tests[1:]:
        if t.name in base:
            assert t.passed, f"base test {t.name} failed on the handout:\n{t.output}"
        else:
            assert t.score == 0, f"{t.name} scored on the handout"
