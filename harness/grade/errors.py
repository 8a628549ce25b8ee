"""What a graded check raises when the kernel under test falls short.

`GradeFailure` is an AssertionError, so pytest reports it as an ordinary test failure;
its text is what a student reads: the expectation, then the diagnosis (how the run
ended, the last console lines, the last traps).
"""

from __future__ import annotations

from ..errors import PrivlabError

__all__ = ["BuildFailed", "GradeFailure"]


class GradeFailure(AssertionError):
    """An expectation on the kernel under test did not hold."""

    def __init__(self, message: str, diagnosis: str = "") -> None:
        super().__init__(message + (f"\n\n{diagnosis}" if diagnosis else ""))
        self.message = message
        self.diagnosis = diagnosis


class BuildFailed(PrivlabError):
    """The submission did not build; every test that needs the kernel fails with this."""

    def __init__(self, output: str) -> None:
        super().__init__("not run: the kernel did not build (see the build test)")
        self.output = output
