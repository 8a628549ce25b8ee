"""Automated grading of kernel labs: a pytest plugin (fixtures, markers, results),
lab specs and handouts, the grading runner and its reports.

Test writers use the `privlab_kernel` fixture (`KernelUnderTest`), whose `boot()`
returns a `KernelRun`, and the markers documented in harness/grade/plugin.py.

The names below are imported on first use, so that a light submodule (the build child
of harness/grade/submission_build.py) does not load the machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_exports

if TYPE_CHECKING:
    from .errors import BuildFailed, GradeFailure
    from .kernel import GRADER_TIMER_HZ, KernelImages, KernelUnderTest, new_token
    from .kernel_run import (
        DEFAULT_MAX_INSNS,
        AfterSyscall,
        AfterTrap,
        AfterXret,
        KernelRun,
        PrivilegeChange,
    )
    from .model import GradeReport, TestResult
    from .trace import SyscallRecord, TraceView

__all__ = [
    "DEFAULT_MAX_INSNS",
    "GRADER_TIMER_HZ",
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
    "GRADER_TIMER_HZ": "kernel", "KernelImages": "kernel", "KernelUnderTest": "kernel",
    "new_token": "kernel",
    "GradeReport": "model", "TestResult": "model",
    "DEFAULT_MAX_INSNS": "kernel_run", "KernelRun": "kernel_run",
    "AfterSyscall": "kernel_run", "AfterTrap": "kernel_run", "AfterXret": "kernel_run",
    "PrivilegeChange": "kernel_run",
    "SyscallRecord": "trace", "TraceView": "trace",
}


__getattr__ = lazy_exports(__name__, globals(), _HOME)
