"""Helpers for the grader's own tests: kernels with deliberate changes, and grading."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from privlab.abi.syscall_table import SYSCALL_TABLE
from privlab.build.images import build_images
from privlab.course.grade_one import GradeOptions, grade
from privlab.grade.labs import find_lab
from privlab.grade.model import GradeReport
from privlab.grade.under_test import KernelImages, KernelUnderTest
from privlab.paths import KERNEL_DIR, REPO_ROOT

Edits = Mapping[str, tuple[str, str]]  # kernel file -> (text, replacement)


@pytest.fixture(scope="session")
def grade_images() -> KernelImages:
    """The bundled rv64 kernel as the grader loads it, for tests that drive a
    KernelUnderTest directly (no lab, no staging)."""
    built = build_images("rv64", out_dir=REPO_ROOT / "build" / "test-grade-kernel" / "rv64",
                         listings=False)
    return KernelImages(built.firmware, built.kernel, built.users, SYSCALL_TABLE)


@pytest.fixture
def kernel(grade_images: KernelImages) -> Iterator[KernelUnderTest]:
    k = KernelUnderTest(grade_images)
    yield k
    k.close()


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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: minutes of grading; run with PRIVLAB_SLOW=1")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked slow run only with PRIVLAB_SLOW=1 (every lab's full check)."""
    if os.environ.get("PRIVLAB_SLOW") == "1":
        return
    skip = pytest.mark.skip(reason="slow: set PRIVLAB_SLOW=1 to run it")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)
