"""docs/kernel names real files and functions: every `path` under kernel/ or userland/
it mentions exists, and every `name()` is defined in the kernel, the userland or the
harness, or is a system call of kernel/syscall.tbl, so the pages cannot drift from the
code they teach."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from privlab.paths import REPO_ROOT

PAGES = sorted((REPO_ROOT / "docs" / "kernel").glob("*.md"))
SOURCES = "\n".join(p.read_text() for d in ("kernel", "userland", "harness")
                    for p in (REPO_ROOT / d).rglob("*")
                    if p.suffix in (".c", ".h", ".S", ".py", ".tbl"))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_named_files_and_functions_exist(page: Path) -> None:
    text = page.read_text()
    files = re.findall(r"`((?:kernel|userland)/[\w/.-]+\.(?:c|h|S|ld|tbl))`", text)
    assert [f for f in files if not (REPO_ROOT / f).is_file()] == []
    functions = set(re.findall(r"`(\w+)\(\)`", text))
    definition = r"\b{0}\s*\([^;{{]*\)\s*(\{{|$)|^{0}:|def {0}\(|^\d+\s+{0}\("
    defined = {f for f in functions if re.search(definition.format(f), SOURCES, re.M)}
    assert sorted(functions - defined) == []
    assert files or functions, "a page that names no file or function"
