"""Cheats on the staging area and the grader's own processes,
each a submission that scored full marks before its fix: links to the reference and
links that leak, stale build output in the slot, a `pytest.py` in the submission, and
a build that grows without bound."""

from __future__ import annotations

import io
import os
import tarfile
import time
from pathlib import Path

import pytest

from privlab.course.confinement import child_environment
from privlab.course.packing import pack, unpack
from privlab.course.submission_build import (
    build_submission,
    links_outside,
    staging_slot,
)
from privlab.paths import REPO_ROOT

from .conftest import grade_lab, variant
from .test_cheats import HIDDEN, REFERENCE, _handout


def _link_reference(root: Path) -> Path:
    sub = _handout(root)
    taskinfo = sub / "kernel" / "taskinfo.c"
    taskinfo.unlink()
    taskinfo.symlink_to(REFERENCE)
    return sub


def test_a_symbolic_link_to_the_reference_scores_zero_with_one_line(tmp_path: Path) -> None:
    report = grade_lab("taskinfo", _link_reference(tmp_path), hidden=True)
    assert not report.built and report.score == 0, [(t.name, t.score) for t in report.tests]
    assert report.build_output == (
        f"refused: kernel/taskinfo.c: a symbolic link to {REFERENCE}, outside the "
        "submission; the grader stages only the files and directories inside the "
        "submission")
    assert not any(n.startswith("grader error") for n in report.notes), report.notes


@pytest.mark.parametrize("target", [str(HIDDEN), "/proc/self/environ",
                                    str(REPO_ROOT / ".git" / "config")])
def test_links_that_would_leak_are_refused_before_anything_is_copied(
        tmp_path: Path, target: str) -> None:
    sub = _handout(tmp_path / "sub")
    (sub / "kernel" / "include" / "leak.h").symlink_to(target)
    with staging_slot() as slot:
        built = build_submission(sub, slot)
        assert not (slot / "kernel" / "include" / "leak.h").exists()
    assert not built.ok
    assert built.output.startswith(
        f"refused: kernel/include/leak.h: a symbolic link to {target}, outside the "
        "submission;"), built.output
    assert len(built.output.splitlines()) == 1


def test_a_hard_link_to_a_file_outside_is_refused_and_one_inside_is_not(
        tmp_path: Path) -> None:
    sub = _handout(tmp_path / "sub")
    outside = tmp_path / "reference.c"
    outside.write_text("int secret;\n")
    os.link(outside, sub / "kernel" / "stolen.c")
    assert links_outside(sub / "kernel") == [
        "kernel/stolen.c: a hard link to a file outside the submission"]
    os.unlink(outside)                        # now both links are inside
    os.link(sub / "kernel" / "stolen.c", sub / "kernel" / "again.c")
    assert links_outside(sub / "kernel") == []


def test_a_link_to_a_file_inside_the_submission_is_staged_as_that_file(
        tmp_path: Path) -> None:
    sub = _handout(tmp_path / "sub")
    (sub / "kernel" / "alias.h").symlink_to("types.h")
    assert links_outside(sub / "kernel") == []
    with staging_slot() as slot:
        built = build_submission(sub, slot)
        staged = slot / "kernel" / "alias.h"
        assert built.ok and not staged.is_symlink()
        assert staged.read_bytes() == (sub / "kernel" / "types.h").read_bytes()


def test_a_batch_archive_keeps_an_absolute_link_as_a_link_for_staging_to_refuse(
        tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "taskinfo.c").symlink_to(REFERENCE)
    (src / "main.c").write_text("int main;\n")
    unpack(pack(src), tmp_path / "out")
    assert os.readlink(tmp_path / "out" / "taskinfo.c") == str(REFERENCE)
    assert links_outside(tmp_path / "out") == [
        f"kernel/taskinfo.c: a symbolic link to {REFERENCE}, outside the submission"]


def test_an_archive_cannot_write_through_a_link_or_outside_the_target(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        link = tarfile.TarInfo("escape")
        link.type, link.linkname = tarfile.SYMTYPE, str(tmp_path / "victim")
        tar.addfile(link)
        data = b"overwritten"
        for name in ("escape/file", "../outside"):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (tmp_path / "victim").mkdir()
    unpack(buffer.getvalue(), tmp_path / "out")
    assert list((tmp_path / "victim").iterdir()) == []
    assert not (tmp_path / "outside").exists()


STALE = """
// The cheat: the kernel the slot's previous grading built, linked in and booted.
__asm__(".section .rodata\\n.globl stale\\nstale:\\n.incbin \\"{path}\\"\\n.text\\n");
"""


def test_a_build_cannot_read_what_the_previous_grading_left_in_its_slot(
        tmp_path: Path) -> None:
    with staging_slot() as slot:
        first = build_submission(variant(tmp_path / "reference", {}), slot)
        assert first.ok and (slot / "out" / "kernel.elf").is_file()
        sub = _handout(tmp_path / "sub")
        (sub / "kernel" / "stale.c").write_text(
            STALE.format(path=slot / "out" / "kernel.elf"))
        second = build_submission(sub, slot)
    assert not second.ok
    assert "kernel.elf" in second.output, second.output


def test_a_pytest_py_in_the_submission_never_runs_in_the_grader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The grader started from inside the submission (`privlab grade LAB` there, the
    Classroom recipe's `--submission .`): its test processes import the real pytest."""
    sub = _handout(tmp_path / "sub")
    marker = tmp_path / "ran"
    payload = f"open({str(marker)!r}, 'w').write('pwned')\nraise SystemExit(0)\n"
    (sub / "pytest.py").write_text(payload)
    (sub / "_pytest").mkdir()
    (sub / "_pytest" / "__init__.py").write_text(payload)
    monkeypatch.chdir(sub)
    report = grade_lab("taskinfo", Path("."), keyword="counts_exactly")
    assert not marker.exists()
    assert report.built and [t.name for t in report.tests if t.ran and t.max_score] == [
        "test_counts_exactly_the_calls_made"]
    assert report.score == 0


def test_no_variable_of_the_graders_environment_reaches_its_children_unless_needed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("LANG", "C.UTF-8")
    env = child_environment({"EXTRA": "1"})
    assert "GITHUB_TOKEN" not in env and "AWS_SECRET_ACCESS_KEY" not in env
    assert env["LANG"] == "C.UTF-8" and env["EXTRA"] == "1"
    assert env["PYTHONSAFEPATH"] == "1"


BOMB = """.section .rodata
.globl bomb
bomb:
.fill 0x40000000, 4, 0x5a5a5a5a
"""


def test_a_fill_bomb_fails_in_seconds_with_one_line(tmp_path: Path) -> None:
    sub = _handout(tmp_path / "sub")
    (sub / "kernel" / "bomb.S").write_text(BOMB)
    start = time.perf_counter()
    with staging_slot() as slot:
        built = build_submission(sub, slot)
        largest = max((p.stat().st_size for p in slot.rglob("*") if p.is_file()), default=0)
    seconds = time.perf_counter() - start
    assert not built.ok and seconds < 30, seconds
    assert built.output == ("the build was stopped: a compiler went past the build's "
                            "limits (2 GiB of memory, 64 MiB per file, 120 s of CPU)")
    assert largest <= 64 << 20
