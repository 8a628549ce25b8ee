"""Automated grading of kernel labs: a pytest plugin (fixtures, markers, results),
lab specs and handouts, the grading runner and its reports.

Test writers use the `kernel` fixture (`KernelUnderTest`), whose `boot()` returns a
`KernelRun`, and the markers documented in harness/grade/plugin.py.
"""

from harness.grade.errors import BuildFailed, GradeFailure
from harness.grade.kernel import GRADER_TIMER_HZ, KernelImages, KernelUnderTest, new_token
from harness.grade.model import GradeReport, TestResult
from harness.grade.run import DEFAULT_MAX_INSNS, KernelRun
from harness.grade.trace import SyscallRecord, TraceView

__all__ = [
    "DEFAULT_MAX_INSNS",
    "GRADER_TIMER_HZ",
    "BuildFailed",
    "GradeFailure",
    "GradeReport",
    "KernelImages",
    "KernelRun",
    "KernelUnderTest",
    "SyscallRecord",
    "TestResult",
    "TraceView",
    "new_token",
]
