"""Student handouts: the kernel with a lab's reference solution taken out.

Solutions sit between `// BEGIN SOLUTION` and `// END SOLUTION` lines (in C and in
assembly, which clang preprocesses). The handout keeps everything else, so it must
build and boot. The stub a student starts from sits inside the block as comments,
`// HANDOUT: return -1;`: the reference never compiles it (no unreachable fallback
after its solution), and the handout replaces the block with those lines, uncommented.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable
from pathlib import Path

from harness.errors import BadInput
from harness.grade.labs import Lab
from harness.paths import REPO_ROOT

__all__ = ["SOLUTION", "make_handout", "strip_solutions"]

SOLUTION = re.compile(r"^[ \t]*// BEGIN SOLUTION\n.*?^[ \t]*// END SOLUTION[^\n]*\n", re.S | re.M)
_STUB = re.compile(r"^([ \t]*)// HANDOUT: ?(.*\n)", re.M)
_MARK = re.compile(r"(BEGIN|END) SOLUTION|// HANDOUT:")


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


def _strip_files(root: Path, files: Iterable[str]) -> list[str]:
    changed = []
    for rel in files:
        path = root / rel
        if not path.is_file():
            raise BadInput(f"{rel}: listed as a solution file but missing")
        text = path.read_text()
        stripped = strip_solutions(text, rel)
        if stripped != text:
            path.write_text(stripped)
            changed.append(rel)
    return changed


def make_handout(labs: Iterable[Lab], out: Path, source: Path = REPO_ROOT) -> list[str]:
    """Copy `kernel/` and `userland/` from `source` to `out`, strip the solutions of
    `labs`, and add each lab's README. Returns the files that changed."""
    if out.exists() and any(out.iterdir()):
        raise BadInput(f"{out}: exists and is not empty")
    out.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.o", "*.elf")
    for part in ("kernel", "userland"):
        shutil.copytree(source / part, out / part, ignore=ignore)
    changed: list[str] = []
    for lab in labs:
        changed += _strip_files(out, lab.solution_files)
        if lab.readme.is_file():
            shutil.copyfile(lab.readme, out / f"LAB-{lab.name}.md")
    return changed
