"""Student handouts: the kernel with the reference solutions taken out.

Solutions sit between `// BEGIN SOLUTION` and `// END SOLUTION` lines (in C and in
assembly, which clang preprocesses). The handout keeps everything else, so it must
build and boot. The stub a student starts from sits inside the block as comments,
`// HANDOUT: return -1;`: the reference never compiles it (no unreachable fallback
after its solution), and the handout replaces the block with those lines, uncommented.

Each block belongs to a lab: the one whose lab.toml lists the file in
`solution_files`, or, in a file several labs list (kernel/kalloc.c: copy-on-write and
locks), the lab its BEGIN line names (`// BEGIN SOLUTION locks`). A handout strips
every lab's blocks, whichever lab it is for (a handout of one lab that kept another
lab's reference would hand that lab's answers out with it), except the labs course
staff choose to keep (`keep`: earlier labs whose solutions the students may have, or
a lab's prerequisites): a kept block stays as its solution, without the markers and
the stubs. A public copy (`public=True`) is the whole checkout students may see, for a
Classroom runner to clone: the same stripped `kernel/`, `labs/` without any `hidden/`
directory, and no `tests/` (privlab's own suite quotes pieces of the solutions).

The lab pages become `LAB-<name>.md` at the top of the handout, with their relative
links rewritten from the top and the files they lead to copied in, so every link
resolves inside the handout.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Collection, Iterable
from pathlib import Path

from ..errors import BadInput
from ..grade.labs import Lab, all_labs
from ..paths import REPO_ROOT

__all__ = ["HIDDEN_DIR_NAME", "SOLUTION", "make_handout", "owners_of", "solution_files",
           "strip_solutions"]

SOLUTION = re.compile(r"^[ \t]*// BEGIN SOLUTION(?: (?P<lab>[\w-]+))?[ \t]*\n(?P<body>.*?)"
                      r"^[ \t]*// END SOLUTION[^\n]*\n", re.S | re.M)
_STUB = re.compile(r"^([ \t]*)// HANDOUT: ?(.*\n)", re.M)
_MARK = re.compile(r"(BEGIN|END) SOLUTION|// HANDOUT:")
_SOURCE_SUFFIXES = (".c", ".h", ".S", ".s", ".ld", ".tbl")
HIDDEN_DIR_NAME = "hidden"
_PRIVATE_TOPS = ("tests",)
# Never part of a copy: build outputs, caches, virtual environments, reports.
_JUNK = ("__pycache__", "*.o", "*.elf", "*.egg-info", ".venv", ".cache*", ".git",
         ".mypy_cache", ".ruff_cache", ".pytest_cache", "privlab-grade")
# A relative link in a lab page: ](target) or ](target#anchor).
_LINK = re.compile(r"\]\((?![a-z][a-z0-9+.-]*:|#)(?P<target>[^)\s#]+)(?P<anchor>#[^)\s]*)?\)")


def _stub(body: str) -> str:
    """A solution block's handout: its `// HANDOUT:` lines, uncommented."""
    return "".join(indent + code for indent, code in _STUB.findall(body))


def strip_solutions(text: str, where: str = "source", *, keep: Collection[str] = (),
                    owners: Collection[str] = ()) -> str:
    """`text` with each solution block replaced by its stub, or, for a block of a lab
    in `keep`, by its solution. `owners` are the labs listing the file: an unnamed
    block is theirs (it must then be one lab), a named block must name one of them.
    BadInput if the markers do not pair up, a `// HANDOUT:` line stands outside a
    block, or a block's lab is ambiguous or not an owner."""
    def replace(block: re.Match[str]) -> str:
        lab = block["lab"]
        if lab is None and len(owners) > 1:
            raise BadInput(f"{where}: a solution block names no lab, and "
                           f"{' and '.join(sorted(owners))} list the file: "
                           "write '// BEGIN SOLUTION <lab>'")
        if lab is not None and owners and lab not in owners:
            raise BadInput(f"{where}: a solution block of lab {lab!r}, which does not "
                           "list the file in its solution_files")
        owner = lab if lab is not None else next(iter(owners), None)
        if owner is not None and owner in keep:
            return _STUB.sub("", block["body"])
        return _stub(block["body"])

    stripped = SOLUTION.sub(replace, text)
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


def owners_of(labs: Iterable[Lab]) -> dict[str, set[str]]:
    """Each solution file and the labs that list it."""
    owners: dict[str, set[str]] = {}
    for lab in labs:
        for rel in lab.solution_files:
            owners.setdefault(rel, set()).add(lab.name)
    return owners


def _check_listed(labs: Iterable[Lab], root: Path) -> None:
    for lab in labs:
        for rel in lab.solution_files:
            if not (root / rel).is_file():
                raise BadInput(f"{rel}: listed as a solution file of {lab.name} but missing")


def _strip_all(root: Path, keep: Collection[str], owners: dict[str, set[str]]) -> list[str]:
    changed = []
    for rel in solution_files(root):
        path = root / rel
        text = path.read_text()
        stripped = strip_solutions(text, rel, keep=keep, owners=owners.get(rel, set()))
        if stripped != text:
            path.write_text(stripped)
            changed.append(rel)
    return changed


def _git_files(source: Path, *args: str) -> list[str] | None:
    """`git ls-files ARGS` in `source` (None if it is not a git checkout)."""
    try:
        out = subprocess.run(["git", "-C", str(source), "ls-files", "-z", *args], check=True,
                             capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [p for p in out.decode().split("\0") if p]


def _private(rel: str) -> bool:
    """A file a public copy leaves out: a lab's hidden tests, or privlab's own test
    suite (its mutation tests quote pieces of the reference solutions)."""
    parts = Path(rel).parts
    return parts[0] in _PRIVATE_TOPS or (parts[0] == "labs" and HIDDEN_DIR_NAME in parts[2:-1])


def _refuse_untracked(source: Path, labs: Iterable[Lab]) -> None:
    """A public copy is git's tracked files: a lab file git does not track (a new test,
    its page) would silently be missing from it, so refuse in one line instead."""
    paths: list[str] = []
    for lab in labs:
        paths += lab.solution_files
        if lab.directory.resolve().is_relative_to(source.resolve()):
            paths.append(lab.directory.resolve().relative_to(source.resolve()).as_posix())
    untracked = _git_files(source, "--others", "--exclude-standard", "--", *paths) or []
    untracked = [rel for rel in untracked if not _private(rel)]
    if untracked:
        more = f" (and {len(untracked) - 1} more)" if len(untracked) > 1 else ""
        raise BadInput(f"{untracked[0]}{more}: not tracked by git, so a public handout "
                       "would leave it out: git add it, or move it away")


def _copy_public(source: Path, out: Path) -> None:
    """Everything students may see of `source`: git's tracked files when it is a
    checkout (else the tree without build outputs and caches), without `tests/` and
    any `labs/*/hidden/`."""
    tracked = _git_files(source)
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


def _lab_page(lab: Lab, out: Path) -> str:
    """The lab's README with each relative link rewritten from the handout's top, the
    file it leads to copied into the handout if it is not there yet. BadInput for a
    link that leads nowhere, outside the checkout, or to what students may not see."""
    root = lab.directory.parent.parent.resolve()
    where = f"{lab.name}/{lab.readme.name}"

    def relink(link: re.Match[str]) -> str:
        target = (lab.readme.parent / link["target"]).resolve()
        if not target.is_relative_to(root):
            raise BadInput(f"{where}: the link {link['target']} leads outside the checkout")
        rel = target.relative_to(root).as_posix()
        if not target.exists() or _private(rel):
            raise BadInput(f"{where}: the link {link['target']} leads to nothing a "
                           "handout can hold")
        dest = out / rel
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir():
                shutil.copytree(target, dest, ignore=shutil.ignore_patterns(*_JUNK))
            else:
                shutil.copyfile(target, dest)
        return f"]({rel}{link['anchor'] or ''})"

    return _LINK.sub(relink, lab.readme.read_text())


def make_handout(labs: Iterable[Lab], out: Path, source: Path = REPO_ROOT, *,
                 public: bool = False, keep: Iterable[str] = (),
                 every_lab: Iterable[Lab] | None = None) -> list[str]:
    """Copy `kernel/` and `userland/` from `source` to `out` (with `public`, the whole
    checkout without any lab's `hidden/`), strip every lab's solutions but those of the
    labs named in `keep`, and add the page of each of `labs` as `LAB-<name>.md`.
    `every_lab` (default: those of `source`'s labs/, and `labs`) says which lab owns
    which file. Returns the files that changed."""
    labs = list(labs)
    if every_lab is None:
        every_lab = [*(all_labs(source / "labs") if (source / "labs").is_dir() else []), *labs]
    every_lab = list(every_lab)
    known = {lab.name for lab in every_lab}
    keep = set(keep)
    if unknown := sorted(keep - known):
        raise BadInput(f"no lab {unknown[0]!r} to keep the solution of "
                       f"(labs: {', '.join(sorted(known))})")
    if out.exists() and any(out.iterdir()):
        raise BadInput(f"{out}: exists and is not empty")
    _check_listed(labs, source)
    if public:
        _refuse_untracked_if_checkout(source, labs)
    out.mkdir(parents=True, exist_ok=True)
    if public:
        _copy_public(source, out)
    else:
        ignore = shutil.ignore_patterns(*_JUNK)
        for part in ("kernel", "userland"):
            shutil.copytree(source / part, out / part, ignore=ignore)
    changed = _strip_all(out, keep, owners_of(every_lab))
    for lab in labs:
        if lab.readme.is_file():
            (out / f"LAB-{lab.name}.md").write_text(_lab_page(lab, out))
    return changed


def _refuse_untracked_if_checkout(source: Path, labs: Iterable[Lab]) -> None:
    if _git_files(source) is not None:
        _refuse_untracked(source, labs)
