"""The class summary: histogram and pass rates, in the terminal (golden, fixed width)
and as an HTML page rendered by real headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from privlab.course.summary import summarize
from privlab.grade.model import GradeReport, TestResult

GOLDEN = Path(__file__).with_name("golden") / "summary-80.txt"


def _class() -> list[tuple[str, GradeReport]]:
    """Five students of a 10-point lab: 10, 10, 7, 3 and a build failure (0)."""
    def report(name: str, build: bool, *passed: bool) -> tuple[str, GradeReport]:
        points = (3.0, 4.0, 3.0)
        tests = [TestResult("build", 0, 0, "passed" if build else "failed", ran=True)]
        tests += [TestResult(f"test_{n}", p, p if ok else 0, "passed" if ok else "failed",
                             ran=True, group="<mmap> & co" if n == 2 else "")
                  for n, (p, ok) in enumerate(zip(points, passed, strict=True))]
        return name, GradeReport("taskinfo", name, tests, built=build)
    return [report("alice", True, True, True, True), report("bob", True, True, True, True),
            report("carol", True, False, True, True), report("dave", True, True, False, False),
            report("eve", False, False, False, False)]


def test_summary_counts_scores_per_tenth_and_passes_per_test() -> None:
    summary = summarize("taskinfo", _class())
    assert summary.scores == (10, 10, 7, 3, 0) and summary.max_score == 10
    assert summary.bins == (1, 0, 0, 1, 0, 0, 0, 1, 0, 2)
    assert [(t.name, t.passed, t.graded) for t in summary.tests] == [
        ("test_0", 3, 5), ("test_1", 3, 5), ("<mmap> & co: test_2", 3, 5)]
    assert (summary.mean, summary.median, summary.full_marks, summary.built) == (6, 7, 2, 4)


def test_terminal_summary_matches_the_golden_at_80_columns() -> None:
    console = Console(width=80, record=True, color_system=None, force_terminal=False)
    console.print(summarize("taskinfo", _class()))
    text = console.export_text()
    assert text == GOLDEN.read_text()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_html_summary_renders_in_headless_chromium(tmp_path: Path) -> None:
    page = tmp_path / "summary.html"
    text = summarize("taskinfo", _class()).to_html()
    for banned in ("http://", "https://", "<link", "src=", "@import"):
        assert banned not in text
    page.write_text(text)
    assert CHROMIUM is not None
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
         "--disable-background-networking", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,800", "--dump-dom",
         page.as_uri()], capture_output=True, text=True, timeout=90, check=False).stdout
    assert 'data-ready="1"' in dom and 'data-submissions="5"' in dom
    # The bars were laid out in proportion to their counts: 2 is the tallest, 0 is flat.
    heights = [(int(c), int(px)) for c, px in
               re.findall(r'class="bar" data-count="(\d+)"[^>]*data-px="(\d+)"', dom)]
    assert len(heights) == 10
    tallest = max(px for _, px in heights)
    assert tallest > 100
    for count, px in heights:
        assert abs(px - tallest * count / 2) <= 2, heights
    widths = [int(px) for px in re.findall(r'class="fill"[^>]*data-px="(\d+)"', dom)]
    assert len(widths) == 3 and len(set(widths)) == 1 and widths[0] > 0
    assert "&lt;mmap&gt; &amp; co: test_2" in dom   # names are text, never markup
