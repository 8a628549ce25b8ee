"""How the grader starts the processes that handle a submission (its build, the test
processes that boot it): never from the submission, with an environment reduced to
what they need, and with limits.

- Safe path: the child is `python -P -m ...` (PYTHONSAFEPATH too, for its own
  children) with the staging slot as its working directory, so no `pytest.py`,
  `harness/` or `_pytest/` in the directory the grader was started from (a student's
  `privlab grade LAB` in their submission, the Classroom recipe's `--submission .`)
  is ever imported in place of the real one.
- Environment: only the variables a build or a test process reads (locale, PATH, the
  caches, privlab's own switches); a CI secret or a token in the grader's environment
  reaches no build, guest or report.
- Limits (setrlimit, inherited by every process the child starts): CPU seconds,
  address space, the size of any file written, and of open files. A 4-line `.fill`
  bomb fails in seconds with one line, not after minutes and gigabytes.
"""

from __future__ import annotations

import os
import resource
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..grade.memlimit import grade_memory

__all__ = [
    "BUILD_LIMITS",
    "Limits",
    "child_environment",
    "describe_signal",
    "limits_for_tests",
    "python_command",
]

KEPT_VARIABLES = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PRIVLAB_CACHE",
                  "PRIVLAB_UNSEALED_BUILD", "XDG_CACHE_HOME", "ZIG_GLOBAL_CACHE_DIR",
                  "ZIG_LOCAL_CACHE_DIR", "PYTHONHASHSEED")


@dataclass(frozen=True)
class Limits:
    """Resource limits of a child and everything it starts (each process on its own)."""

    cpu_seconds: int
    address_space: int          # bytes of virtual memory
    file_size: int              # bytes any one file may grow to

    def apply(self) -> None:
        """Set them on this process (called in the child, before it runs anything)."""
        for which, value in ((resource.RLIMIT_CPU, self.cpu_seconds),
                             (resource.RLIMIT_AS, self.address_space),
                             (resource.RLIMIT_FSIZE, self.file_size)):
            _soft, hard = resource.getrlimit(which)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(which, (value, value))

    def headline(self, output: str) -> str | None:
        """One line for a compiler's output that says it died by a signal: what the
        limits are (the compiler's own words follow)."""
        if "due to signal" not in output and "terminated by signal" not in output:
            return None
        return (f"the build was stopped: a compiler went past the build's limits "
                f"({self.address_space >> 30} GiB of memory, {self.file_size >> 20} MiB "
                f"per file, {self.cpu_seconds} s of CPU)")

    def preexec(self) -> Callable[[], None]:
        return self.apply

    def why(self, status: int) -> str | None:
        """What a child's (or its compiler's) death by `status` means, if a limit."""
        name = describe_signal(-status) if status < 0 else None
        if status in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
            return f"it used more than {self.cpu_seconds} s of CPU time"
        if status in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ):
            return f"it wrote a file larger than {self.file_size >> 20} MiB"
        if status in (-signal.SIGKILL,):
            return "it was killed (out of memory?)"
        return None if name is None else f"it was killed by {name}"


# A clean build of the kernel takes about 6 s of CPU and 300 MB; the compiler's
# virtual reservations are larger than what it touches.
BUILD_LIMITS = Limits(cpu_seconds=120, address_space=2 << 30, file_size=64 << 20)


def limits_for_tests() -> Limits:
    """A test process's: CPU far beyond any instruction budget, no runaway results or
    logs, and the memory a grading may take (harness/grade/memlimit.py: 16 GiB or
    PRIVLAB_GRADE_MEMORY; Unicorn reserves its translation cache up front)."""
    return Limits(cpu_seconds=3600, address_space=grade_memory(), file_size=256 << 20)


def describe_signal(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def child_environment(extra: Mapping[str, str] | None = None, *, cache: Path | None = None
                      ) -> dict[str, str]:
    """The reduced environment of a grader's child: the kept variables of this one,
    safe-path mode, the cache named outright (so HOME is not needed), and `extra`."""
    env = {k: v for k, v in os.environ.items() if k in KEPT_VARIABLES}
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if cache is not None:
        env["PRIVLAB_CACHE"] = str(cache)
    env.update(extra or {})
    return env


def python_command(executable: str, module: str, *args: str) -> list[str]:
    """`python -P -m module args`: the current directory is not on sys.path."""
    return [executable, "-P", "-m", module, *args]
