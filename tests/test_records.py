"""Every record says what it is, and the command line starts without `inspect`
(harness/entry.py): the dataclasses module calls `inspect.signature` only to write a
`__doc__` for a record that has none."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest
from machine.asm import build_asm

from privlab.paths import REPO_ROOT


def _is_dataclass(node: ast.ClassDef) -> bool:
    def name(d: ast.expr) -> str:
        d = d.func if isinstance(d, ast.Call) else d
        return d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", "")
    return any(name(d) == "dataclass" for d in node.decorator_list)


def test_every_record_has_a_docstring() -> None:
    missing = []
    for path in sorted((REPO_ROOT / "harness").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and _is_dataclass(node) and \
                    ast.get_docstring(node) is None:
                missing.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno} {node.name}")
    assert missing == []


def test_the_check_finds_a_record_without_one() -> None:
    tree = ast.parse("@dataclass(frozen=True)\nclass A:\n    x: int\n"
                     "@dataclasses.dataclass\nclass B:\n    '''B.'''\n")
    found = [n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
             and _is_dataclass(n) and ast.get_docstring(n) is None]
    assert found == ["A"]


def _after_command(args: list[str]) -> dict[str, object]:
    """Run `privlab ARGS` as the console script does (harness/entry.py), a second
    time (the first builds or stamps what it needs, and a build may use `inspect`),
    then say whether `inspect` was loaded and whether its stand-in works."""
    subprocess.run([sys.executable, "-m", "privlab", *args], capture_output=True, check=True)
    probe = (
        "import sys, json, contextlib, io\n"
        f"sys.argv = ['privlab', *{args!r}]\n"
        "from privlab.entry import main\n"
        "class Left(BaseException):\n"
        "    pass\n"
        "def leave(status):\n"
        "    raise Left(status)\n"
        "import os\n"
        "os._exit = leave\n"     # `run` ends its process at once (cli/main.py leave_at_once)
        "try:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        status = main()\n"
        "except Left as left:\n"
        "    status = left.args[0]\n"
        "before = {m: m in sys.modules for m in ('ast', 'dis', 'tokenize')}\n"
        "deferred = type(sys.modules['inspect']).__name__\n"
        "import dataclasses, inspect\n"
        "@dataclasses.dataclass\n"
        "class Undocumented:\n"
        "    x: int\n"
        "real = sys.modules['inspect']\n"
        "print(json.dumps({'status': status, 'before': before, 'deferred': deferred,\n"
        "    'doc': Undocumented.__doc__, 'real': type(real).__name__,\n"
        "    'same': dataclasses.inspect.signature is inspect.signature is real.signature}))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out.splitlines()[-1])


@pytest.mark.parametrize("command", ["bare", "user"])
def test_a_run_leaves_inspect_unloaded_until_something_uses_it(command: str) -> None:
    args = ["run", "--quiet", "--bios", "none", "--kernel", str(build_asm("PASS"))] \
        if command == "bare" else ["run", "--quiet", "--user", "hello"]
    seen = _after_command(args)
    assert seen["status"] == 0
    assert seen["deferred"] == "_Deferred"
    assert seen["before"] == {"ast": False, "dis": False, "tokenize": False}
    # the first use loads the real module, for the stand-in's holders too
    assert seen["doc"] == "Undocumented(x: int)"
    assert seen["real"] == "module"
    assert seen["same"] is True
