"""Comments and docstrings say why, not which issue asked: the tracker's numbers mean
nothing to someone reading a clone (HOUSE-STYLE: comments that say why)."""

from __future__ import annotations

import re

from privlab.paths import REPO_ROOT

SOURCES = ("harness", "kernel", "userland", "labs", "tests", "benchmarks", "docs")
SUFFIXES = {".py", ".c", ".h", ".S", ".ld", ".md", ".toml"}
CITATION = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)


def test_no_source_cites_an_issue_number() -> None:
    cited = []
    for top in SOURCES:
        for path in sorted((REPO_ROOT / top).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file() or path == \
                    REPO_ROOT / "tests" / "test_comments_say_why.py":
                continue
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if CITATION.search(line):
                    cited.append(f"{path.relative_to(REPO_ROOT)}:{n}: {line.strip()}")
    assert cited == []
