"""`privlab grade LAB`: build a submission, run the lab's graded tests in fresh
machines, print a scoreboard and write results.json (Gradescope), junit.xml and
report.txt. The last line is `Points X/Y`; the exit status is 0 only for full marks
(GitHub Classroom's convention), 1 otherwise, 2 for bad input (an unknown lab, a
missing directory, a -k that matches no test). A directory without kernel/ is graded:
its build test fails and the reports are written.

`privlab grade LAB --submissions DIR` grades every directory in DIR on Dask (a local
cluster of --jobs worker processes, or --scheduler tcp://HOST:PORT) and writes one
report directory per submission plus gradebook.csv and summary.html; submissions
already graded with the same content and lab version are kept (--regrade grades them
again). Its exit status is 0 once the gradebook is written, whatever the scores, and
1 if the grader itself failed on some submission (named on stderr).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BadInput, ExitStatus
from .helplayout import HelpLayout

if TYPE_CHECKING:
    from rich.console import Console

    from ..course.grade_one import GradeOptions
    from ..grade.model import GradeReport

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("grade", help="grade a lab submission (or a class of them)",
                       description=__doc__, formatter_class=HelpLayout)
    p.add_argument("lab", help="lab name or number (privlab lab list)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--submission", metavar="DIR", default=".",
                       help="the submission: a directory with kernel/ (default: .)")
    where.add_argument("--submissions", metavar="DIR",
                       help="grade every submission directory under DIR")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="with --submissions: grade on this Dask cluster (tcp://HOST:PORT) "
                        "instead of a local one")
    p.add_argument("--regrade", action="store_true",
                   help="with --submissions: grade again submissions already graded")
    p.add_argument("--hidden", metavar="DIR", help="also run the hidden tests in DIR")
    p.add_argument("--out", metavar="DIR",
                   help="where reports go (default: privlab-grade/LAB in the current directory)")
    p.add_argument("--jobs", type=int, metavar="N",
                   help="parallel test processes (or submissions, with --submissions)")
    p.add_argument("--arch", choices=("rv64", "rv32"), default="rv64")
    p.add_argument("-k", dest="keyword", metavar="EXPR", help="grade only tests matching EXPR")
    p.add_argument("--details", action="store_true", help="show whole failure messages")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="longer comparisons in failure messages, where a test compares "
                        "with a plain assert (pytest's 'Use -v to get more diff'); -vv: "
                        "whole")
    p.add_argument("--visible-totals", action=argparse.BooleanOptionalAction, default=None,
                   help="results.json totals only the tests students see now: hidden "
                        "tests' points stay out of its output line and score until "
                        "grades are released (default: on in a Gradescope autograder, "
                        "where /autograder/results is the output directory)")
    p.add_argument("--seed", type=int, metavar="N",
                   help="reproduce a run's random test parameters (shown on failures)")
    p.set_defaults(func=run)


def _hidden(path: str | None) -> Path | None:
    if path is None:
        return None
    hidden = Path(path).resolve()
    if not hidden.is_dir():
        raise BadInput(f"{hidden}: no such directory of hidden tests")
    return hidden


GRADESCOPE_RESULTS = Path("/autograder/results")


def _visible_totals(args: argparse.Namespace, out: Path) -> bool:
    """--visible-totals as given, else on where Gradescope reads the results."""
    if args.visible_totals is not None:
        return bool(args.visible_totals)
    return out.resolve() == GRADESCOPE_RESULTS


def _selects_nothing(report: GradeReport) -> bool:
    """Only the build entry: `-k` matched no test (or the lab has none)."""
    from ..grade.model import BUILD_TEST

    return all(t.name == BUILD_TEST for t in report.tests) and not report.notes


def run(args: argparse.Namespace) -> int:
    from ..course.grade_one import GradeOptions, default_jobs
    from ..course.submission_build import require_seal
    from ..grade.labs import find_lab
    from ..theme import PipeConsole

    lab = find_lab(args.lab)
    require_seal()          # no Landlock: refuse before grading anything (docs/grading)
    out = Path(args.out or Path("privlab-grade") / lab.name)
    # The graded kernel is kept beside the reports: written under a temporary name,
    # renamed into place with them (write_reports).
    kept = out / f".kernel.elf.{os.getpid()}.tmp"
    options = GradeOptions(lab, Path(args.submission).resolve(), _hidden(args.hidden),
                           args.jobs or default_jobs(), args.arch, args.keyword,
                           keep_kernel=None if args.submissions else kept,
                           seed=args.seed, verbosity=args.verbose)
    console = PipeConsole(stderr=False, highlight=False)
    if args.submissions:
        return _batch(options, Path(args.submissions), out, args, console)
    if args.scheduler or args.regrade:
        raise BadInput("--scheduler and --regrade go with --submissions DIR")
    if not options.submission.is_dir():
        raise BadInput(f"{options.submission}: no such directory")
    # A directory without kernel/ is still graded (a failed build test), so an
    # autograder always gets its results.json.
    from ..course.grade_one import grade
    from ..course.reports import write_reports
    from ..course.scoreboard import Scoreboard

    try:
        report = grade(options)
        # Never an older build's kernel.elf beside these reports.
        write_reports(report, out, kernel=kept if report.built and kept.is_file() else None,
                      replace_kernel=True, visible_totals=_visible_totals(args, out))
    finally:
        kept.unlink(missing_ok=True)
    console.print(Scoreboard(report, details=args.details))
    elf = f"; the graded kernel: {out}/kernel.elf" if report.built else ""
    console.print(f"reports: {out}/results.json, junit.xml, report.txt{elf}", markup=False,
                  soft_wrap=True)
    sys.stdout.flush()
    print(report.points_line(), flush=True)
    if args.keyword and _selects_nothing(report):
        print(f"privlab: -k {args.keyword!r} matches no test of {lab.name}", file=sys.stderr)
        return ExitStatus.BAD_INPUT
    return 0 if report.full_marks else 1


def _batch(options: GradeOptions, root: Path, out: Path, args: argparse.Namespace,
           console: Console) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..course.batch import find_submissions, grade_batch
    from ..grade.model import format_points
    from ..sigint import cleanup

    if not root.is_dir():
        raise BadInput(f"{root}: no such directory of submissions")
    total = len(find_submissions(root, out))
    if total == 0:
        raise BadInput(f"{root}: no submission directories in it")
    columns = (TextColumn("{task.description}", style="bold", markup=False), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.fields[last]}", markup=False))
    finished = 0
    with Progress(*columns, console=console, transient=False) as progress, \
            cleanup(progress.stop):     # a forced exit after Ctrl-C shows the cursor again
        task = progress.add_task(f"grading {options.lab.name}", total=total, last="")

        def done(name: str, report: GradeReport) -> None:
            nonlocal finished
            finished += 1
            line = f"{name}: {format_points(report.score)}/{format_points(report.max_score)}"
            progress.update(task, advance=1, last=line)
            if not console.is_terminal:  # a log file: one line per submission as it ends
                console.print(f"[{finished}/{total}] {line}", markup=False,
                              soft_wrap=True)

        result = grade_batch(options, root, out, workers=args.jobs, scheduler=args.scheduler,
                             regrade=args.regrade, on_done=done)
    from ..course.batch import SUMMARY_HTML
    from ..course.summary import summarize

    console.print(summarize(options.lab.name, result.reports))
    failed_builds = sum(1 for _, r in result.reports if not r.built)
    kept = total - result.graded
    console.print(f"graded {total} submissions ({failed_builds} did not build"
                  f"{f', {kept} kept from an earlier run' if kept else ''}); "
                  f"gradebook: {result.gradebook}; summary: {out / SUMMARY_HTML}",
                  markup=False, soft_wrap=True)
    if result.graded:
        console.print(f"{result.graded} graded in {result.wall_seconds:.1f} s, "
                      f"{result.cpu_seconds / result.graded:.1f} s of CPU each", markup=False,
                      soft_wrap=True)
    if options.keyword and all(_selects_nothing(r) for _, r in result.reports):
        print(f"privlab: -k {options.keyword!r} matches no test of {options.lab.name}",
              file=sys.stderr)
        return ExitStatus.BAD_INPUT
    if result.grader_errors:
        print(f"privlab: the grader failed on {len(result.grader_errors)} submissions (see "
              f"their reports): {', '.join(result.grader_errors)}", file=sys.stderr)
        return ExitStatus.FAILURE
    return 0
