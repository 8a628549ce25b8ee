"""A class at a glance: the score histogram and each test's pass rate, for the terminal
(rich) and as one self-contained HTML page (no scripts or styles from anywhere else).
`privlab grade LAB --submissions DIR` prints the one and writes the other as
summary.html beside gradebook.csv."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from ..grade.model import GradeReport, format_points
from .reports import display_name

__all__ = ["BINS", "ClassSummary", "TestRate", "summarize"]

BINS = 10   # histogram bars: 0-10 %, 10-20 %, ..., 90-100 % of the maximum


@dataclass(frozen=True)
class TestRate:
    """How many of the graded submissions passed one test."""
    name: str
    passed: int
    graded: int

    @property
    def rate(self) -> float:
        return self.passed / self.graded if self.graded else 0.0


@dataclass(frozen=True)
class ClassSummary:
    """A class's grades for one lab: the scores, their histogram and each test's pass rate."""
    lab: str
    scores: tuple[float, ...]
    max_score: float
    bins: tuple[int, ...]          # submissions per tenth of the maximum
    tests: tuple[TestRate, ...]    # graded tests (worth points), in the reports' order
    built: int

    @property
    def count(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0

    @property
    def median(self) -> float:
        ordered = sorted(self.scores)
        if not ordered:
            return 0.0
        mid = len(ordered) // 2
        return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2

    @property
    def full_marks(self) -> int:
        return sum(1 for s in self.scores if self.max_score and s >= self.max_score)

    def bin_label(self, n: int) -> str:
        low, high = n * 100 // BINS, (n + 1) * 100 // BINS
        return f"{low}-{high} %" if n < BINS - 1 else f"{low}-100 %"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(10, min(40, options.max_width - 40))
        peak = max(self.bins, default=0) or 1
        histogram = Table(title=Text(f"{self.lab}: {self.count} submissions, "
                                     f"mean {format_points(round(self.mean, 1))}, median "
                                     f"{format_points(round(self.median, 1))} of "
                                     f"{format_points(self.max_score)}"),
                          title_justify="left", show_header=False, box=None)
        histogram.add_column("score", justify="right", no_wrap=True)
        histogram.add_column("bar", no_wrap=True)
        histogram.add_column("count", justify="right", no_wrap=True)
        for n in reversed(range(BINS)):
            bar = "█" * round(width * self.bins[n] / peak)
            histogram.add_row(Text(self.bin_label(n)), Text(bar, style="cyan"),
                              Text(str(self.bins[n])))
        yield histogram
        rates = Table(title=Text("pass rate per test"), title_justify="left")
        rates.add_column("test", overflow="fold")
        rates.add_column("passed", justify="right", no_wrap=True)
        rates.add_column("", no_wrap=True)
        for t in self.tests:
            filled = round(20 * t.rate)
            style = "green" if t.rate >= 0.8 else "yellow" if t.rate >= 0.5 else "red"
            rates.add_row(Text(t.name), Text(f"{t.passed}/{t.graded} {t.rate:4.0%}"),
                          Text("█" * filled + "·" * (20 - filled), style=style))
        yield rates
        yield Text(f"{self.built} of {self.count} built; {self.full_marks} with full marks")

    def to_html(self) -> str:
        """The page: inline CSS only; a small inline script measures the drawn bars
        into data attributes (what a browser test reads back)."""
        e = html.escape
        peak = max(self.bins, default=0) or 1
        bars = "\n".join(
            f'<div class="col"><div class="bar" data-count="{c}" '
            f'style="height:{100 * c / peak:.1f}%" title="{e(self.bin_label(n))}: {c}">'
            f'</div><div class="label">{e(self.bin_label(n))}<br><b>{c}</b></div>'
            "</div>"
            for n, c in enumerate(self.bins))
        rows = "\n".join(
            f'<tr data-test="{e(t.name)}"><td>{e(t.name)}</td>'
            f'<td class="num">{t.passed}/{t.graded}</td><td class="num">{t.rate:.0%}</td>'
            f'<td class="meter"><div class="fill" data-rate="{t.rate:.4f}" '
            f'style="width:{100 * t.rate:.1f}%"></div></td></tr>'
            for t in self.tests)
        stats = (f"{self.count} submissions · mean {format_points(round(self.mean, 1))} · "
                 f"median {format_points(round(self.median, 1))} of "
                 f"{format_points(self.max_score)} · {self.built} built · "
                 f"{self.full_marks} with full marks")
        return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{e(self.lab)}: class summary</title>
<style>
body {{ font: 15px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }}
h1 {{ font-size: 1.4em; margin-bottom: .2em; }}
.stats {{ color: #555; margin-bottom: 1.5em; }}
.hist {{ display: flex; align-items: flex-end; gap: 6px; height: 240px;
         border-bottom: 1px solid #999; margin-bottom: 3.2em; }}
.col {{ flex: 1; height: 100%; display: flex; flex-direction: column;
        justify-content: flex-end; align-items: stretch; position: relative; }}
.bar {{ background: #2a7ab8; min-height: 0; }}
.label {{ position: absolute; top: 100%; width: 100%; text-align: center;
          font-size: .75em; color: #555; }}
table {{ border-collapse: collapse; margin-top: 2em; min-width: 40em; }}
td, th {{ padding: .25em .6em; border-bottom: 1px solid #ddd; text-align: left; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; }}
td.meter {{ width: 14em; }}
.fill {{ height: .8em; background: #3a9a4a; }}
</style></head>
<body data-submissions="{self.count}">
<h1>{e(self.lab)}: class summary</h1>
<div class="stats">{e(stats)}</div>
<h2>Scores (share of {e(format_points(self.max_score))} points)</h2>
<div class="hist" id="hist">
{bars}
</div>
<h2>Pass rate per test</h2>
<table id="rates"><tr><th>test</th><th>passed</th><th>rate</th><th></th></tr>
{rows}
</table>
<script>
for (const el of document.querySelectorAll(".bar, .fill")) {{
  const box = el.getBoundingClientRect();
  el.dataset.px = Math.round(el.classList.contains("bar") ? box.height : box.width);
}}
document.body.dataset.ready = "1";
</script>
</body></html>
"""


def summarize(lab: str, reports: Sequence[tuple[str, GradeReport]]) -> ClassSummary:
    scores = tuple(r.score for _, r in reports)
    max_score = max((r.max_score for _, r in reports), default=0.0)
    bins = [0] * BINS
    for score in scores:
        share = score / max_score if max_score else 0.0
        bins[min(BINS - 1, int(share * BINS))] += 1
    names: list[str] = []
    passed: dict[str, int] = {}
    graded: dict[str, int] = {}
    for _, report in reports:
        for t in report.tests:
            if not t.max_score:
                continue
            name = display_name(t)
            if name not in graded:
                names.append(name)
            graded[name] = graded.get(name, 0) + 1
            passed[name] = passed.get(name, 0) + int(t.passed)
    tests = tuple(TestRate(n, passed[n], graded[n]) for n in names)
    return ClassSummary(lab, scores, max_score, tuple(bins), tests,
                        sum(1 for _, r in reports if r.built))
