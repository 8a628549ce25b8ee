"""docs/unicorn.md stays in step with the code: every `docs/unicorn.md#<section>` cited in
harness/ or tests/ is a section of it, and every test it names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "unicorn.md"
CITATION = re.compile(r"docs/unicorn\.md#([A-Za-z0-9_-]+)")
TEST_REF = re.compile(r"(tests/[\w/]+\.py)::(test_\w+)")
SOURCES = ("*.py", "*.c", "*.h", "*.S", "*.md")


def anchors(markdown: str) -> set[str]:
    """GitHub's anchors for the headings: lower case, punctuation other than - and _
    dropped, spaces as hyphens."""
    out = set()
    for m in re.finditer(r"^#{1,6} +(.+?) *$", markdown, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def citations() -> dict[str, list[str]]:
    """Anchor -> the files citing it, over harness/ and tests/."""
    found: dict[str, list[str]] = {}
    for top in ("harness", "tests"):
        for pattern in SOURCES:
            for path in sorted((ROOT / top).rglob(pattern)):
                if ".venv" in path.parts:
                    continue
                for name in CITATION.findall(path.read_text(errors="replace")):
                    found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    return found


def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.name for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name.startswith("test_")}


def test_every_cited_section_of_docs_unicorn_md_exists() -> None:
    cited = citations()
    assert cited, "no code cites docs/unicorn.md: is the pattern still right?"
    have = anchors(DOC.read_text())
    stale = {name: files for name, files in cited.items() if name not in have}
    assert not stale, f"citations of sections docs/unicorn.md does not have: {stale}"


def test_every_section_link_inside_docs_unicorn_md_exists() -> None:
    text = DOC.read_text()
    links = set(re.findall(r"\]\(#([A-Za-z0-9_-]+)\)", text))
    assert links <= anchors(text), links - anchors(text)


def test_every_test_named_in_docs_unicorn_md_exists() -> None:
    named = TEST_REF.findall(DOC.read_text())
    assert named, "docs/unicorn.md names no test: is the pattern still right?"
    missing = []
    defined: dict[str, set[str]] = {}
    for file, name in named:
        path = ROOT / file
        if file not in defined:
            defined[file] = defined_tests(path) if path.is_file() else set()
        if name not in defined[file]:
            missing.append(f"{file}::{name}")
    assert not missing, f"docs/unicorn.md names tests that do not exist: {missing}"


def test_every_unicorn_fact_test_is_named_in_docs_unicorn_md() -> None:
    facts = "tests/machine/test_unicorn_facts.py"
    named = {name for file, name in TEST_REF.findall(DOC.read_text()) if file == facts}
    unnamed = defined_tests(ROOT / facts) - named
    assert not unnamed, f"fact tests docs/unicorn.md does not mention: {sorted(unnamed)}"
