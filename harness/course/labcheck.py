"""Checking a lab in both directions, as CI does and as course staff do while writing
one: the reference kernel must score 100% (hidden tests included), and the handout
must build, boot, score 0 on the lab's own tests and keep every base-system test."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BadInput
from ..grade.labs import Lab, is_base_test
from ..grade.model import BUILD_TEST, GradeReport
from ..paths import REPO_ROOT
from .grade_one import GradeOptions, grade
from .handout import make_handout

__all__ = ["LabCheck", "check_lab"]


@dataclass
class LabCheck:
    lab: str
    reference: GradeReport
    handout: GradeReport
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_lab(lab: Lab, *, jobs: int = 2, source: Path = REPO_ROOT,
              hidden: Path | None = None) -> LabCheck:
    """Grade the reference and the handout, with the hidden tests in `hidden` (by
    default the lab's own `hidden/`, if it has one)."""
    if hidden is None and lab.hidden_dir.is_dir():
        hidden = lab.hidden_dir
    elif hidden is not None and not hidden.is_dir():
        raise BadInput(f"{hidden}: no such directory of hidden tests")
    reference = grade(GradeOptions(lab, source, hidden, jobs))
    with tempfile.TemporaryDirectory(prefix="privlab-handout-") as tmp:
        make_handout([lab], Path(tmp) / "handout", source)
        handout = grade(GradeOptions(lab, Path(tmp) / "handout", hidden, jobs))
    check = LabCheck(lab.name, reference, handout)
    for t in reference.tests:
        if not t.passed:
            check.problems.append(f"reference fails {t.name}: {t.output.splitlines()[:1]}")
    if not handout.built:
        check.problems.append(f"the handout does not build:\n{handout.build_output}")
    for t in handout.tests:
        if t.name == BUILD_TEST:
            continue
        if is_base_test(t.nodeid) and not t.passed:
            check.problems.append(f"the handout fails base test {t.name}")
        elif not is_base_test(t.nodeid) and t.score > 0:
            check.problems.append(f"the handout scores on lab test {t.name}")
    check.problems += [f"grader: {n}" for n in reference.notes + handout.notes]
    return check
