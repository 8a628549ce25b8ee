"""Grading one submission: build it, run the lab's tests in a fresh pytest process
(with --jobs N > 1, over N pytest-xdist workers, harness/course/parallel.py), merge
their results into a GradeReport.

Nothing a submission does can crash the grader or lose the report: a compile error is
a failed `build` test carrying the compiler output; tests of a submission that did not
build still appear, each failed with "not run"; a worker that dies fails the test it
was running (xdist starts a new one for the rest), and a test process that dies is
recorded against the tests it had not finished; any other grader trouble becomes a
note in the report. Instruction budgets bound every test; a generous wall-clock
watchdog (killing the test processes' whole process group) guards against the
unforeseen.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

from ..build.cache import cache_root
from ..children import kill, supervised
from ..grade import PLUGIN  # loaded by name: other installed plugins stay out
from ..grade.labs import Lab
from ..grade.model import (
    BUILD_TEST,
    FAILED,
    PASSED,
    GradeReport,
    TestResult,
    apply_groups,
    shown,
)
from ..grade.seeds import DEFAULT_SEEDS, seeds_option
from ..pace import DEFAULT_ICOUNT_SHIFT
from .confinement import child_environment as confined_environment
from .confinement import limits_for_tests, python_command
from .lifeline import GRADER_PID
from .parallel import merge_results
from .provenance import commit_of, commit_time, now_utc
from .submission_build import BuildResult, build_submission, staging_slot

__all__ = ["GradeOptions", "default_jobs", "grade"]

PARALLEL = f"{__package__}.parallel"
LIFELINE = f"{__package__}.lifeline"   # a test process never outlives its grader
XDIST = "xdist.plugin"
RESULTS = "results.json"
NO_TESTS = 5   # pytest's status when nothing was selected (xdist's workers may not finish)
WATCHDOG_SECONDS = 1800   # per test process: far beyond any instruction budget
STDERR_TAIL = 3000


def default_jobs() -> int:
    return max(1, min(4, os.cpu_count() or 1))


@dataclass(frozen=True)
class GradeOptions:
    """What `privlab grade` was asked: the lab, the submission and how to grade it."""
    lab: Lab
    submission: Path
    hidden: Path | None = None
    jobs: int = 1
    arch: str = "rv64"
    keyword: str | None = None       # pytest -k: grade only matching tests
    keep_kernel: Path | None = None  # copy the graded kernel.elf here (for students to run)
    seed: int | None = None          # fixed random parameters (tokens stay random)
    verbosity: int = 0               # privlab grade -v/-vv: pytest's assertion verbosity


def _test_command(options: GradeOptions, slot: Path, build_arg: list[str],
                  seed: int) -> list[str]:
    paths = [str(p) for p in options.lab.test_paths(hidden=options.hidden)]
    ini = slot / "pytest.ini"
    ini.write_text("[pytest]\n")
    xdist = ["-p", PARALLEL, "-p", XDIST] if options.jobs > 1 else []
    cmd = [*python_command(sys.executable, "pytest"), *paths, "-q", "-p", LIFELINE, *xdist,
           "-p", PLUGIN,
           "-p", "no:cacheprovider", "-c", str(ini), "--rootdir", os.path.commonpath(paths),
           "--continue-on-collection-errors", "--no-header", "-rN",
           # Test files are modules by path, not by basename: a hidden test_mmap.py
           # beside the lab's own test_mmap.py is collected, not an import clash.
           "--import-mode=importlib",
           *build_arg, "--privlab-results", str(slot / RESULTS)]
    if options.jobs > 1:
        # loadgroup keeps each `requires` chain on one worker (parallel.py groups them)
        cmd += ["-n", str(options.jobs), "--dist", "loadgroup"]
    if options.hidden is not None:
        cmd += ["--privlab-hidden", str(options.hidden)]
    if options.keyword:
        cmd += ["-k", options.keyword]
    cmd += ["--privlab-seed", str(seed)]
    if options.verbosity:
        # Only the assertion messages get longer (the reports' text); the test
        # processes' own output stays quiet.
        cmd += ["-o", f"verbosity_assertions={min(options.verbosity, 2)}"]
    if options.lab.icount_shift != DEFAULT_ICOUNT_SHIFT:
        cmd += ["--privlab-icount-shift", str(options.lab.icount_shift)]
    # The lab's harts and seeds reach every test, hidden ones kept outside the lab too.
    if options.lab.smp != 1:
        cmd += ["--privlab-smp", str(options.lab.smp)]
    if options.lab.seeds != DEFAULT_SEEDS:
        cmd += ["--privlab-smp-seeds", seeds_option(options.lab.seeds)]
    return cmd


def _build_arg(built: BuildResult, slot: Path) -> list[str]:
    if built.images is None:
        error = slot / "build-error.txt"
        error.write_text(built.output)
        return ["--privlab-build-error", str(error)]
    manifest = slot / "images.json"
    built.images.save(manifest)
    return ["--privlab-images", str(manifest)]


# What follows the ERRORS section: another section, the plugin's Points line, or the
# -q summary ("1 passed, 1 error in 0.41s").
_SECTION_END = re.compile(r"=|Points |(\d+ \w+, )*\d+ \w+ in [\d.]+s")


def _collection_errors(output: str) -> str:
    """The ERRORS section of a pytest run's output (what went wrong collecting), else
    the output's tail."""
    lines = output.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith("=") and " ERRORS " in line), None)
    if start is None:
        return output[-STDERR_TAIL:]
    end = next((i for i in range(start + 1, len(lines)) if _SECTION_END.match(lines[i])),
               len(lines))
    return "\n".join(lines[start + 1:end])[-STDERR_TAIL:]


def _run_tests(options: GradeOptions, slot: Path, built: BuildResult,
               notes: list[str]) -> list[TestResult]:
    build_arg = _build_arg(built, slot)
    for stale in slot.glob("results*.json*"):
        stale.unlink()
    seed = options.seed if options.seed is not None else secrets.randbits(31)
    cmd = _test_command(options, slot, build_arg, seed)
    limits = limits_for_tests()     # before any process starts: a bad setting is one line
    with (slot / "tests.log").open("w+") as log:
        def start() -> subprocess.Popen[bytes]:
            return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=child_environment(),
                                    start_new_session=True, cwd=slot,
                                    preexec_fn=limits.preexec())

        # Interrupted (Ctrl-C, or the grader's own error), or done: no test process,
        # nor a worker left behind by a controller that died, outlives this.
        with supervised(start, group=True) as proc:
            try:
                status = proc.wait(timeout=WATCHDOG_SECONDS)
            except subprocess.TimeoutExpired:
                kill(proc, group=True)
                status = proc.wait()
                notes.append(f"the test processes ran past the {WATCHDOG_SECONDS} s watchdog")
        log.seek(0)
        output = log.read()
    return _collect(output, status, slot, notes)


def _collect(output: str, status: int, slot: Path, notes: list[str]) -> list[TestResult]:
    tests, complete = merge_results(slot / RESULTS)
    if "error" in output.lower() and ("ERROR collecting" in output or status in (2, 3, 4)):
        notes.append(f"test collection problem:\n{_collection_errors(output)}")
    if not complete and status != NO_TESTS:
        why = (f"not run: the grader's test process ended early (status {status}):\n"
               f"{output[-STDERR_TAIL:]}")
        tests = [t if t.ran else replace(t, output=why) for t in tests]
        if not tests:
            notes.append(why)
    return tests


def child_environment() -> dict[str, str]:
    """The environment of a test process: the grader's reduced one (confinement.py),
    with plugin autoloading off (only the plugins the grader names run). Without CI
    or BUILD_NUMBER, which make pytest print whole assertion diffs: a report reads the
    same on a laptop, in CI and on a Gradescope worker."""
    return confined_environment({"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                                 GRADER_PID: str(os.getpid())}, cache=cache_root())


def _build_entry(built: BuildResult) -> TestResult:
    left_out = ""
    if built.skipped:
        left_out = ("\n\nleft out of the build (only regular files and directories are "
                    "copied):\n" + "\n".join(f"  {line}" for line in built.skipped))
    if built.ok:
        return TestResult(BUILD_TEST, 0.0, 0.0, PASSED,
                          f"built in {built.seconds:.1f} s{left_out}",
                          title="the submission builds", ran=True, duration=built.seconds)
    return TestResult(BUILD_TEST, 0.0, 0.0, FAILED, built.output + left_out,
                      title="the submission builds", ran=True, duration=built.seconds)


def grade(options: GradeOptions) -> GradeReport:
    """Grade one submission; always returns a report."""
    start = time.perf_counter()
    report = GradeReport(options.lab.name, shown(str(options.submission)),
                         graded_at=now_utc())
    report.commit = commit_of(options.submission)
    report.committed_at = commit_time(options.submission, report.commit) if report.commit else ""
    try:
        with staging_slot() as slot:
            built = build_submission(options.submission, slot, arch=options.arch)
            report.built, report.build_output = built.ok, built.output
            if built.images is not None and options.keep_kernel is not None:
                options.keep_kernel.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(built.images.kernel_path, options.keep_kernel)
            tests = _run_tests(options, slot, built, report.notes)
            tests.sort(key=lambda t: (t.visibility != "visible", t.order))
            report.tests = [_build_entry(built), *apply_groups(tests)]
    except Exception as e:  # the grader must always produce its report
        report.notes.append(f"grader error: {e}\n{traceback.format_exc()[-STDERR_TAIL:]}")
        report.built = report.built and not report.tests
    report.execution_time = round(time.perf_counter() - start, 2)
    return report
