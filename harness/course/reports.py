"""Report formats: Gradescope's results.json, JUnit XML, a plain-text report, and the
gradebook CSV of a batch. All read a GradeReport; none needs the machine."""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from ..grade.model import GradeReport, TestResult, format_points, shown
from ..grade.seeds import format_seeds

__all__ = ["display_name", "gradescope_json", "junit_xml", "text_report", "write_gradebook",
           "write_reports"]


def display_name(test: TestResult) -> str:
    return f"{test.group}: {test.name}" if test.group else test.name


def _notes(report: GradeReport) -> str:
    return "\n\n".join(report.notes)


SHOWN_NOW = "visible"


def gradescope_json(report: GradeReport, *, visible_totals: bool = False) -> dict[str, Any]:
    """Gradescope's autograder results format. With `visible_totals`, nothing students
    see before grades are released counts a test they may not see yet (visibility
    other than `visible`): the `output` line totals the visible tests alone and says
    how many points are still to come, and there is no top-level `score` (Gradescope
    then adds up the tests itself, each shown as its visibility allows)."""
    later = [t for t in report.tests if t.visibility != SHOWN_NOW]
    if visible_totals and later:
        now = [t for t in report.tests if t.visibility == SHOWN_NOW]
        output = (f"Points {format_points(sum(t.score for t in now))}/"
                  f"{format_points(sum(t.max_score for t in now))} on the tests shown now; "
                  f"{format_points(sum(t.max_score for t in later))} more points come from "
                  "tests shown when grades are released")
    else:
        output = report.points_line()
    if not report.built:
        output += "\nThe submission did not build: see the 'build' test for the compiler output."
    if report.notes:
        output += "\n" + _notes(report)
    # Only keys Gradescope's autograder specification lists: it has no top-level
    # max_score (the total is the tests'), and execution_time is whole seconds.
    results: dict[str, Any] = {} if visible_totals and later else {"score": report.score}
    return {
        **results,
        "execution_time": round(report.execution_time),
        "output": output,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [{"name": display_name(t), "score": t.score, "max_score": t.max_score,
                   "status": t.status, "output": t.output, "visibility": t.visibility}
                  for t in report.tests],
    }


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_text(text: str) -> str:
    """`text` with the characters XML 1.0 cannot hold written as `\\xNN` (`\\uNNNN`)."""
    return _NOT_XML.sub(lambda m: (f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                                   else f"\\u{ord(m.group()):04x}"), text)


def junit_xml(report: GradeReport) -> str:
    """JUnit XML, well-formed whatever the guest printed."""
    failures = sum(1 for t in report.tests if not t.passed)
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", name=f"privlab.{report.lab}",
                          tests=str(len(report.tests)), failures=str(failures), errors="0",
                          time=f"{report.execution_time:.2f}")
    props = ET.SubElement(suite, "properties")
    for name, value in (("score", report.score), ("max_score", report.max_score),
                        ("submission", report.submission)):
        ET.SubElement(props, "property", name=name, value=str(value))
    for t in report.tests:
        case = ET.SubElement(suite, "testcase", classname=f"{report.lab}.{t.group or 'tests'}",
                             name=t.name, time=f"{t.duration:.3f}")
        case_props = ET.SubElement(case, "properties")
        ET.SubElement(case_props, "property", name="score", value=format_points(t.score))
        ET.SubElement(case_props, "property", name="max_score",
                      value=format_points(t.max_score))
        if t.seeds:      # a test marked smp (harness/grade/seeds.py)
            for name, value in (("harts", str(t.harts)),
                                ("seeds", ",".join(map(str, t.seeds))),
                                ("failed_seeds", ",".join(map(str, t.failed_seeds)))):
                ET.SubElement(case_props, "property", name=name, value=value)
        if not t.passed:
            first = t.output.splitlines()[0] if t.output else "failed"
            failure = ET.SubElement(case, "failure", message=first)
            failure.text = t.output
    if report.notes:
        ET.SubElement(suite, "system-err").text = _notes(report)
    for element in suites.iter():
        element.attrib = {k: _xml_text(v) for k, v in element.attrib.items()}
        if element.text:
            element.text = _xml_text(element.text)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def text_report(report: GradeReport) -> str:
    lines = [f"privlab grade {report.lab}: {report.submission}", ""]
    for t in report.tests:
        mark = "PASS" if t.passed else "FAIL"
        under = f" ({t.harts} harts, seeds {format_seeds(t.seeds)})" if t.seeds else ""
        lines.append(f"{mark} {display_name(t)} "
                     f"[{format_points(t.score)}/{format_points(t.max_score)}]{under}")
        if not t.passed and t.output:
            lines += [f"    {line}" for line in t.output.splitlines()]
    if report.notes:
        lines += ["", "grader notes:", _notes(report)]
    lines += ["", report.points_line()]
    return "\n".join(lines) + "\n"


def _clean(report: GradeReport) -> GradeReport:
    """`report` with every string valid UTF-8 (see `shown`): paths and compiler
    messages may name files whose names are not."""
    tests = [replace(t, name=shown(t.name), output=shown(t.output), title=shown(t.title),
                     group=shown(t.group), nodeid=shown(t.nodeid)) for t in report.tests]
    return replace(report, submission=shown(report.submission), tests=tests,
                   build_output=shown(report.build_output),
                   notes=[shown(n) for n in report.notes])


KERNEL_NAME = "kernel.elf"


def write_reports(report: GradeReport, out: Path, *, kernel: Path | None = None,
                  replace_kernel: bool = False, visible_totals: bool = False) -> list[Path]:
    """results.json (Gradescope), junit.xml and report.txt in `out`; with
    `replace_kernel`, `kernel` (a file, moved) becomes out/kernel.elf, or with None
    no kernel.elf stays. All or nothing: every file is written beside its place first,
    then all are renamed into place together (harness/sigint.py `commit`), so an
    interrupted grade leaves the previous complete set or this one, never a mix."""
    from ..sigint import commit

    report = _clean(report)
    out.mkdir(parents=True, exist_ok=True)
    results = gradescope_json(report, visible_totals=visible_totals)
    files = {out / "results.json": json.dumps(results, indent=2) + "\n",
             out / "junit.xml": junit_xml(report),
             out / "report.txt": text_report(report)}
    temps = {path: path.with_name(f".{path.name}.{os.getpid()}.tmp") for path in files}
    try:
        for path, text in files.items():
            temps[path].write_text(text, errors="backslashreplace")
        with commit():
            for path, temp in temps.items():
                temp.replace(path)
            if replace_kernel:
                if kernel is not None:
                    kernel.replace(out / KERNEL_NAME)
                else:
                    (out / KERNEL_NAME).unlink(missing_ok=True)
    finally:
        for temp in temps.values():
            temp.unlink(missing_ok=True)
    return list(files)


def write_gradebook(reports: Sequence[tuple[str, GradeReport]], path: Path) -> None:
    """One row per submission: score, max, built, notes, the submission's git commit
    (and its time) when it is a repository, when it was graded, then each test's score."""
    reports = [(shown(name), _clean(report)) for name, report in reports]
    names: list[str] = []
    for _, report in reports:
        for t in report.tests:
            if t.max_score and display_name(t) not in names:
                names.append(display_name(t))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", errors="backslashreplace") as f:
        writer = csv.writer(f)
        writer.writerow(["submission", "score", "max_score", "built", "notes", "commit",
                         "committed_at", "graded_at", *names])
        for name, report in reports:
            scores = {display_name(t): format_points(t.score) for t in report.tests}
            writer.writerow([name, format_points(report.score), format_points(report.max_score),
                             "yes" if report.built else "no", len(report.notes),
                             report.commit, report.committed_at, report.graded_at,
                             *(scores.get(n, "") for n in names)])
