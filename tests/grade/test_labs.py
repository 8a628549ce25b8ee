"""Both directions for every lab under labs/, found as `privlab lab list` finds them
(a lab added as docs/grading/write-a-lab.md describes is checked with no edit here):
the reference kernel scores 100% (hidden tests included); the handout (every lab's
solution removed) builds, boots, scores 0 on the lab's own tests and keeps full marks
on the base-system tests."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from privlab.course.labcheck import LabCheck, check_lab
from privlab.grade.labs import BASE_DIR, Lab, all_labs, find_lab, is_base_test

LABS = [lab.name for lab in all_labs()]


def _test_names(directory: Path) -> set[str]:
    """The test functions and methods defined in `directory`'s test_*.py files."""
    names = set()
    for path in directory.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) \
                    and node.name.startswith("test"):
                names.add(node.name)
    return names


def test_every_lab_directory_is_a_lab_with_tests_and_a_students_page() -> None:
    found = sorted(d.name for d in BASE_DIR.parent.iterdir() if (d / "lab.toml").is_file())
    assert sorted(LABS) == found and len(found) >= 13
    assert len({lab.number for lab in all_labs()}) == len(found), "two labs share a number"
    for lab in all_labs():
        assert _test_names(lab.directory), lab.name
        assert lab.readme.is_file(), lab.name


def _check(lab: Lab) -> LabCheck:
    check = check_lab(lab)
    assert check.problems == []
    reference, handout, solved = check.reference, check.handout, check.solved
    assert reference.score == reference.max_score > 0
    assert solved.score == solved.max_score == reference.max_score
    assert check.kept[0] == lab.name and set(check.kept[1:]) >= set(lab.requires)
    ran = {t.name for t in reference.tests}
    if lab.hidden_dir.is_dir():
        assert _test_names(lab.hidden_dir) <= ran      # the hidden tests ran, and passed
        assert _test_names(lab.hidden_dir) <= {t.name for t in solved.tests if t.passed}
    assert handout.built
    base = [t for t in handout.tests if is_base_test(t.nodeid)]
    if lab.base:
        assert len(base) >= 4 and all(t.passed for t in base)
    else:
        assert base == []
    assert handout.score == sum(t.max_score for t in base)
    return check


# Every lab takes a few minutes (three gradings): the fast suite checks two, one of
# them with a prerequisite; PRIVLAB_SLOW=1 checks them all (CI's nightly run).
FAST_LABS = ("taskinfo", "lazy")


@pytest.mark.parametrize("name", [pytest.param(name, marks=() if name in FAST_LABS
                                               else pytest.mark.slow) for name in LABS])
def test_reference_and_handout_with_the_labs_solution_score_full_marks_and_the_handout_the_base(
        name: str) -> None:
    _check(find_lab(name))


NEW_LAB_TEST = '''
import pytest
from privlab.grade import KernelUnderTest

@pytest.mark.points(2)
def test_task_info_fills_a_good_pointer(privlab_kernel: KernelUnderTest) -> None:
    privlab_kernel.run("lab_taskinfo", "badptr", privlab_kernel.token).expect_pass()
'''

NEW_HIDDEN_TEST = '''
import pytest
from privlab.grade import KernelUnderTest

@pytest.mark.points(1)
@pytest.mark.visibility("hidden")
def test_never_shown(privlab_kernel: KernelUnderTest) -> None:
    privlab_kernel.run("lab_taskinfo", "counts", privlab_kernel.token, 2, 1).expect_pass()

@pytest.mark.points(1)
def test_shown_after_publishing(privlab_kernel: KernelUnderTest) -> None:
    privlab_kernel.run("lab_taskinfo", "counts", privlab_kernel.token, 1, 2).expect_pass()
'''


def test_a_lab_written_from_the_docs_passes_the_same_checks(tmp_path: Path) -> None:
    """A new lab directory (lab.toml, a graded test, a hidden test marked
    `visibility("hidden")`, a page) goes through the checks above unchanged, and each
    test's visibility is the one write-a-lab.md promises."""
    from privlab.grade.labs import load_lab

    lab = tmp_path / "newlab"
    (lab / "hidden").mkdir(parents=True)
    (lab / "lab.toml").write_text('title = "New"\nnumber = 40\n'
                                  'solution_files = ["kernel/taskinfo.c"]\n')
    (lab / "README.md").write_text("# New\n")
    (lab / "test_newlab.py").write_text(NEW_LAB_TEST)
    (lab / "hidden" / "test_newlab_hidden.py").write_text(NEW_HIDDEN_TEST)
    check = _check(load_lab(lab))
    seen = {t.name: t.visibility for t in check.reference.tests}
    assert seen["test_never_shown"] == "hidden"
    assert seen["test_shown_after_publishing"] == "after_published"
    assert seen["test_task_info_fills_a_good_pointer"] == "visible"


def test_a_labs_icount_shift_is_read_checked_and_found_from_its_tests(tmp_path: Path) -> None:
    from privlab.errors import BadInput
    from privlab.grade.labs import load_lab
    from privlab.grade.plugin import lab_icount_shift
    from privlab.pace import DEFAULT_ICOUNT_SHIFT

    lab = tmp_path / "timing"
    (lab / "hidden").mkdir(parents=True)
    (lab / "lab.toml").write_text('title = "t"\nicount_shift = 4\n')
    assert load_lab(lab).icount_shift == 4
    assert lab_icount_shift(lab / "hidden" / "test_x.py") == 4
    assert lab_icount_shift(tmp_path / "test_y.py") == DEFAULT_ICOUNT_SHIFT  # no lab.toml
    assert find_lab("taskinfo").icount_shift == DEFAULT_ICOUNT_SHIFT
    (lab / "lab.toml").write_text('title = "t"\nicount_shift = 11\n')
    with pytest.raises(BadInput, match=r"lab.toml: icount_shift must be an integer from "
                                       r"0 to 10, not 11$"):
        load_lab(lab)
