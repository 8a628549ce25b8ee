"""Grading a class: every submission under a directory, one Dask task each, on a local
cluster of processes or an existing Dask cluster (harness/course/cluster.py); then a
gradebook CSV and a class summary page (harness/course/summary.py).

A task carries the submission's `kernel/` (and the hidden tests) packed, so a worker
needs only privlab installed, and returns the GradeReport, written here to
out/<submission>/ (results.json, junit.xml, report.txt, and report.json, which the
next run reads). A batch is resumable: a submission whose content hash and lab version
match its report.json is not graded again. The gradebook is made from every
report.json under `out`, so runs over several directories into one `out` merge.
"""

from __future__ import annotations

import json
import resource
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..grade.model import GradeReport, shown
from .grade_one import GradeOptions, grade
from .packing import (
    content_hash,
    lab_version,
    pack,
    report_from_json,
    report_to_json,
    unpack,
)
from .provenance import commit_of, commit_time
from .reports import write_gradebook, write_reports
from .summary import summarize

__all__ = ["REPORT_JSON", "SUMMARY_HTML", "BatchResult", "Task", "find_submissions", "grade_batch",
           "grade_task", "stored_reports"]

REPORT_JSON = "report.json"
SUMMARY_HTML = "summary.html"
LOCAL_PROCESSES = True   # the local cluster's workers are processes (tests use threads)


@dataclass(frozen=True)
class BatchResult:
    """What grading a batch of submissions gave: each one's report, the gradebook written,
    and what the run cost."""
    reports: list[tuple[str, GradeReport]]
    gradebook: Path
    graded: int = 0              # graded in this run (the others were already graded)
    cpu_seconds: float = 0.0     # CPU the gradings of this run took, on the workers
    wall_seconds: float = 0.0

    @property
    def grader_errors(self) -> list[str]:
        return [name for name, r in self.reports
                if any(n.startswith("grader error") for n in r.notes)]


@dataclass(frozen=True)
class Task:
    """One submission's grading, as it travels to a worker."""

    name: str
    lab: str
    kernel: bytes                # the submission's kernel/, packed
    hidden: bytes | None
    arch: str
    keyword: str | None
    seed: int | None
    verbosity: int


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


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def grade_task(task: Task) -> tuple[dict[str, Any], float]:
    """On a worker: unpack, grade, and return the report (as JSON) and the CPU seconds
    it took (this process and the test processes it waited for)."""
    from ..grade.labs import find_lab

    start = _cpu()
    with tempfile.TemporaryDirectory(prefix="privlab-task-") as tmp:
        submission = Path(tmp) / "submission" / (shown(task.name).replace("/", "_") or "_")
        unpack(task.kernel, submission / "kernel")
        if not any((submission / "kernel").iterdir()):
            (submission / "kernel").rmdir()   # it had none: a failed build test says so
        hidden = None
        if task.hidden is not None:
            hidden = Path(tmp) / "hidden"
            unpack(task.hidden, hidden)
        options = GradeOptions(find_lab(task.lab), submission, hidden, jobs=1, arch=task.arch,
                               keyword=task.keyword, seed=task.seed,
                               verbosity=task.verbosity)
        try:
            report = grade(options)
        except Exception as e:  # grade() reports its own trouble; this is the rest
            report = GradeReport(task.lab, task.name, built=False,
                                 notes=[f"grader error: {type(e).__name__}: {e}"])
    return report_to_json(report), _cpu() - start


def _key(options: GradeOptions, path: Path) -> str:
    return content_hash(path / "kernel", parts=(options.arch, options.keyword or "",
                                                str(options.seed)))


def _stored(out: Path, lab: str) -> tuple[GradeReport, str, str] | None:
    try:
        data = json.loads((out / REPORT_JSON).read_text())
    except (OSError, ValueError):
        return None
    if data.get("report", {}).get("lab") != lab:
        return None
    return report_from_json(data["report"]), str(data.get("content")), str(data.get("lab_version"))


def stored_reports(out: Path, lab: str) -> list[tuple[str, GradeReport]]:
    """Every report of `lab` under `out`, by submission name: this run's and earlier
    runs' (the gradebook merges them)."""
    found = []
    for directory in sorted(p for p in out.iterdir() if p.is_dir()) if out.is_dir() else []:
        stored = _stored(directory, lab)
        if stored is not None:
            found.append((shown(directory.name), stored[0]))
    return found


def _save(report: GradeReport, out: Path, content: str, version: str) -> GradeReport:
    try:
        write_reports(report, out)
        record = {"content": content, "lab_version": version,
                  "report": report_to_json(report)}
        temp = out / f".{REPORT_JSON}.tmp"
        temp.write_text(json.dumps(record, indent=1))
        temp.replace(out / REPORT_JSON)
    except Exception as why:  # the gradebook row is still written
        report.notes.append(f"its report could not be written: {why}")
    return report


def grade_batch(options: GradeOptions, root: Path, out: Path, *, workers: int | None = None,
                scheduler: str | None = None, regrade: bool = False,
                on_done: Callable[[str, GradeReport], None] | None = None) -> BatchResult:
    """Grade every submission under `root` (one Dask task each: on `scheduler`, else
    on a local cluster of `workers` processes); reports go to out/<submission>/, the
    gradebook to out/gradebook.csv. Submissions already graded with the same content
    and lab version are kept unless `regrade`."""
    from .cluster import run_tasks

    started = time.perf_counter()
    submissions = find_submissions(root, out)
    version = lab_version(options.lab, options.hidden)
    hidden = pack(options.hidden) if options.hidden is not None else None
    reports: dict[str, GradeReport] = {}
    todo: dict[str, tuple[Path, str]] = {}
    for path in submissions:
        name, key = shown(path.name), _key(options, path)
        stored = None if regrade else _stored(out / path.name, options.lab.name)
        if stored is not None and stored[1:] == (key, version):
            reports[name] = stored[0]
            if on_done is not None:
                on_done(name, stored[0])
        else:
            todo[name] = (path, key)

    def task(name: str) -> Task:
        path = todo[name][0]
        return Task(name, options.lab.name, pack(path / "kernel"), hidden, options.arch,
                    options.keyword, options.seed, options.verbosity)

    cpu = 0.0

    def finished(name: str, result: tuple[dict[str, Any], float] | BaseException) -> None:
        nonlocal cpu
        path, key = todo[name]
        if isinstance(result, BaseException):
            report = GradeReport(options.lab.name, shown(str(path)), built=False,
                                 notes=[f"grader error: {type(result).__name__}: {result}"])
        else:
            # The worker had the submission's kernel/ alone: its commit is read here.
            commit = commit_of(path)
            report = replace(report_from_json(result[0]), submission=shown(str(path)),
                             commit=commit,
                             committed_at=commit_time(path, commit) if commit else "")
            cpu += result[1]
        reports[name] = _save(report, out / path.name, key, version)
        if on_done is not None:
            on_done(name, reports[name])

    run_tasks(list(todo), task, finished, grade_task, scheduler=scheduler,
              workers=workers, processes=LOCAL_PROCESSES)
    merged = dict(stored_reports(out, options.lab.name))
    merged.update(reports)   # this run's, also where a report could not be stored
    ordered = sorted(merged.items())
    gradebook = out / "gradebook.csv"
    write_gradebook(ordered, gradebook)
    page = out / SUMMARY_HTML
    page.write_text(summarize(options.lab.name, ordered).to_html(), errors="backslashreplace")
    return BatchResult(ordered, gradebook, len(todo), round(cpu, 2),
                       round(time.perf_counter() - started, 2))
