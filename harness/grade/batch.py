"""Grading a class: every submission under a directory, in parallel, each with its own
staging slot and report directory, then a gradebook CSV."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from pathlib import Path

from harness.grade.model import GradeReport, shown
from harness.grade.reports import write_gradebook, write_reports
from harness.grade.runner import GradeOptions, grade

__all__ = ["BatchResult", "find_submissions", "grade_batch"]


@dataclass(frozen=True)
class BatchResult:
    reports: list[tuple[str, GradeReport]]
    gradebook: Path


def find_submissions(root: Path, out: Path | None = None) -> list[Path]:
    """Each directory under `root` is a submission (hidden ones are skipped, and so is
    the one holding the reports, `out`: grading from inside the submissions directory
    with the default `--out privlab-grade/LAB` must not grade last run's reports)."""
    reports = out.resolve() if out is not None else None

    def holds_reports(path: Path) -> bool:
        where = path.resolve()
        return reports is not None and (where == reports or where in reports.parents)

    return sorted(p for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith(".") and not holds_reports(p))


def grade_batch(options: GradeOptions, root: Path, out: Path, *, workers: int | None = None,
                on_done: Callable[[str, GradeReport], None] | None = None) -> BatchResult:
    """Grade every submission under `root` with `workers` in parallel (one test
    process each); reports go to out/<submission>/, the gradebook to out/gradebook.csv."""
    submissions = find_submissions(root, out)
    workers = workers or max(1, os.cpu_count() or 1)
    reports: dict[str, GradeReport] = {}

    def one(path: Path) -> tuple[str, GradeReport]:
        try:
            report = grade(replace(options, submission=path, jobs=1))
            write_reports(report, out / path.name)
        except Exception as e:  # one submission's trouble never stops the class
            report = GradeReport(options.lab.name, shown(str(path)), built=False,
                                 notes=[f"grader error: {type(e).__name__}: {e}"])
            try:
                write_reports(report, out / path.name)
            except Exception as why:  # the gradebook row is still written
                report.notes.append(f"its report could not be written: {why}")
        return shown(path.name), report

    with ThreadPoolExecutor(workers) as pool:
        futures = [pool.submit(one, p) for p in submissions]
        for future in as_completed(futures):
            name, report = future.result()
            reports[name] = report
            if on_done is not None:
                on_done(name, report)
    ordered = [(shown(p.name), reports[shown(p.name)]) for p in submissions]
    gradebook = out / "gradebook.csv"
    write_gradebook(ordered, gradebook)
    return BatchResult(ordered, gradebook)
