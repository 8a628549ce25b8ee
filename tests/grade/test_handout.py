"""Handouts carry no lab's solution and no hidden test, whichever lab they are for;
the public copy of the checkout neither. (That each lab's handout builds, boots and
keeps the base tests is tests/grade/test_labs.py's job.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from privlab.build.images import build_user_programs
from privlab.course.handout import make_handout, solution_files
from privlab.errors import BadInput
from privlab.grade.labs import all_labs, find_lab, load_lab
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
    # The shared file names the lab of each block; a handout finds each block's lab.
    kalloc = (REPO_ROOT / "kernel" / "kalloc.c").read_text()
    assert "// BEGIN SOLUTION\n" not in kalloc
    assert kalloc.count("// BEGIN SOLUTION cow\n") and kalloc.count("// BEGIN SOLUTION locks\n")


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
        assert _dead_links(out / f"LAB-{lab.name}.md") == [], lab.name
        assert mmap_answer not in (out / "kernel" / "mmap.c").read_text(), lab.name
        kernels.add(tuple(p.read_bytes() for p in sorted((out / "kernel").rglob("*.[chS]"))))
    assert len(kernels) == 1     # every lab's handout is the same kernel


def _dead_links(page: Path) -> list[str]:
    """The relative links of a markdown page that lead to nothing beside it."""
    targets = re.findall(r"\]\((?![a-z][a-z0-9+.-]*:|#)([^)\s#]+)", page.read_text())
    return [t for t in targets if not (page.parent / t).exists()]


def test_a_handout_keeps_the_solutions_of_the_labs_course_staff_choose(tmp_path: Path) -> None:
    """--keep pipe: pipe.c is the reference, without markers or stubs; every other lab's
    solution is stripped. In kalloc.c, which two labs share, keeping cow keeps its
    blocks alone."""
    pipe_answer = "pi->data[pi->nwrite++ % PIPESIZE] = ch;"     # pipe.c's solution
    assert pipe_answer in (REPO_ROOT / "kernel" / "pipe.c").read_text()
    out = tmp_path / "lazy"
    changed = make_handout([find_lab("lazy")], out, keep=["pipe", "cow"])
    assert "kernel/lazy.c" in changed
    assert _leaks(out) == []
    pipe = (out / "kernel" / "pipe.c").read_text()
    assert pipe_answer in pipe and "(void)pi, (void)src" not in pipe
    kalloc = (out / "kernel" / "kalloc.c").read_text()
    assert "void kref(void *pa)" in kalloc               # cow's
    assert "static struct kmem kmem;" in kalloc          # locks' stub, not its per-hart lists
    assert "kmem[NCPU]" not in kalloc
    with pytest.raises(BadInput, match=r"^no lab 'nosuch' to keep the solution of \(labs: "):
        make_handout([find_lab("lazy")], tmp_path / "x", keep=["nosuch"])


def test_a_solution_block_in_a_shared_file_must_name_its_lab() -> None:
    from privlab.course.handout import strip_solutions

    text = "// BEGIN SOLUTION\nint x;\n// HANDOUT: int y;\n// END SOLUTION\n"
    with pytest.raises(BadInput, match=r"^kernel/k.c: a solution block names no lab, and a "
                                       r"and b list the file: write '// BEGIN SOLUTION <lab>'$"):
        strip_solutions(text, "kernel/k.c", owners={"a", "b"})
    with pytest.raises(BadInput, match="a solution block of lab 'c', which does not list"):
        strip_solutions(text.replace("SOLUTION\n", "SOLUTION c\n", 1), "kernel/k.c",
                        owners={"a", "b"})
    assert strip_solutions(text, "kernel/k.c", owners={"a"}) == "int y;\n"
    assert strip_solutions(text, "kernel/k.c", owners={"a"}, keep={"a"}) == "int x;\n"


def test_every_labs_prerequisites_are_labs_and_named_at_the_top_of_its_page() -> None:
    from privlab.grade.labs import prerequisites

    labs = {lab.name: lab for lab in all_labs()}
    assert labs["lazy"].requires == ("pipe",) and labs["locks"].requires == ("lazy",)
    assert [p.name for p in prerequisites(labs["locks"])] == ["pipe", "lazy"]
    for lab in labs.values():
        top = "\n".join(lab.readme.read_text().splitlines()[:6])
        named = re.findall(r"lab \d+ \(`(\w+)`\)", top) if "**Requires:**" in top else []
        assert sorted(named) == sorted(lab.requires), lab.name


def test_a_bad_requires_is_one_line(tmp_path: Path) -> None:
    from privlab.grade.labs import load_lab, prerequisites

    for name, requires in (("a", '["b"]'), ("b", '["a"]'), ("c", '"a"'), ("d", '["zz"]')):
        (tmp_path / name).mkdir()
        (tmp_path / name / "lab.toml").write_text(f"requires = {requires}\n")
    with pytest.raises(BadInput, match=r"requires goes round in a circle: a -> b -> a$"):
        prerequisites(load_lab(tmp_path / "a"), [load_lab(tmp_path / n) for n in "abd"])
    with pytest.raises(BadInput, match=r"c/lab.toml: requires must be a list of other labs' "
                                       r"names, not 'a'$"):
        load_lab(tmp_path / "c")
    with pytest.raises(BadInput, match=r"^labs/d/lab.toml: requires 'zz', but there is no "
                                       r"such lab$"):
        prerequisites(load_lab(tmp_path / "d"), [load_lab(tmp_path / n) for n in "abd"])


def test_the_docs_lab_table_lists_every_lab() -> None:
    page = (REPO_ROOT / "docs" / "grading" / "README.md").read_text()
    listed = {}
    for row in re.findall(r"^\| \d+ \|.*\|$", page, re.M):
        number, name, _, requires, _ = (cell.strip() for cell in row.strip("|").split("|"))
        listed[(int(number), name.strip("`"))] = {r.strip("` ") for r in requires.split(",")
                                                  if r.strip()}
    assert listed == {(lab.number, lab.name): set(lab.requires) for lab in all_labs()}


def test_a_public_handout_refuses_a_lab_file_git_does_not_track(tmp_path: Path) -> None:
    """It copies what git tracks: a new test file not yet added would be missing from
    the students' copy, silently. One line instead."""
    source = tmp_path / "fork"
    for part in ("kernel", "userland", "labs/mmap"):
        shutil.copytree(REPO_ROOT / part, source / part,
                        ignore=shutil.ignore_patterns("__pycache__", "hidden"))
    shutil.copytree(REPO_ROOT / "docs", source / "docs")
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@b", "PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "fork"]):
        subprocess.run(["git", "-C", str(source), *cmd], check=True, env=env)
    (source / "labs" / "mmap" / "test_new.py").write_text("def test_x() -> None: ...\n")
    lab = load_lab(source / "labs" / "mmap")
    with pytest.raises(BadInput, match=r"^labs/mmap/test_new.py: not tracked by git, so a "
                                       r"public handout would leave it out: git add it, or "
                                       r"move it away$"):
        make_handout([lab], tmp_path / "public", source, public=True)
    assert not (tmp_path / "public").exists()
    subprocess.run(["git", "-C", str(source), "add", "."], check=True, env=env)
    make_handout([lab], tmp_path / "public", source, public=True)
    assert (tmp_path / "public" / "labs" / "mmap" / "test_new.py").is_file()
    assert _dead_links(tmp_path / "public" / "LAB-mmap.md") == []


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
