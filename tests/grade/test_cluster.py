"""Batch grading on a real Dask cluster on loopback: a `dask scheduler` and two `dask
worker` processes started here; one worker is killed while it grades, and every
submission still gets its report. A second run keeps what is already graded."""

from __future__ import annotations

import contextlib
import csv
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from privlab.course.batch import BatchResult, grade_batch
from privlab.course.grade_one import GradeOptions
from privlab.grade.labs import find_lab

from .test_cli import FAST, _submission

DASK = Path(sys.executable).with_name("dask")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([str(DASK), *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.fixture
def cluster() -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    procs = [_start("scheduler", "--host", "127.0.0.1", "--port", str(port),
                    "--no-dashboard")]
    try:
        time.sleep(1.0)
        procs += [_start("worker", address, "--nthreads", "1", "--no-dashboard",
                         "--host", "127.0.0.1") for _ in range(2)]
        yield address, procs[1:]
    finally:
        for proc in procs:
            _stop(proc)


def _grading(worker: subprocess.Popen[bytes]) -> bool:
    """The worker (its nanny's child) is running a grading's build or tests."""
    try:
        return any("privlab.grade" in " ".join(p.cmdline())
                   for p in psutil.Process(worker.pid).children(recursive=True))
    except psutil.Error:
        return False


def test_a_worker_killed_mid_grading_loses_no_submission_and_a_rerun_keeps_the_grades(
        tmp_path: Path, cluster: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    address, workers = cluster
    subs = tmp_path / "subs"
    for name in ("alice", "carol", "dave"):
        _submission(subs / name)
    _submission(subs / "bob", broken=True)
    options = GradeOptions(find_lab("taskinfo"), subs, keyword=FAST)
    out = tmp_path / "grades"
    outcome: list[BatchResult] = []
    run = threading.Thread(target=lambda: outcome.append(
        grade_batch(options, subs, out, scheduler=address)))
    run.start()
    deadline = time.monotonic() + 120
    while not _grading(workers[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _grading(workers[0]), "the first worker never started grading"
    _stop(workers[0])
    run.join(timeout=300)
    assert outcome, "the batch did not finish"
    result = outcome[0]
    assert result.graded == 4 and result.grader_errors == []
    rows = list(csv.DictReader(result.gradebook.open()))
    assert [(r["submission"], r["score"], r["built"]) for r in rows] == [
        ("alice", "4", "yes"), ("bob", "0", "no"), ("carol", "4", "yes"), ("dave", "4", "yes")]
    for name in ("alice", "bob", "carol", "dave"):
        assert (out / name / "results.json").is_file()

    # Resumable: nothing changed, nothing graded; carol's edit is graded again.
    again = grade_batch(options, subs, out, scheduler=address)
    assert again.graded == 0 and again.reports == result.reports
    taskinfo = subs / "carol" / "kernel" / "taskinfo.c"
    taskinfo.write_text(taskinfo.read_text() + "\nint oops(void) { return missing; }\n")
    third = grade_batch(options, subs, out, scheduler=address)
    assert third.graded == 1
    rows = list(csv.DictReader(third.gradebook.open()))
    assert [(r["submission"], r["score"]) for r in rows] == [
        ("alice", "4"), ("bob", "0"), ("carol", "0"), ("dave", "4")]
