"""Handouts carry no lab's solution and no hidden test, whichever lab they are for;
the public copy of the checkout neither. (That each lab's handout builds, boots and
keeps the base tests is tests/grade/test_labs.py's job.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from privlab.build.images import build_user_programs
from privlab.course.handout import make_handout, solution_files
from privlab.errors import BadInput
from privlab.grade.labs import all_labs, find_lab
from privlab.paths import REPO_ROOT

PRIVLAB = [sys.executable, "-m", "privlab"]
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "// HANDOUT:")


def _leaks(root: Path) -> list[str]:
    """Files under `root` with a solution marker, and every `hidden` directory."""
    found = []
    for path in root.rglob("*"):
        if path.is_dir() and path.name == "hidden":
            found.append(f"{path.relative_to(root)}/")
        elif path.is_file() and path.suffix in (".c", ".h", ".S", ".ld", ".tbl") \
                and any(m in path.read_text(errors="replace") for m in MARKERS):
            found.append(str(path.relative_to(root)))
    return found


def test_the_reference_has_solutions_of_several_labs_in_files_no_lab_lists_twice() -> None:
    """What the handouts below strip: markers of every lab, each file listed by the labs
    it belongs to. One file holds two labs' work: kalloc.c, reference counts for
    copy-on-write (lab 10) and per-hart free lists (lab 14)."""
    marked = solution_files(REPO_ROOT)
    per_lab = [lab.solution_files for lab in all_labs()]
    assert all(len(set(files)) == len(files) for files in per_lab)
    listed = [f for files in per_lab for f in files]
    assert sorted(marked) == sorted(set(listed))
    assert {f for f in listed if listed.count(f) > 1} == {"kernel/kalloc.c"}
    assert len(marked) >= 13


def test_a_handout_of_each_lab_holds_no_labs_solution_and_no_hidden_directory(
        tmp_path: Path) -> None:
    mmap_answer = "uvmunmap(pt, start, npages, 1)"   # in mmap.c's solution only
    assert mmap_answer in (REPO_ROOT / "kernel" / "mmap.c").read_text()
    kernels = set()
    for lab in all_labs():
        out = tmp_path / lab.name
        changed = make_handout([lab], out)
        assert _leaks(out) == [], lab.name
        assert sorted(changed) == sorted(solution_files(REPO_ROOT))
        assert (out / f"LAB-{lab.name}.md").is_file()
        assert [p.name for p in out.glob("LAB-*.md")] == [f"LAB-{lab.name}.md"]
        assert mmap_answer not in (out / "kernel" / "mmap.c").read_text(), lab.name
        kernels.add(tuple(p.read_bytes() for p in sorted((out / "kernel").rglob("*.[chS]"))))
    assert len(kernels) == 1     # every lab's handout is the same kernel


def test_the_public_copy_is_the_checkout_without_solutions_hidden_tests_or_tests(
        tmp_path: Path) -> None:
    out = tmp_path / "public"
    make_handout(all_labs(), out, public=True)
    assert _leaks(out) == []
    assert not (out / "tests").exists() and not (out / ".venv").exists()
    for lab in all_labs():
        public_lab = out / "labs" / lab.name
        assert (public_lab / "lab.toml").is_file() and list(public_lab.glob("test_*.py"))
        assert not (public_lab / "hidden").exists()
    assert (out / "pyproject.toml").is_file() and (out / "harness" / "grade").is_dir()
    assert (out / "deploy" / "install-privlab.sh").is_file()
    # A privlab students can run, on its own labs/: it lists them all.
    listed = subprocess.run([*PRIVLAB, "lab", "list"], cwd=out,
                            env={**os.environ, "PYTHONPATH": str(out)},
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == len(all_labs())


def test_a_handout_needs_an_empty_directory_and_the_listed_files(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(BadInput, match="exists and is not empty"):
        make_handout([find_lab("mmap")], tmp_path / "full")
    lab = tmp_path / "labs" / "odd"
    lab.mkdir(parents=True)
    (lab / "lab.toml").write_text('solution_files = ["kernel/nowhere.c"]\n')
    with pytest.raises(BadInput, match=r"^kernel/nowhere.c: listed as a solution file of odd "
                                       r"but missing$"):
        make_handout(all_labs(tmp_path / "labs"), tmp_path / "h")


def test_build_user_makes_a_hidden_tests_program_that_boots(tmp_path: Path) -> None:
    """`privlab lab build-user`: a program outside userland/, linked with the user
    library, runs under the grader's kernel and prints what it computed."""
    src = tmp_path / "secret.c"
    src.write_text('#include "user.h"\n'
                   "int main(int argc, char **argv) {\n"
                   '  printf("secret %s %d\\n", argc > 1 ? argv[1] : "-", getpid() > 0);\n'
                   "  return 3;\n}\n")
    built = build_user_programs([src], tmp_path / "bin")
    assert built == {"secret": tmp_path / "bin" / "secret.elf"}
    run = subprocess.run([*PRIVLAB, "run", "--user", str(built["secret"]), "tok"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 3 and "secret tok 1" in run.stdout, run.stdout + run.stderr
    missing = subprocess.run([*PRIVLAB, "lab", "build-user", str(tmp_path / "nope.c"),
                              "-o", str(tmp_path / "bin")], capture_output=True, text=True)
    assert missing.returncode == 2
    assert missing.stderr == f"privlab: {tmp_path / 'nope.c'}: no such file\n"
