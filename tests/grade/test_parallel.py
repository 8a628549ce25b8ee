"""pytest-xdist under the grader (harness/course/parallel.py): `requires` chains run on
one worker in order, a worker that dies fails its test and the rest still run, and the
workers' results merge into one record per test (no kernel needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from privlab.course.parallel import merge_results, requires_groups

TESTS = '''
import os
import signal
import time
from pathlib import Path

import pytest

LOG = Path(__file__).with_name("order.log")

def note(name):
    with LOG.open("a") as f:
        f.write(f"{os.environ['PYTEST_XDIST_WORKER']} {name}\\n")

@pytest.mark.points(1)
def test_first():
    time.sleep(0.3)  # the second worker takes other tests meanwhile
    note("test_first")

@pytest.mark.points(1)
@pytest.mark.requires("test_first")
def test_second():
    note("test_second")

@pytest.mark.points(1)
@pytest.mark.requires("test_second")
def test_third():
    note("test_third")

@pytest.mark.points(2)
def test_killed():
    os.kill(os.getpid(), signal.SIGKILL)

@pytest.mark.points(2)
def test_exits():
    os._exit(3)

@pytest.mark.points(1)
@pytest.mark.parametrize("n", range(4))
def test_other(n):
    time.sleep(0.05)
'''


def _run(pytester: pytest.Pytester, tmp: Path, monkeypatch: pytest.MonkeyPatch
         ) -> tuple[dict[str, dict[str, object]], bool]:
    pytester.makepyfile(test_lab=TESTS)
    results = tmp / "slot" / "results.json"
    results.parent.mkdir()
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # as privlab grade runs it
    pytester.runpytest_subprocess(
        "-q", "-p", "privlab.course.parallel", "-p", "xdist.plugin", "-p", "privlab.grade.plugin",
        "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
        "--privlab-results", str(results), timeout=120)
    tests, complete = merge_results(results)
    return {t.name: t.to_json() for t in tests}, complete


def test_a_dead_worker_fails_its_test_and_a_requires_chain_runs_on_one_worker_in_order(
        pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tests, complete = _run(pytester, tmp_path, monkeypatch)
    assert complete
    for name in ("test_killed", "test_exits"):
        assert tests[name]["status"] == "failed" and tests[name]["score"] == 0
        assert "crashed while running" in str(tests[name]["output"])
    assert [tests[n]["status"] for n in ("test_first", "test_second", "test_third")] == [
        "passed"] * 3
    assert sorted(n for n in tests if n.startswith("test_other")) == [
        f"test_other[{n}]" for n in range(4)]
    assert all(tests[f"test_other[{n}]"]["status"] == "passed" for n in range(4))
    log = (pytester.path / "order.log").read_text().split()
    workers, names = log[0::2], log[1::2]
    assert names == ["test_first", "test_second", "test_third"]
    assert len(set(workers)) == 1
    # the two deaths started two new workers: four result files
    assert len(list((tmp_path / "slot").glob("results.gw*.json"))) == 4


def test_requires_groups_tie_chains_and_keep_collection_order() -> None:
    needs = {"b": ["a"], "d": ["c"], "e": ["b"]}
    groups = requires_groups(list("abcdef"), str, lambda i: needs.get(i, []))
    assert groups == [["a", "b", "e"], ["c", "d"], ["f"]]


def test_merge_prefers_the_worker_that_ran_a_test(tmp_path: Path) -> None:
    base = {"max_score": 1.0, "score": 0.0, "status": "failed", "output": "not run",
            "nodeid": "t.py::test_a", "name": "test_a", "ran": False}
    ran = {**base, "score": 1.0, "status": "passed", "output": "", "ran": True}
    (tmp_path / "results.gw0.json").write_text(json.dumps({"complete": True, "tests": [ran]}))
    (tmp_path / "results.gw1.json").write_text(json.dumps({"complete": True, "tests": [base]}))
    tests, complete = merge_results(tmp_path / "results.json")
    assert complete and [(t.name, t.score, t.ran) for t in tests] == [("test_a", 1.0, True)]


STAFF = '''
import os

import pytest

@pytest.mark.points(1)
def test_staff_dies():
    os._exit(9)

@pytest.mark.points(1)
@pytest.mark.requires("test_staff_dies")
def test_staff_after():
    pass

@pytest.mark.points(2)
def test_staff_fine():
    pass
'''


def test_privlab_grade_fails_a_test_that_kills_its_worker_and_grades_the_rest(
        tmp_path: Path) -> None:
    from privlab.course.grade_one import GradeOptions, grade
    from privlab.grade.labs import find_lab
    from privlab.paths import REPO_ROOT

    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "test_staff.py").write_text(STAFF)
    report = grade(GradeOptions(find_lab("taskinfo"), REPO_ROOT, hidden, jobs=2,
                                keyword="staff"))
    tests = report.by_name()
    assert report.notes == []
    assert tests["test_staff_dies"].status == "failed"
    assert "the test process running it died (worker 'gw" in tests["test_staff_dies"].output
    assert "requires test_staff_dies" in tests["test_staff_after"].output
    assert tests["test_staff_fine"].passed
    assert report.points_line() == "Points 2/4"


GRADER = '''
import os, subprocess, sys
env = dict(os.environ, PRIVLAB_GRADER_PID=str(os.getpid()), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "privlab.course.lifeline",
                         "-p", "no:cacheprovider", sys.argv[1]], env=env,
                        start_new_session=True, stdout=subprocess.DEVNULL)
print(proc.pid, flush=True)
proc.wait()
'''


def test_a_test_process_dies_with_the_grader_that_started_it(tmp_path: Path) -> None:
    """A Dask worker killed mid-grading left its test process running, adopted by init,
    writing into a staging slot another grading could hold."""
    import signal
    import subprocess
    import sys
    import time

    import psutil

    test = tmp_path / "test_slow.py"
    test.write_text("import time\n\ndef test_slow():\n    time.sleep(60)\n")
    grader = subprocess.Popen([sys.executable, "-c", GRADER, str(test)],
                              stdout=subprocess.PIPE, text=True)
    assert grader.stdout is not None
    child = psutil.Process(int(grader.stdout.readline()))
    time.sleep(1.5)   # it is running its test
    assert child.is_running() and child.status() != psutil.STATUS_ZOMBIE
    grader.send_signal(signal.SIGKILL)
    grader.wait()
    child.wait(timeout=10)   # raises psutil.TimeoutExpired if it lived on
