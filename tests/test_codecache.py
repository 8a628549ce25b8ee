"""The command line's table of compiled dataclass methods (harness/codecache.py)."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from machine.asm import build_asm

from privlab.codecache import _calls_exec, table_path

# A module of records as privlab writes them (frozen, defaults, a factory, slots,
# annotations as strings), and what each class does, as JSON.
RECORDS = '''
from __future__ import annotations
from dataclasses import dataclass, field
@dataclass(frozen=True)
class Point:
    x: int
    y: int = 2
    tags: list[str] = field(default_factory=list, compare=False)
@dataclass
class Counter:
    n: int = 0
    name: str = "c"
@dataclass(frozen=True, slots=True)
class Slotted:
    a: int
    b: bytes
'''

BEHAVIOUR = '''
import dataclasses, inspect, json, sys, types
records = sys.modules["records"] = types.ModuleType("records")
exec(compile(RECORDS, "records.py", "exec"), records.__dict__)
Point, Counter, Slotted = records.Point, records.Counter, records.Slotted
p = Point(1)
try:
    p.x = 5
    frozen = "assigned"
except dataclasses.FrozenInstanceError as e:
    frozen = str(e)
c = Counter()
c.n += 1
out = {
    "repr": [repr(p), repr(c), repr(Slotted(1, b"x"))],
    "eq": [p == Point(1, 2, ["other"]), p == Point(2), c == Counter(1)],
    "hash": [hash(p) == hash(Point(1)), Counter.__hash__ is None],
    "frozen": frozen,
    "signatures": [str(inspect.signature(k)) for k in (Point, Counter, Slotted)],
    "annotations": [repr(k.__init__.__annotations__) for k in (Point, Counter, Slotted)],
    "slots": Slotted.__slots__,
    "factory": Point(1).tags is not Point(1).tags,
}
'''


def _run(code: str, root: Path, install: bool = True) -> dict[str, object]:
    """Python in a new interpreter, with the table under `root` installed; its JSON."""
    prelude = "import sys, json\n"
    if install:
        prelude += ("from pathlib import Path\nfrom privlab.codecache import install\n"
                    f"table = install(Path({str(root)!r}), 'run')\n")
    stats = "{'compiled': table.compiled, 'reused': table.reused}" if install else "{}"
    tail = f"\nprint(json.dumps({{'out': out, 'stats': {stats}}}))\n"
    text = prelude + f"RECORDS = {RECORDS!r}\n" + code + tail
    done = subprocess.run([sys.executable, "-c", text], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_a_second_run_compiles_nothing_and_its_classes_behave_alike(tmp_path: Path) -> None:
    plain = _run(BEHAVIOUR, tmp_path, install=False)
    first = _run(BEHAVIOUR, tmp_path)
    assert table_path(tmp_path, "run").is_file()
    second = _run(BEHAVIOUR, tmp_path)
    assert first["out"] == second["out"] == plain["out"]
    stats1, stats2 = first["stats"], second["stats"]
    assert isinstance(stats1, dict) and isinstance(stats2, dict)
    assert stats1["compiled"] >= 9 and stats1["reused"] == 0   # 3 classes, 3+ methods each
    assert stats2 == {"compiled": 0, "reused": stats1["compiled"]}
    # the generated __init__'s annotations are objects, as dataclasses makes them,
    # not the strings of the table module's own `from __future__ import annotations`
    assert "'x': 'int'" in str(plain["out"]) and first["out"] == plain["out"]


@pytest.mark.parametrize("content", [
    b"", b"not marshal at all", marshal.dumps(("2.7.18", {})),
    marshal.dumps((sys.version, {"def f(): pass": 7})),
    marshal.dumps((sys.version, {"def __create_fn__(): pass": b"\x00garbage"})),
])
def test_a_damaged_or_foreign_table_is_compiled_afresh(tmp_path: Path, content: bytes) -> None:
    path = table_path(tmp_path, "run")
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    plain = _run(BEHAVIOUR, tmp_path, install=False)
    got = _run(BEHAVIOUR, tmp_path)
    assert got["out"] == plain["out"]
    assert isinstance(got["stats"], dict) and got["stats"]["reused"] == 0
    version, codes = marshal.loads(path.read_bytes())    # saved whole again
    assert version == sys.version
    made = {k: v for k, v in codes.items() if k != "def __create_fn__(): pass"}
    assert len(made) == got["stats"]["compiled"]
    assert all(isinstance(marshal.loads(v), types.CodeType) for v in made.values())


def test_a_python_whose_dataclasses_do_not_exec_is_left_alone() -> None:
    def make(source: str) -> types.ModuleType:
        module = types.ModuleType("fake")
        exec(source, module.__dict__)
        return module
    assert not _calls_exec(make("def process(cls):\n    return cls\n"))
    assert _calls_exec(make("def create(txt):\n    exec(txt, {}, {})\n"))
    assert _calls_exec(make("class Builder:\n    def add(self, txt):\n        exec(txt)\n"))


def test_the_command_line_fills_the_table_once(tmp_path: Path) -> None:
    """A first bare run saves what it compiled; the next compiles nothing, so it leaves
    the file as it was."""
    kernel = build_asm("PASS")
    env = {**os.environ, "PRIVLAB_CACHE": str(tmp_path)}
    cmd = [sys.executable, "-m", "privlab", "run", "--quiet", "--bios", "none", "--kernel",
           str(kernel)]
    subprocess.run(cmd, env=env, check=True)
    path = table_path(tmp_path, "run")
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]   # run's alone
    before = path.stat().st_mtime_ns
    _, codes = marshal.loads(path.read_bytes())
    assert len(codes) > 50          # the records of a run, their methods
    subprocess.run(cmd, env=env, check=True)
    assert path.stat().st_mtime_ns == before


def test_each_build_of_a_python_keeps_a_table_of_its_own(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Two builds of one Python version sharing a cache (a system's and pyenv's 3.11)
    would otherwise throw each other's table away at every run."""
    here = table_path(tmp_path, "run")
    assert sys.implementation.cache_tag in here.name
    monkeypatch.setattr(sys, "version", sys.version + " [another build]")
    there = table_path(tmp_path, "run")
    assert there != here and there.parent == here.parent


def test_each_command_keeps_a_table_of_its_own(tmp_path: Path) -> None:
    """`run` defines a few hundred of the records' methods; reading every command's
    texts cost it 0.4-1.8 ms."""
    names = {c: table_path(tmp_path, c).name for c in ("run", "trace", "", "../x", "run x")}
    assert names["run"].startswith("dataclass-methods.run.")
    assert names["trace"].startswith("dataclass-methods.trace.")
    # no word a user can type names a file outside the table's directory
    assert names[""] == names["../x"] == names["run x"]
    assert names[""].startswith("dataclass-methods.other.")
