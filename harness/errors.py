"""The one error hierarchy of privlab.

Every error a user can cause derives from `PrivlabError`, carries a one-line message
and an exit status. The CLI prints ``privlab: <message>`` and exits with that status;
nothing a user does should ever show a Python traceback.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = [
    "BadInput",
    "BuildError",
    "ExitStatus",
    "GuestError",
    "NativeBuildError",
    "PrivlabError",
]



class ExitStatus(IntEnum):
    """Every exit status privlab itself chooses (a guest's own status passes through)."""

    OK = 0
    FAILURE = 1          # an error privlab reports: a build failure, a guest error
    BAD_INPUT = 2        # argparse's status too
    BUDGET = 124         # the instruction budget ran out (`timeout`'s status)
    INTERRUPTED = 130    # Ctrl-C (128 + SIGINT)



class PrivlabError(Exception):
    """Base of every error privlab reports to a user."""

    exit_status: int = ExitStatus.FAILURE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class BadInput(PrivlabError):
    """The user gave privlab something it cannot use: a missing file, not an ELF,
    the wrong machine, segments outside RAM, a bad option value."""

    exit_status = ExitStatus.BAD_INPUT


class BuildError(PrivlabError):
    """The cross-compiler rejected a source; `output` is what it printed, verbatim."""

    def __init__(self, message: str, output: str = "") -> None:
        super().__init__(message)
        self.output = output


class NativeBuildError(PrivlabError):
    """The host-side accelerator (harness/native) could not be compiled or loaded."""


class GuestError(PrivlabError):
    """The guest did something the machine cannot continue from (for example a trap
    storm or a `wfi` with no interrupt source). The message is the diagnosis."""
