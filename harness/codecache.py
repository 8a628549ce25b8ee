"""Compiled dataclass methods, kept from one run of the command line to the next.

`@dataclass` writes each class's methods (`__init__`, `__repr__`, `__eq__`, and a frozen
class's `__setattr__`, `__delattr__` and `__hash__`) as Python source and runs it with
`exec` when the class is defined. Compiling that source is three quarters of what
defining a record costs, and privlab defines its records at every start: on CPython
3.11, 10 ms of a bare run, 14 ms of `run --user hello` and 31 ms of `trace`, more than
any other part of start-up but the guest's own run. The text is the same every time.

`install` gives the dataclasses module an `exec` of its own (a module global shadows
the builtin) that looks the text up in a table of code objects compiled by earlier
runs, compiles only text it has not seen, and at exit saves the table if it grew. A
code object is what `compile` makes of the text, the same whichever run made it; the
table is marshalled as `.pyc` files are, in a file named by the interpreter's cache tag
and version and holding its full version, so another Python never uses it. Like the
other analyses in privlab's cache (build/cache.py), the file is trusted as the user's own.

Only the command line installs it (harness/entry.py); imported as a library, privlab
leaves the dataclasses module alone.
"""

from __future__ import annotations

import atexit
import marshal
import os
import sys
from pathlib import Path
from types import CodeType, FunctionType, ModuleType

from .digest import sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["LIMIT", "CodeTable", "install", "table_path"]

LIMIT = 4096
"""Texts a table keeps at most: privlab's commands define a few hundred methods."""


def table_path(root: Path, command: str) -> Path:
    """The table that the command line's `command` (its first word) keeps under the
    cache `root`, for this interpreter. One a command: each defines its own part of
    privlab's records (`run` neither the inspectors' nor the grader's), and a run read
    the whole table of every command's, 0.4-1.8 ms for 760 texts. One a build of
    Python, named by its cache tag and its full version: two builds of one version
    sharing a cache (a system's and pyenv's 3.11, say) would otherwise throw each
    other's table away at every run."""
    word = command if command.replace("-", "").isalpha() else "other"
    build = sha256(sys.version.encode()).hexdigest()[:12]
    tag = sys.implementation.cache_tag
    return root / "code" / f"dataclass-methods.{word}.{tag}.{build}.marshal"


class CodeTable:
    """Source text -> its code object, marshalled (each is unmarshalled when a class
    needs it: a command reads the whole table, and uses a part), read from `path` and
    saved back to it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.codes = self._read(path)
        self.compiled = 0            # texts this run had to compile
        self.reused = 0              # and those it found compiled

    @staticmethod
    def _read(path: Path) -> dict[str, bytes]:
        try:
            version, codes = marshal.loads(path.read_bytes())
        except (OSError, EOFError, ValueError, TypeError):
            return {}
        if version != sys.version or not isinstance(codes, dict) or not all(
                type(k) is str and type(c) is bytes for k, c in codes.items()):
            return {}
        return codes

    def exec(self, source: Any, globals: dict[str, Any] | None = None,
             locals: dict[str, Any] | None = None) -> None:
        """`exec` as the dataclasses module calls it, a text compiled at most once."""
        if isinstance(source, str):
            source = self._code(source)
        exec(source, globals, locals)

    def _code(self, source: str) -> CodeType:
        blob = self.codes.get(source)
        if blob is not None:
            try:
                code = marshal.loads(blob)
            except (EOFError, ValueError, TypeError):
                code = None
            if type(code) is CodeType:
                self.reused += 1
                return code
        # dont_inherit: compiled as dataclasses.py's own exec compiles, without this
        # module's `from __future__ import annotations`
        code = compile(source, "<string>", "exec", dont_inherit=True)
        self.compiled += 1
        if len(self.codes) < LIMIT or source in self.codes:
            self.codes[source] = marshal.dumps(code)
        return code

    def save(self) -> None:
        """Write the table if this run compiled something, whole or not at all (runs
        that save at once: the last one's table stays, the others' texts are compiled
        again some day)."""
        if not self.compiled:
            return
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_bytes(marshal.dumps((sys.version, self.codes)))
            tmp.replace(self.path)
        except OSError:
            tmp.unlink(missing_ok=True)


def _calls_exec(module: ModuleType) -> bool:
    """Whether the module's functions (or its classes' methods) name `exec` as a global:
    then a module global of that name is what they call."""
    def names(obj: object) -> tuple[str, ...]:
        return obj.__code__.co_names if isinstance(obj, FunctionType) else ()
    for obj in vars(module).values():
        if isinstance(obj, type) and obj.__module__ == module.__name__:
            if any("exec" in names(m) for m in vars(obj).values()):
                return True
        elif "exec" in names(obj):
            return True
    return False


def install(root: Path, command: str) -> CodeTable | None:
    """Compile dataclass methods through the table of `command` kept under the cache
    `root`; None (nothing changed) on a Python whose dataclasses module does not call
    `exec`."""
    import dataclasses

    if not _calls_exec(dataclasses):
        return None
    table = CodeTable(table_path(root, command))
    dataclasses.exec = table.exec  # type: ignore[attr-defined]
    atexit.register(table.save)
    return table
