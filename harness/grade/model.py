"""Grading results as data: one `TestResult` per graded test, gathered in a
`GradeReport`. The pytest plugin writes them, the runner merges shards, the reports
(Gradescope, JUnit, scoreboard, gradebook) read them.

Groups: tests in a class with `@pytest.mark.points(N)` form a group worth N; the
children share it (unless they carry their own points), and each child scores on its
own (partial credit) unless the group is `all_or_nothing`, which `apply_groups` folds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

__all__ = ["GradeReport", "TestResult", "apply_groups", "format_points", "keep_ends", "shown"]

PASSED = "passed"
FAILED = "failed"
BUILD_TEST = "build"


def shown(text: str) -> str:
    """`text` as valid UTF-8: a file name that is not (Python keeps its bytes as lone
    surrogates) gets `\\xNN` escapes, which every report format and terminal takes."""
    try:
        raw = text.encode("utf-8", "surrogateescape")  # a file name's own bytes back
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace")


def keep_ends(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters; else its head and its tail, with a line
    between them saying how much was left out: a failure's headline comes first and
    the console's last lines come last, and both matter."""
    if len(text) <= limit:
        return text
    marker = "\n[... {} characters left out ...]\n"
    room = limit - len(marker.format(len(text)))
    head = max(room // 2, 0)
    tail = max(room - head, 0)
    return text[:head] + marker.format(len(text) - head - tail) + text[len(text) - tail:]


def format_points(value: float) -> str:
    return f"{value:g}" if value == int(value) else f"{value:.2f}"


@dataclass(frozen=True)
class TestResult:
    """One graded test of a report, in Gradescope's terms."""
    __test__ = False  # not a pytest test class, whatever its name

    name: str
    max_score: float
    score: float = 0.0
    status: str = FAILED           # "passed" or "failed" (Gradescope's words)
    output: str = ""
    visibility: str = "visible"    # Gradescope: visible, hidden, after_due_date, after_published
    nodeid: str = ""
    title: str = ""
    group: str = ""                # a class's title, for tests in a points group
    all_or_nothing: bool = False
    duration: float = 0.0
    ran: bool = False              # False until the test finished (or was not run by design)
    order: int = 0                 # position in the lab's collection order
    # A test marked smp (harness/grade/seeds.py): the harts and the scheduling seeds it
    # ran under, and those it failed under (empty for a test run once).
    harts: int = 0
    seeds: tuple[int, ...] = ()
    failed_seeds: tuple[int, ...] = ()

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TestResult:
        known = set(cls.__dataclass_fields__)
        fields = {k: v for k, v in data.items() if k in known}
        for name in ("seeds", "failed_seeds"):
            if name in fields:
                fields[name] = tuple(fields[name])
        return cls(**fields)


def apply_groups(results: Iterable[TestResult]) -> list[TestResult]:
    """Zero every test of an all-or-nothing group in which some test failed."""
    items = list(results)
    failed_groups = {r.group for r in items if r.all_or_nothing and not r.passed}
    return [replace(r, score=0.0) if r.all_or_nothing and r.group in failed_groups else r
            for r in items]


@dataclass
class GradeReport:
    """Everything one grading of one submission produced."""

    lab: str
    submission: str
    tests: list[TestResult] = field(default_factory=list)
    execution_time: float = 0.0
    built: bool = True
    build_output: str = ""
    notes: list[str] = field(default_factory=list)  # grader-level problems, if any
    commit: str = ""        # the submission's git commit (HEAD), when it is a repository
    committed_at: str = ""  # that commit's committer time (UTC), when git has it loose
    graded_at: str = ""     # when it was graded: UTC, ISO 8601, to the second

    @property
    def score(self) -> float:
        return round(sum(t.score for t in self.tests), 4)

    @property
    def max_score(self) -> float:
        return round(sum(t.max_score for t in self.tests), 4)

    @property
    def full_marks(self) -> bool:
        return self.built and self.score >= self.max_score and not self.notes

    def points_line(self) -> str:
        """The line GitHub Classroom's autograder reads."""
        return f"Points {format_points(self.score)}/{format_points(self.max_score)}"

    def by_name(self) -> dict[str, TestResult]:
        return {t.name: t for t in self.tests}
