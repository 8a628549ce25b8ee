"""Both directions for every lab: the reference kernel scores 100% (hidden tests
included); the handout (its solution removed) builds, boots, scores 0 on the lab's
own tests and keeps full marks on the base-system tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.grade.labcheck import check_lab
from harness.grade.labs import BASE_DIR, all_labs, find_lab

LABS = [lab.name for lab in all_labs()]


def test_there_are_thirteen_labs_each_with_tests_hidden_tests_and_a_students_page() -> None:
    assert LABS == ["taskinfo", "mmap", "stride", "vmprint", "backtrace", "trap", "bigfile",
                    "link", "pipe", "cow", "lazy", "alarm", "deadlock"]
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


def test_a_labs_icount_shift_is_read_checked_and_found_from_its_tests(tmp_path: Path) -> None:
    from harness.errors import BadInput
    from harness.grade.labs import load_lab
    from harness.grade.plugin import lab_icount_shift

    lab = tmp_path / "timing"
    (lab / "hidden").mkdir(parents=True)
    (lab / "lab.toml").write_text('title = "t"\nicount_shift = 4\n')
    assert load_lab(lab).icount_shift == 4
    assert lab_icount_shift(lab / "hidden" / "test_x.py") == 4
    assert lab_icount_shift(tmp_path / "test_y.py") == 0        # no lab.toml above it
    assert find_lab("taskinfo").icount_shift == 0
    (lab / "lab.toml").write_text('title = "t"\nicount_shift = 11\n')
    with pytest.raises(BadInput, match=r"lab.toml: icount_shift must be an integer from "
                                       r"0 to 10, not 11$"):
        load_lab(lab)
