"""Batch plumbing without a kernel: staging slots wait rather than fail silently, what
travels to a worker, and what makes a submission count as already graded."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import pytest
from compiles import count_compiles

from privlab.course import submission_build
from privlab.course.packing import content_hash, pack, unpack
from privlab.errors import PrivlabError


def test_a_grading_waits_for_a_busy_slot_and_fails_loudly_when_none_frees(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More gradings than slots made rows `0/0` ("all 64 grading slots ... are
    busy") in a batch that exited 0."""
    monkeypatch.setenv("PRIVLAB_CACHE", str(tmp_path))
    monkeypatch.setattr(submission_build, "MAX_SLOTS", 2)
    stage = tmp_path / "grade-stage"
    stage.mkdir()
    held = []
    for n in range(2):
        fd = os.open(stage / f"{n}.lock", os.O_CREAT | os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)
        held.append(fd)
    with pytest.raises(PrivlabError, match=r"all 2 grading slots .* stayed busy for 0\.3 s"), \
            submission_build.staging_slot(wait=0.3):
        pass
    got: list[Path] = []

    def grading() -> None:
        with submission_build.staging_slot(wait=30) as slot:
            got.append(slot)

    waiter = threading.Thread(target=grading)
    waiter.start()
    time.sleep(0.5)
    assert got == []            # still waiting
    os.close(held.pop())        # slot 1 frees
    waiter.join(timeout=10)
    assert got == [stage / "1"]
    os.close(held.pop())


def test_a_submission_travels_whole_and_its_hash_follows_content_not_place(
        tmp_path: Path) -> None:
    one = tmp_path / "one" / "kernel"
    (one / "sub").mkdir(parents=True)
    (one / "main.c").write_text("int main;\n")
    (one / "sub" / "a.h").write_text("#pragma once\n")
    (one / ".git").mkdir()
    (one / ".git" / "HEAD").write_text("ref\n")
    os.symlink("main.c", one / "link.c")
    os.mkfifo(one / "pipe")
    copy = tmp_path / "copy"
    unpack(pack(one), copy)
    assert sorted(str(p.relative_to(copy)) for p in copy.rglob("*")) == [
        "link.c", "main.c", "sub", "sub/a.h"]    # no .git, no pipe
    assert os.readlink(copy / "link.c") == "main.c"
    os.unlink(one / "pipe")
    assert content_hash(copy) == content_hash(one)   # .git never counts
    (copy / "main.c").write_text("int main = 1;\n")
    assert content_hash(copy) != content_hash(one)


def test_a_batch_with_a_grader_error_exits_1_and_names_the_submission(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A grader error used to be a quiet 0/0 row in a batch that exited 0."""
    from privlab.cli.main import main
    from privlab.course import batch
    from privlab.course.grade_one import GradeOptions
    from privlab.grade.model import GradeReport

    def fake_grade(options: GradeOptions) -> GradeReport:
        if options.submission.name == "bob":
            raise PrivlabError("all 64 grading slots are busy")
        return GradeReport("taskinfo", str(options.submission))

    monkeypatch.setattr(batch, "grade", fake_grade)
    monkeypatch.setattr(batch, "LOCAL_PROCESSES", False)
    subs = tmp_path / "subs"
    for name in ("alice", "bob"):
        (subs / name).mkdir(parents=True)
    assert main(["grade", "taskinfo", "--submissions", str(subs), "--jobs", "1",
                 "--out", str(tmp_path / "g")]) == 1
    assert "the grader failed on 1 submissions (see their reports): bob" in (
        capsys.readouterr().err)


def test_a_kernel_built_at_a_new_place_reuses_every_cached_object(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each new staging slot (each Dask worker takes its own) compiled everything once,
    ~25 s: the object cache keyed on the slot's paths. Keyed on the paths as the
    objects record them (the prefix map), a new place compiles nothing."""
    import shutil

    from privlab.build.images import build_images
    from privlab.paths import KERNEL_DIR, USERLAND_DIR

    def build(where: Path) -> bytes:
        shutil.copytree(KERNEL_DIR, where / "kernel")
        images = build_images("rv64", kernel_dir=where / "kernel", userland_dir=USERLAND_DIR,
                              out_dir=where / "out", listings=False)
        return images.kernel.read_bytes()

    first = build(tmp_path / "slot-a")
    # What this build compiles, not what the cache holds: the suite's other workers
    # share the cache and compile into it meanwhile (a file in flight in a temporary
    # directory one moment, in place the next).
    compiled = count_compiles(monkeypatch)
    assert build(tmp_path / "slot-b") == first
    assert compiled == []
