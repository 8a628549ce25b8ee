"""The deployment recipes in deploy/, run as Gradescope and GitHub Classroom run them,
as far as a machine without those services can: each installs privlab from a clone of
this repository into a fresh venv (never into the system Python), Gradescope's in its
directory layout under a temporary root, Classroom's set-up and grading commands twice
in one job."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from privlab.course.handout import make_handout
from privlab.grade.labs import find_lab
from privlab.paths import REPO_ROOT

DEPLOY = REPO_ROOT / "deploy"
pytestmark = pytest.mark.skipif(not (REPO_ROOT / ".git").exists(),
                                reason="the recipes install privlab from a git clone of it")


def _env(home: Path, **extra: str) -> dict[str, str]:
    """A clean environment: no venv of ours, no build cache of ours."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PRIVLAB_CACHE", "PYTHONPATH", "PYTHONHOME")}
    env.update(PRIVLAB_REPO=f"file://{REPO_ROOT}", PRIVLAB_HOME=str(home),
               PRIVLAB_PYTHON=sys.executable, **extra)
    return env


def _sh(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=1200)


def test_gradescope_setup_and_run_autograder_in_a_temporary_root(tmp_path: Path) -> None:
    """setup.sh from the unpacked zip, then run_autograder on a student's handout: a
    results.json with the base points, the hidden test's result shown after publishing."""
    lab = find_lab("taskinfo")
    root, home = tmp_path / "autograder", tmp_path / "opt-privlab"
    source = root / "source"
    source.mkdir(parents=True)
    for f in [*(DEPLOY / "gradescope").iterdir(), DEPLOY / "install-privlab.sh"]:
        shutil.copy2(f, source / f.name)
    shutil.copytree(lab.hidden_dir, source / "hidden" / lab.name)
    make_handout([lab], root / "submission")
    env = _env(home, AUTOGRADER_ROOT=str(root), PRIVLAB_LAB=lab.name)

    start = time.monotonic()
    setup = _sh("sh ./setup.sh", source, env)
    cold = time.monotonic() - start
    assert setup.returncode == 0, setup.stdout + setup.stderr
    print(f"Gradescope setup.sh (clone, venv, install, first grading): {cold:.1f} s")
    assert (home / "venv" / "bin" / "privlab").is_file()
    assert (home / "cache").is_dir()                      # the warmed build cache

    shutil.copy2(source / "run_autograder", root / "run_autograder")
    run = _sh(str(root / "run_autograder"), root, env)
    assert run.returncode == 0, run.stdout + run.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    tests = {t["name"]: t for t in results["tests"]}
    base = [t for name, t in tests.items() if name.startswith("test_base_")]
    assert len(base) >= 3 and all(t["score"] == t["max_score"] for t in base)
    hidden = tests["test_counts_match_the_trace_for_larger_counts"]
    assert hidden["visibility"] == "after_published" and hidden["score"] == 0
    # The recipe keeps hidden tests' points out of what students see before release:
    # no top-level score, and the output totals the tests shown now.
    assert "score" not in results
    shown = [t for t in results["tests"] if t.get("visibility", "visible") == "visible"]
    later = [t for t in results["tests"] if t.get("visibility", "visible") != "visible"]
    assert results["output"].splitlines()[0] == (
        f"Points {sum(t['score'] for t in shown):g}/{sum(t['max_score'] for t in shown):g} "
        f"on the tests shown now; {sum(t['max_score'] for t in later):g} more points come "
        "from tests shown when grades are released")


def _workflow_step(name: str) -> dict[str, str]:
    """The `with:` settings of the grader step `name` in the Classroom workflow."""
    text = (DEPLOY / "classroom" / "classroom.yml").read_text()
    step = re.search(rf"^      - name: {name}\n(.*?)(?=^      - |\Z)", text, re.S | re.M)
    assert step is not None, f"no step {name!r} in classroom.yml"
    return dict(re.findall(r"^          ([\w-]+): (.*)$", step[1], re.M))


def test_classroom_setup_and_grading_commands_run_twice_in_one_job(tmp_path: Path) -> None:
    """The workflow's set-up command, run before each test as Classroom does, installs
    once and then only checks; the grading command passes a full-marks repository
    both times (exit 0, `Points X/X`)."""
    step = _workflow_step("mmap")
    setup, command = step["setup-command"], step["command"].replace("mmap", "taskinfo")
    student = tmp_path / "student"
    shutil.copytree(REPO_ROOT / "kernel", student / "kernel")   # the reference: full marks
    (student / ".github").mkdir()
    shutil.copy2(DEPLOY / "install-privlab.sh", student / ".github" / "install-privlab.sh")
    home = tmp_path / "privlab-home"
    env = _env(home, PRIVLAB_CACHE=str(home / "cache"))

    first = _sh(setup, student, env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "installed in" in first.stdout and "already" not in first.stdout
    commit = (home / "venv" / ".privlab-installed").read_text()
    second = _sh(setup, student, env)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "already installed" in second.stdout
    assert (home / "venv" / ".privlab-installed").read_text() == commit
    for _ in range(2):
        graded = _sh(command, student, env)
        assert graded.returncode == 0, graded.stdout + graded.stderr
        assert re.fullmatch(r"Points (\d+)/\1", graded.stdout.splitlines()[-1])
