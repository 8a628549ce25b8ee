"""Report formats: Gradescope results.json, JUnit XML, the points line, the gradebook
and the scoreboard, from a GradeReport built by hand (no machine needed)."""

from __future__ import annotations

import csv
import json
from io import StringIO
from pathlib import Path
from xml.etree import ElementTree as ET

from rich.console import Console

from privlab.course.reports import (
    gradescope_json,
    junit_xml,
    write_gradebook,
    write_reports,
)
from privlab.course.scoreboard import Scoreboard
from privlab.grade.graded_boot import LimitedConsole, diagnose
from privlab.grade.model import GradeReport, TestResult, apply_groups, keep_ends


def _report() -> GradeReport:
    tests = [
        TestResult("build", 0, 0, "passed", "built in 0.5 s", ran=True),
        TestResult("test_a", 3, 3, "passed", ran=True, duration=0.25),
        TestResult("test_b", 2, 0, "failed", "hang: still running\nlast traps:", ran=True),
        TestResult("test_c", 1.5, 1.5, "passed", group="vmprint output", ran=True),
        TestResult("test_h", 2, 0, "failed", "not run", visibility="after_published"),
    ]
    return GradeReport("mmap", "/subs/alice", tests, execution_time=1.234)


def test_points_line_is_what_github_classroom_reads() -> None:
    report = _report()
    assert report.points_line() == "Points 4.50/8.50"
    full = GradeReport("x", "y", [TestResult("t", 2, 2, "passed")])
    assert full.points_line() == "Points 2/2" and full.full_marks


# The keys of Gradescope's autograder specification (gradescope-autograders.readthedocs.io,
# "Output format"), each with the JSON type it takes.
SPEC_TOP = {"score": (int, float), "execution_time": int, "output": str, "output_format": str,
            "test_output_format": str, "test_name_format": str, "visibility": str,
            "stdout_visibility": str, "extra_data": dict, "tests": list, "leaderboard": list}
SPEC_TEST = {"score": (int, float), "max_score": (int, float), "status": str, "name": str,
             "name_format": str, "number": str, "output": str, "output_format": str,
             "tags": list, "visibility": str, "extra_data": dict}
VISIBILITIES = {"visible", "hidden", "after_due_date", "after_published"}


def test_gradescope_results_have_the_required_fields() -> None:
    data = gradescope_json(_report())
    assert set(data) <= set(SPEC_TOP)
    assert all(isinstance(v, SPEC_TOP[k]) for k, v in data.items()), data
    for test in data["tests"]:
        assert set(test) <= set(SPEC_TEST)
        assert all(isinstance(v, SPEC_TEST[k]) for k, v in test.items()), test
        assert test["status"] in ("passed", "failed") and test["visibility"] in VISIBILITIES
    assert data["visibility"] in VISIBILITIES and data["stdout_visibility"] in VISIBILITIES
    assert data["score"] == 4.5 and sum(t["max_score"] for t in data["tests"]) == 8.5
    assert data["execution_time"] == 1
    assert data["output"].startswith("Points 4.50/8.50")
    names = [t["name"] for t in data["tests"]]
    assert names == ["build", "test_a", "test_b", "vmprint output: test_c", "test_h"]
    b = data["tests"][2]
    assert b == {"name": "test_b", "score": 0, "max_score": 2, "status": "failed",
                 "output": "hang: still running\nlast traps:", "visibility": "visible"}
    assert data["tests"][4]["visibility"] == "after_published"
    json.dumps(data)  # serialisable as is


def test_junit_xml_has_one_testcase_per_test_with_failures_and_scores() -> None:
    root = ET.fromstring(junit_xml(_report()))
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("tests") == "5" and suite.get("failures") == "2"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["build", "test_a", "test_b", "test_c", "test_h"]
    failure = cases[2].find("failure")
    assert failure is not None and failure.get("message") == "hang: still running"
    scores = {p.get("name"): p.get("value") for p in cases[3].iter("property")}
    assert scores == {"score": "1.50", "max_score": "1.50"}


def test_write_reports_writes_three_files(tmp_path: Path) -> None:
    files = write_reports(_report(), tmp_path / "out")
    assert sorted(p.name for p in files) == ["junit.xml", "report.txt", "results.json"]
    text = (tmp_path / "out" / "report.txt").read_text()
    assert "FAIL test_b [0/2]\n    hang: still running" in text
    assert text.rstrip().endswith("Points 4.50/8.50")


def test_gradebook_has_a_row_per_submission_and_a_column_per_graded_test(
        tmp_path: Path) -> None:
    broken = GradeReport("mmap", "/subs/bob", [TestResult("build", 0, 0, "failed", "error"),
                                               TestResult("test_a", 3, 0, "failed")],
                         built=False)
    write_gradebook([("alice", _report()), ("bob", broken)], tmp_path / "gradebook.csv")
    rows = list(csv.reader((tmp_path / "gradebook.csv").open()))
    assert rows[0] == ["submission", "score", "max_score", "built", "notes", "commit",
                       "committed_at", "graded_at", "test_a", "test_b",
                       "vmprint output: test_c", "test_h"]
    assert rows[1][:5] == ["alice", "4.50", "8.50", "yes", "0"]
    assert rows[2] == ["bob", "0", "3", "no", "0", "", "", "", "0", "", "", ""]


def test_all_or_nothing_group_scores_zero_if_any_child_fails() -> None:
    tests = [TestResult("a", 1, 1, "passed", group="g", all_or_nothing=True),
             TestResult("b", 1, 0, "failed", group="g", all_or_nothing=True),
             TestResult("c", 1, 1, "passed", group="h")]
    assert [t.score for t in apply_groups(tests)] == [0, 0, 1]


def test_scoreboard_renders_each_test_with_points_and_the_first_line_of_failures() -> None:
    out = StringIO()
    Console(width=100, file=out, color_system=None).print(Scoreboard(_report()))
    expected = (
        "mmap: /subs/alice" + " " * 50 + "\n"
        "┏━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━┳━━━━━━━━━━━━━━━━━━━━━┓\n"
        "┃ test                   ┃    points ┃      ┃ why                 ┃\n"
        "┡━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━╇━━━━━━━━━━━━━━━━━━━━━┩\n"
        "│ build                  │       0/0 │ pass │                     │\n"
        "│ test_a                 │       3/3 │ pass │                     │\n"
        "│ test_b                 │       0/2 │ FAIL │ hang: still running │\n"
        "│ vmprint output: test_c │ 1.50/1.50 │ pass │                     │\n"
        "│ test_h                 │       0/2 │ FAIL │ not run             │\n"
        "└────────────────────────┴───────────┴──────┴─────────────────────┘\n"
        "4.50 of 8.50 points in 1.2 s\n")
    assert out.getvalue() == expected


def test_junit_xml_is_well_formed_whatever_the_guest_printed() -> None:
    """A kernel's output (NULs, escape sequences, bells) and a submission's file names
    end up in failure messages: XML 1.0 cannot hold those characters at all."""
    nasty = "panic: \x00\x01\x07\x1b[31mred\x1b[0m \ufffe <&> ]]>"
    report = GradeReport("mmap", "/subs/\x1bx", [
        TestResult("test_a", 1, 0, "failed", f"{nasty}\nlast console lines:\n  | {nasty}",
                   ran=True, group="g\x0c")])
    root = ET.fromstring(junit_xml(report))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None and failure.text is not None
    assert "\\x1b[31mred" in failure.text and "<&> ]]>" in failure.text
    assert failure.get("message", "").startswith("panic: \\x00\\x01\\x07")


def test_a_diagnosis_shows_the_guests_control_characters_escaped() -> None:
    console = LimitedConsole()
    for byte in b"ok\n\x1b[2J\x07panic: bad\x00 thing\n":
        console.put(byte)
    text = diagnose(None, console, None)
    assert "| \\x1b[2J\\x07panic: bad\\x00 thing" in text and "\x1b" not in text


def test_scoreboard_shows_brackets_in_paths_and_output_verbatim() -> None:
    """Rich markup is never read from a submission's path or a kernel's output: '[/]'
    crashed `privlab grade --details` with a MarkupError traceback, and '[bold]' in a
    path vanished."""
    report = GradeReport("mmap", "/subs/[bold]eve[/]", [
        TestResult("test_a", 1, 0, "failed", "kernel panic: x\n  | [/] [red]oops[/red]",
                   ran=True)])
    out = StringIO()
    Console(width=120, file=out, color_system=None).print(Scoreboard(report, details=True))
    text = out.getvalue()
    assert "mmap: /subs/[bold]eve[/]" in text and "| [/] [red]oops[/red]" in text


def test_visible_totals_keep_hidden_points_out_of_the_output_and_the_score() -> None:
    """test_h (2 points, after_published) failed here, but had it passed, a total of
    6.50/8.50 would tell students so before grades are released."""
    data = gradescope_json(_report(), visible_totals=True)
    assert "score" not in data        # Gradescope adds up the tests, each as it may show
    assert data["output"] == ("Points 4.50/6.50 on the tests shown now; 2 more points come "
                              "from tests shown when grades are released")
    assert sum(t["score"] for t in data["tests"]) == 4.5
    plain = GradeReport("x", "y", [TestResult("t", 2, 2, "passed")])
    assert gradescope_json(plain, visible_totals=True)["score"] == 2   # nothing hidden


def test_a_long_output_keeps_its_head_and_its_tail() -> None:
    text = "HEADLINE: the first failure\n" + "x" * 50_000 + "\nlast console line\n"
    kept = keep_ends(text, 20_000)
    assert len(kept) <= 20_000
    assert kept.startswith("HEADLINE: the first failure\n")
    assert kept.endswith("x\nlast console line\n")
    assert "\n[... 30" in kept and " characters left out ...]\n" in kept
    assert keep_ends("short", 20_000) == "short"


def test_the_gradebook_records_a_git_submissions_commit_and_when_it_was_graded(
        tmp_path: Path) -> None:
    import subprocess

    from privlab.course.provenance import commit_of, commit_time

    repo = tmp_path / "alice"
    (repo / "kernel").mkdir(parents=True)
    (repo / "kernel" / "x.c").write_text("int x;\n")
    env = {"GIT_AUTHOR_DATE": "2026-03-01T12:00:00Z", "GIT_COMMITTER_DATE": "2026-03-01T12:00:00Z",
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@b", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "lab"]):
        subprocess.run(["git", "-C", str(repo), *cmd], check=True, env=env)
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    assert commit_of(repo) == head
    assert commit_time(repo, head) == "2026-03-01T12:00:00+00:00"
    subprocess.run(["git", "-C", str(repo), "pack-refs", "--all"], check=True, env=env)
    assert commit_of(repo) == head                     # from packed-refs too
    assert commit_of(tmp_path) == ""                   # not a repository
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / ".git").symlink_to(repo / ".git")
    assert commit_of(tmp_path / "linked") == ""        # a .git that is a link: not read
    report = GradeReport("mmap", str(repo), [TestResult("t", 1, 1, "passed")], commit=head,
                         committed_at="2026-03-01T12:00:00+00:00",
                         graded_at="2026-03-02T08:00:00+00:00")
    write_gradebook([("alice", report)], tmp_path / "gradebook.csv")
    rows = list(csv.reader((tmp_path / "gradebook.csv").open()))
    assert rows[1][5:8] == [head, "2026-03-01T12:00:00+00:00", "2026-03-02T08:00:00+00:00"]
