"""What the kernel's sources and docs say about the labs agrees with the labs: the
overview page names every lab's solution files, and vmprint.c's comment shows the
output format labs/vmprint/README.md asks for."""

from __future__ import annotations

import re
import tomllib

from privlab.paths import REPO_ROOT

LABS = sorted(p.parent for p in (REPO_ROOT / "labs").glob("*/lab.toml"))
# A line of vmprint's output: the header, or a PTE at some depth, hex without padding.
HEX = r"0x(?:0|[1-9a-f][0-9a-f]*)"
VMPRINT_LINE = re.compile(rf" \.\.\.|page table {HEX}|(?: \.\.)+\d+: pte (?:{HEX}|\.\.\.)"
                          rf"(?: pa {HEX}(?: va {HEX} [r-][w-][x-][u-])?)?")


def _example(lines: list[str]) -> list[str]:
    """The lines of a vmprint example: from `page table` to the last PTE line."""
    start = next(i for i, line in enumerate(lines) if line.startswith("page table"))
    out = []
    for line in lines[start:]:
        if not (line.startswith("page table") or line.startswith(" ..")):
            break
        out.append(line)
    return out


def test_the_kernel_overview_names_every_labs_solution_files() -> None:
    page = (REPO_ROOT / "docs" / "kernel" / "README.md").read_text()
    listed = page[page.index("The labs ("):]
    missing = [f"{lab.name}: {path}" for lab in LABS
               for path in tomllib.loads((lab / "lab.toml").read_text())["solution_files"]
               if f"`{path.removeprefix('kernel/')}`" not in listed]
    assert missing == []


def test_vmprint_comment_shows_the_unpadded_format_of_the_lab_readme() -> None:
    source = (REPO_ROOT / "kernel" / "vmprint.c").read_text().splitlines()
    comment = [line.removeprefix("//   ") for line in source if line.startswith("//   ")]
    readme = (REPO_ROOT / "labs" / "vmprint" / "README.md").read_text().splitlines()
    for example in (_example(comment), _example(readme)):
        assert len(example) >= 4
        assert [line for line in example if not VMPRINT_LINE.fullmatch(line)] == []
