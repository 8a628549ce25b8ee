"""The two grading packages keep their boundary: privlab.grade (what a lab's tests and
the pytest plugin need) never imports privlab.course (course-staff orchestration), and
the modules of each import each other without a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import privlab.course
import privlab.grade

GRADE = Path(privlab.grade.__file__).parent
COURSE = Path(privlab.course.__file__).parent


def _imports(path: Path, package: str) -> set[str]:
    """The privlab modules `path` imports (at module level or inside a function),
    as dotted names below privlab."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            if not name.startswith("privlab"):
                continue
            found.add(name)
            found.update(f"{name}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("privlab"))
    return found


def _graph(directory: Path, package: str) -> dict[str, set[str]]:
    modules = {f"{package}.{p.stem}": p for p in directory.glob("*.py") if p.stem != "__init__"}
    return {name: {m for m in _imports(path, package) if m in modules}
            for name, path in modules.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of `graph` (a list of modules, first == last), else []."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_grade_never_imports_course() -> None:
    offending = sorted(f"{p.name}: {m}" for p in GRADE.glob("*.py")
                       for m in _imports(p, "privlab.grade") if m.startswith("privlab.course"))
    assert offending == []


def test_the_modules_of_grade_import_each_other_without_a_cycle() -> None:
    assert _cycle(_graph(GRADE, "privlab.grade")) == []


def test_the_modules_of_course_import_each_other_without_a_cycle() -> None:
    assert _cycle(_graph(COURSE, "privlab.course")) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
