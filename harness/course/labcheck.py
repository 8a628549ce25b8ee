"""Checking a lab in every direction, as CI does and as course staff do while writing
one, on handouts made as students get them:

- the reference (the checkout itself) scores 100%, hidden tests included;
- the handout with this lab's solution and its prerequisites' (lab.toml `requires`)
  put back scores 100% too: the lab stands on its own, with what it declares;
- the handout alone (every lab's solution removed) builds, boots and scores exactly
  the base-system points: every base test, and nothing on the lab's own tests (a lab
  test the bare handout passes checks nothing the lab adds)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BadInput
from ..grade.labs import Lab, all_labs, is_base_test, prerequisites
from ..grade.model import BUILD_TEST, GradeReport
from ..paths import REPO_ROOT
from .grade_one import GradeOptions, grade
from .handout import make_handout

__all__ = ["LabCheck", "check_lab"]


@dataclass
class LabCheck:
    """A lab's self-check: the grades of its reference, its handout and its solved handout,
    and what is wrong with them (nothing, for a sound lab)."""
    lab: str
    reference: GradeReport
    handout: GradeReport
    solved: GradeReport             # the handout with the lab's and its prerequisites' solutions
    kept: tuple[str, ...] = ()      # the labs whose solutions `solved` kept
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _full_marks(report: GradeReport, what: str) -> list[str]:
    problems = [f"{what} fails {t.name}: {(t.output.splitlines() or [''])[0]}"
                for t in report.tests if not t.passed]
    if not report.built:
        problems.insert(0, f"{what} does not build:\n{report.build_output}")
    return problems


def _base_only(report: GradeReport) -> list[str]:
    if not report.built:
        return [f"the handout does not build:\n{report.build_output}"]
    problems = []
    for t in report.tests:
        if t.name == BUILD_TEST:
            continue
        if is_base_test(t.nodeid) and not t.passed:
            problems.append(f"the handout fails base test {t.name}: "
                            f"{(t.output.splitlines() or [''])[0]}")
        elif not is_base_test(t.nodeid) and t.score > 0:
            problems.append(f"the handout scores on lab test {t.name}")
    return problems


def check_lab(lab: Lab, *, jobs: int = 2, source: Path = REPO_ROOT,
              hidden: Path | None = None) -> LabCheck:
    """Grade the reference, the handout with the lab's (and its prerequisites')
    solutions kept, and the bare handout, with the hidden tests in `hidden` (by default
    the lab's own `hidden/`, if it has one)."""
    if hidden is None and lab.hidden_dir.is_dir():
        hidden = lab.hidden_dir
    elif hidden is not None and not hidden.is_dir():
        raise BadInput(f"{hidden}: no such directory of hidden tests")
    labs = all_labs(lab.directory.parent)
    kept = (lab.name, *(p.name for p in prerequisites(lab, labs)))
    reference = grade(GradeOptions(lab, source, hidden, jobs))
    with tempfile.TemporaryDirectory(prefix="privlab-handout-") as tmp:
        make_handout([lab], Path(tmp) / "solved", source, keep=kept, every_lab=labs)
        solved = grade(GradeOptions(lab, Path(tmp) / "solved", hidden, jobs))
        make_handout([lab], Path(tmp) / "handout", source, every_lab=labs)
        handout = grade(GradeOptions(lab, Path(tmp) / "handout", hidden, jobs))
    check = LabCheck(lab.name, reference, handout, solved, kept)
    check.problems += _full_marks(reference, "the reference")
    check.problems += _full_marks(solved, f"the handout with {' + '.join(kept)}")
    check.problems += _base_only(handout)
    check.problems += [f"grader: {n}" for n in reference.notes + solved.notes + handout.notes]
    return check
