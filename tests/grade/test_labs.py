"""Both directions for every lab: the reference kernel scores 100% (hidden tests
included); the handout (its solution removed) builds, boots, scores 0 on the lab's
own tests and keeps full marks on the base-system tests."""

from __future__ import annotations

import pytest

from harness.grade.labcheck import check_lab
from harness.grade.labs import BASE_DIR, all_labs, find_lab

LABS = [lab.name for lab in all_labs()]


def test_there_are_six_labs_each_with_tests_hidden_tests_and_a_students_page() -> None:
    assert LABS == ["taskinfo", "mmap", "stride", "vmprint", "backtrace", "trap"]
    for lab in all_labs():
        assert list(lab.directory.glob("test_*.py")), lab.name
        assert list(lab.hidden_dir.glob("test_*.py")), lab.name
        assert lab.readme.is_file(), lab.name


@pytest.mark.parametrize("name", LABS)
def test_reference_scores_full_marks_and_handout_only_the_base(name: str) -> None:
    check = check_lab(find_lab(name))
    assert check.problems == []
    reference, handout = check.reference, check.handout
    assert reference.score == reference.max_score > 0
    assert any(t.visibility == "after_published" for t in reference.tests)  # hidden ran
    assert handout.built
    base = [t for t in handout.tests if t.nodeid.split("/")[0] == BASE_DIR.name]
    assert len(base) >= 3 and all(t.passed for t in base)
    assert handout.score == sum(t.max_score for t in base)
