"""Each fact C, assembler and Python share is written once, in harness/abi (or the
header it parses), and read from there: these tests look for the shapes a restated
fact takes in the rest of the package.

- a cause compared with an integer literal (`e.code == 8`, `cause in (12, 13, 15)`),
  or passed as one (`AfterTrap(code=8)`): name it (`Exc.USER_ECALL`);
- a binary layout (`struct.Struct(...)`) outside harness/abi, except for formats that
  are not privlab's to define (ELF, virtio) or that one module owns (the trace file's
  prefix), each listed below with its reason;
- in C, satp's mode or a PTE's PPN taken apart with a literal shift
  (`satp >> 60`, `pte >> 10`): riscv_gen.h names them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from privlab.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "harness"
CAUSE_NAMES = {"code", "cause", "scause", "mcause", "exception", "exc_code"}

# struct layouts outside abi/, each with why it is defined where it is.
OWN_LAYOUTS = {
    "machine/elfread.py": "ELF's headers and symbols: the System V gABI's (loader, symbolizer)",
    "devices/virtio_blk.py": "virtio-blk's request header: the virtio specification's",
    "devices/virtqueue.py": "virtqueue descriptors and rings: the virtio specification's",
    "machine/tracefile.py": "the trace file's own prefix, defined in that one module",
}


def _python_files() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] != "abi"]


def _is_cause(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in CAUSE_NAMES
    return isinstance(node, ast.Name) and node.id in CAUSE_NAMES


def _int_literals(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return type(node.value) is int and node.value != 0
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return bool(node.elts) and all(_int_literals(e) for e in node.elts)
    return False


def literal_causes(source: str) -> list[int]:
    """Lines of `source` that compare or pass a cause as an integer literal."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_cause(s) for s in sides) and any(_int_literals(s) for s in sides):
                found.append(node.lineno)
        elif isinstance(node, ast.Call):
            found += [k.value.lineno for k in node.keywords
                      if k.arg in CAUSE_NAMES and _int_literals(k.value)]
        elif isinstance(node, ast.Assign) and _int_literals(node.value) and any(
                isinstance(t, ast.Name) and re.search(r"(?:^|_)FAULTS?(?:$|_)|CAUSE|ECALL", t.id)
                for t in node.targets):
            found.append(node.lineno)
    return found


def struct_layouts(source: str) -> list[int]:
    return [node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "Struct" and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "struct"]


C_SHAPES = re.compile(r"satp\s*>>\s*(60|31)\b|pte\s*>>\s*10\b|<<\s*44\)\s*-\s*1")


def test_no_module_outside_abi_names_a_cause_by_its_number() -> None:
    found = [f"{p.relative_to(REPO_ROOT)}:{line}" for p in _python_files()
             for line in literal_causes(p.read_text())]
    assert found == []


def test_binary_layouts_live_in_abi_or_are_listed_with_their_reason() -> None:
    found = sorted({str(p.relative_to(PACKAGE)) for p in _python_files()
                    if struct_layouts(p.read_text())})
    assert [p for p in found if p not in OWN_LAYOUTS] == []


def test_the_native_core_takes_satp_and_pte_fields_from_the_generated_header() -> None:
    found = [f"{p.relative_to(REPO_ROOT)}:{n}" for p in sorted(PACKAGE.rglob("*.c"))
             for n, line in enumerate(p.read_text().splitlines(), 1) if C_SHAPES.search(line)]
    assert found == []


@pytest.mark.parametrize("source, lines", [
    ("if e.code == 8 and not e.interrupt: pass\n", [1]),
    ("x = trap.cause in (12, 13, 15)\n", [1]),
    ("_PAGE_FAULTS = (12, 13, 15)\n", [1]),
    ("run([AfterTrap(code=8, interrupt=False)])\n", [1]),
    ("if e.code == Exc.USER_ECALL: pass\n", []),
    ("if e.code == 0: pass\n", []),          # "no code yet", not a cause
    ("n = len(rows) == 8\n", []),
    ("DEFAULT_PORT = 8000\n", []),         # a DEFAULT is no fault
])
def test_the_cause_check_finds_each_shape(source: str, lines: list[int]) -> None:
    assert literal_causes(source) == lines


@pytest.mark.parametrize("line, found", [
    ("    uint64_t mode = satp >> 60;", True),
    ("    uint64_t ppn = pte >> 10;", True),
    ("    root = (satp & ((1ull << 44) - 1)) << PAGE_SHIFT;", True),
    ("    uint64_t mode = satp >> SATP64_MODE_SHIFT;", False),
])
def test_the_c_check_finds_each_shape(line: str, found: bool) -> None:
    assert bool(C_SHAPES.search(line)) is found
