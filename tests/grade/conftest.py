"""Helpers for the grader's own tests: kernels with deliberate changes, and grading."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from harness.grade.labs import find_lab
from harness.grade.model import GradeReport
from harness.grade.runner import GradeOptions, grade
from harness.paths import KERNEL_DIR

Edits = Mapping[str, tuple[str, str]]  # kernel file -> (text, replacement)


def variant(root: Path, edits: Edits) -> Path:
    """A submission directory: the reference kernel with `edits` applied."""
    kernel = root / "kernel"
    shutil.copytree(KERNEL_DIR, kernel)
    for name, (old, new) in edits.items():
        path = kernel / name
        text = path.read_text()
        assert old in text, f"{name} no longer contains {old!r}"
        path.write_text(text.replace(old, new, 1))
    return root


def grade_lab(lab: str, submission: Path, *, hidden: bool = False, keyword: str | None = None,
              jobs: int = 2) -> GradeReport:
    spec = find_lab(lab)
    return grade(GradeOptions(spec, submission, spec.hidden_dir if hidden else None, jobs,
                              keyword=keyword))
