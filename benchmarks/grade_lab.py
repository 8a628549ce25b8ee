"""How long grading a lab of 20 tests takes: the budget is 10 s on a 2-core machine.

Builds a 20-test lab from the public tests of labs 1, 2, 3 and 6 plus one hidden test,
warms the build cache once (as a grading server has), then grades, end to end
(staging build, test processes, reports): the reference kernel, and a student-like
submission that differs from it in one file (so one file recompiles).

    python benchmarks/grade_lab.py        # exit status 1 if over budget
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from privlab.course.grade_one import GradeOptions, default_jobs, grade
from privlab.grade.labs import LABS_DIR, Lab
from privlab.paths import KERNEL_DIR, REPO_ROOT

BUDGET_SECONDS = 10.0
SOURCES = ["taskinfo/test_taskinfo.py", "mmap/test_mmap.py", "stride/test_stride.py",
           "trap/test_trap.py", "taskinfo/hidden/test_taskinfo_hidden.py"]


def make_lab(root: Path) -> Lab:
    directory = root / "bench20"
    directory.mkdir()
    for rel in SOURCES:
        shutil.copyfile(LABS_DIR / rel, directory / Path(rel).name)
    (directory / "lab.toml").write_text('title = "20 tests"\nbase = false\n')
    return Lab("bench20", "20 tests", 0, directory, (), False)


def student_copy(root: Path) -> Path:
    sub = root / "student"
    shutil.copytree(KERNEL_DIR, sub / "kernel")
    path = sub / "kernel" / "taskinfo.c"
    path.write_text(path.read_text() + f"\n// edited {time.time()}\n")
    return sub


def timed(lab: Lab, submission: Path) -> tuple[float, int, float, float]:
    start = time.perf_counter()
    report = grade(GradeOptions(lab, submission, jobs=default_jobs()))
    took = time.perf_counter() - start
    graded = len(report.tests) - 1  # without the build entry
    return took, graded, report.score, report.max_score


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        lab = make_lab(root)
        timed(lab, REPO_ROOT)  # warm the build cache
        results = {"reference kernel": timed(lab, REPO_ROOT),
                   "submission, one file changed": timed(lab, student_copy(root))}
    worst = 0.0
    for what, (took, graded, score, total) in results.items():
        print(f"grade a lab of {graded} tests ({what}): {took:.2f} s, "
              f"{score:g}/{total:g} points, {default_jobs()} test processes")
        worst = max(worst, took)
    print(f"budget {BUDGET_SECONDS:.0f} s: {'ok' if worst <= BUDGET_SECONDS else 'OVER'}")
    return 0 if worst <= BUDGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
