"""Student handouts: the kernel with the reference solutions taken out.

Solutions sit between `// BEGIN SOLUTION` and `// END SOLUTION` lines (in C and in
assembly, which clang preprocesses). The handout keeps everything else, so it must
build and boot. The stub a student starts from sits inside the block as comments,
`// HANDOUT: return -1;`: the reference never compiles it (no unreachable fallback
after its solution), and the handout replaces the block with those lines, uncommented.

Every handout strips every lab's solutions, whichever lab it is for: a handout of one
lab that kept another lab's reference would hand that lab's answers out with it. A
public copy (`public=True`) is the whole checkout students may see, for a Classroom
runner to clone: the same stripped `kernel/`, `labs/` without any `hidden/`
directory, and no `tests/` (privlab's own suite quotes pieces of the solutions).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from ..errors import BadInput
from ..grade.labs import Lab
from ..paths import REPO_ROOT

__all__ = ["HIDDEN_DIR_NAME", "SOLUTION", "make_handout", "solution_files", "strip_solutions"]

SOLUTION = re.compile(r"^[ \t]*// BEGIN SOLUTION\n.*?^[ \t]*// END SOLUTION[^\n]*\n", re.S | re.M)
_STUB = re.compile(r"^([ \t]*)// HANDOUT: ?(.*\n)", re.M)
_MARK = re.compile(r"(BEGIN|END) SOLUTION|// HANDOUT:")
_SOURCE_SUFFIXES = (".c", ".h", ".S", ".s", ".ld", ".tbl")
HIDDEN_DIR_NAME = "hidden"
_PRIVATE_TOPS = ("tests",)
# Never part of a copy: build outputs, caches, virtual environments, reports.
_JUNK = ("__pycache__", "*.o", "*.elf", "*.egg-info", ".venv", ".cache*", ".git",
         ".mypy_cache", ".ruff_cache", ".pytest_cache", "privlab-grade")


def _stub(block: re.Match[str]) -> str:
    """A solution block's handout: its `// HANDOUT:` lines, uncommented."""
    return "".join(indent + code for indent, code in _STUB.findall(block[0]))


def strip_solutions(text: str, where: str = "source") -> str:
    """`text` with each solution block replaced by its stub; BadInput if the markers do
    not pair up or a `// HANDOUT:` line stands outside a block."""
    stripped = SOLUTION.sub(_stub, text)
    if _MARK.search(stripped):
        raise BadInput(f"{where}: unbalanced solution markers")
    return stripped


def solution_files(root: Path) -> list[str]:
    """The source files under `root`'s kernel/ and userland/ that hold solution markers,
    relative to `root`."""
    found = []
    for part in ("kernel", "userland"):
        for path in sorted((root / part).rglob("*")):
            if path.is_file() and path.suffix in _SOURCE_SUFFIXES \
                    and _MARK.search(path.read_text(errors="replace")):
                found.append(path.relative_to(root).as_posix())
    return found


def _check_listed(labs: Iterable[Lab], root: Path) -> None:
    for lab in labs:
        for rel in lab.solution_files:
            if not (root / rel).is_file():
                raise BadInput(f"{rel}: listed as a solution file of {lab.name} but missing")


def _strip_all(root: Path) -> list[str]:
    changed = []
    for rel in solution_files(root):
        path = root / rel
        text = path.read_text()
        stripped = strip_solutions(text, rel)
        if stripped != text:
            path.write_text(stripped)
            changed.append(rel)
    return changed


def _tracked(source: Path) -> list[str] | None:
    """The files git tracks in `source` (None if it is not a git checkout)."""
    try:
        out = subprocess.run(["git", "-C", str(source), "ls-files", "-z"], check=True,
                             capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [p for p in out.decode().split("\0") if p]


def _private(rel: str) -> bool:
    """A file a public copy leaves out: a lab's hidden tests, or privlab's own test
    suite (its mutation tests quote pieces of the reference solutions)."""
    parts = Path(rel).parts
    return parts[0] in _PRIVATE_TOPS or (parts[0] == "labs" and HIDDEN_DIR_NAME in parts[2:-1])


def _copy_public(source: Path, out: Path) -> None:
    """Everything students may see of `source`: git's tracked files when it is a
    checkout (else the tree without build outputs and caches), without `tests/` and
    any `labs/*/hidden/`."""
    tracked = _tracked(source)
    if tracked is None:
        shutil.copytree(source, out, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*_JUNK))
        for private in [*out.glob(f"labs/*/{HIDDEN_DIR_NAME}"), *map(out.joinpath, _PRIVATE_TOPS)]:
            if private.is_dir():
                shutil.rmtree(private)
        return
    for rel in tracked:
        src = source / rel
        if _private(rel) or not src.is_file():
            continue
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, out / rel)


def make_handout(labs: Iterable[Lab], out: Path, source: Path = REPO_ROOT, *,
                 public: bool = False) -> list[str]:
    """Copy `kernel/` and `userland/` from `source` to `out` (with `public`, the whole
    checkout without any lab's `hidden/`), strip every lab's solutions, and add the
    README of each of `labs` as `LAB-<name>.md`. Returns the files that changed."""
    labs = list(labs)
    if out.exists() and any(out.iterdir()):
        raise BadInput(f"{out}: exists and is not empty")
    _check_listed(labs, source)
    out.mkdir(parents=True, exist_ok=True)
    if public:
        _copy_public(source, out)
    else:
        ignore = shutil.ignore_patterns(*_JUNK)
        for part in ("kernel", "userland"):
            shutil.copytree(source / part, out / part, ignore=ignore)
    changed = _strip_all(out)
    for lab in labs:
        if lab.readme.is_file():
            shutil.copyfile(lab.readme, out / f"LAB-{lab.name}.md")
    return changed
