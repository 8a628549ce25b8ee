"""What a lab's graded tests use: the pytest plugin (fixtures, markers, result
recording), the kernel under test and its graded boots, ready-made checks, lab specs
(lab.toml) and the results model. Everything a test process needs, and nothing of
course-staff orchestration (grading a submission or a class, reports, handouts:
harness/course/, which imports this package and is never imported by it).

Test writers use the `privlab_kernel` fixture (`KernelUnderTest`), whose `boot()`
returns a `KernelRun`, and the markers documented in harness/grade/plugin.py.

The names below are imported on first use, so that a light importer (the grader's
command line, the sealed build child of harness/course/submission_build.py) does not
load the machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazyload import lazy_exports

PLUGIN = f"{__name__}.plugin"   # the pytest plugin's module, as `-p` names it

if TYPE_CHECKING:
    from .errors import BuildFailed, GradeFailure
    from .graded_boot import (
        DEFAULT_MAX_INSNS,
        AfterSyscall,
        AfterTrap,
        AfterXret,
        KernelRun,
        PrivilegeChange,
    )
    from .model import GradeReport, TestResult
    from .tokens import new_token
    from .trace_view import SyscallRecord, TraceView
    from .under_test import GRADER_TIMER_HZ, KernelImages, KernelUnderTest

__all__ = [
    "DEFAULT_MAX_INSNS",
    "GRADER_TIMER_HZ",
    "PLUGIN",
    "AfterSyscall",
    "AfterTrap",
    "AfterXret",
    "BuildFailed",
    "GradeFailure",
    "GradeReport",
    "KernelImages",
    "KernelRun",
    "KernelUnderTest",
    "PrivilegeChange",
    "SyscallRecord",
    "TestResult",
    "TraceView",
    "new_token",
]

_HOME = {
    "BuildFailed": "errors", "GradeFailure": "errors",
    "GRADER_TIMER_HZ": "under_test", "KernelImages": "under_test",
    "KernelUnderTest": "under_test",
    "new_token": "tokens",
    "GradeReport": "model", "TestResult": "model",
    "DEFAULT_MAX_INSNS": "graded_boot", "KernelRun": "graded_boot",
    "AfterSyscall": "graded_boot", "AfterTrap": "graded_boot", "AfterXret": "graded_boot",
    "PrivilegeChange": "graded_boot",
    "SyscallRecord": "trace_view", "TraceView": "trace_view",
}


__getattr__ = lazy_exports(__name__, globals(), _HOME)
