"""The subpackages of privlab (the folder harness/) import each other without a cycle:
abi at the bottom, then mmu, fs, build, boot, devices, native, machine, kernelinfo,
trace, inspect, api, and the tools on top. Every import counts, lazy ones inside a
function and TYPE_CHECKING ones too: a cycle that only shows at run time is still a
cycle a reader has to untangle."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from privlab.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "harness"


def _unit(parts: tuple[str, ...]) -> str:
    """The subpackage a module path belongs to, or the top-level module's name."""
    if not parts:
        return "privlab"
    if (PACKAGE / parts[0]).is_dir():
        return parts[0]
    return parts[0].removesuffix(".py")


def _imports(path: Path) -> Iterator[tuple[str, ...]]:
    """Every module path inside the package that `path` imports (relative imports;
    an absolute `privlab.` import is resolved the same way)."""
    here = path.relative_to(PACKAGE).parent.parts
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[:len(here) - (node.level - 1)]
            elif node.module and node.module.split(".")[0] == "privlab":
                base = ()
            else:
                continue
            mod = tuple(node.module.split(".")) if node.module else ()
            if not node.level:
                mod = mod[1:]
            target = base + mod
            yield from ([(*target, a.name) for a in node.names] if not mod else [target])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "privlab":
                    yield tuple(a.name.split(".")[1:])


def edges() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        src = _unit(path.relative_to(PACKAGE).parts)
        for target in _imports(path):
            dst = _unit(target)
            if dst != src and dst != "privlab":
                graph.setdefault(src, set()).add(dst)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one unit (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(set(graph) | {w for ws in graph.values() for w in ws}):
        if v not in index:
            visit(v)
    return found


def test_the_subpackages_import_each_other_without_a_cycle() -> None:
    graph = edges()
    assert cycles(graph) == [], {a: sorted(graph[a]) for c in cycles(graph) for a in c}


def test_the_facts_import_nothing_else_of_privlab() -> None:
    """abi is the one place for what C, assembler and Python share: it may use errors
    and paths (where platform.h and syscall.tbl are), nothing that builds, runs or
    renders."""
    assert edges().get("abi", set()) <= {"errors", "paths"}


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"a"}}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": {"c"}}, []),
])
def test_a_cycle_is_found_however_long(graph: dict[str, set[str]],
                                       expected: list[list[str]]) -> None:
    assert cycles(graph) == expected
