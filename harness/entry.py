"""The `privlab` command's first code (the console script and `python -m privlab`).

Importing the command line takes a few tenths of a second, and a Ctrl-C then would
print Python's KeyboardInterrupt traceback: until harness/cli/main.py's own handling
(harness/sigint.py) is in force, SIGINT ends the process at once with the same one
line and status 130. Nothing here imports more than the standard library's contextlib,
gc, os, signal and types, so only the interpreter's own start-up comes before it.

The command line also defers the standard `inspect` module (4-5 ms of a 70 ms start:
it brings ast, dis and tokenize). The dataclasses module imports it for one purpose, to
write a `__doc__` for a record that has none, and every privlab record has one
(tests/test_records.py), so a plain run never needs it. It loads, whole, on first use
by anything else (rich, pytest, a traceback's formatting).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import types

__all__ = ["main"]

INTERRUPTED = 130       # harness/errors.py ExitStatus.INTERRUPTED, not imported yet


def _interrupted(signum: int, frame: object) -> None:
    os.write(2, b"\nprivlab: interrupted\n")
    os._exit(INTERRUPTED)


class _Deferred(types.ModuleType):
    """A stand-in for a standard module not loaded yet. The first name looked up in it
    loads the real module, which takes the stand-in's place in sys.modules and lends it
    its names (so the modules that imported the stand-in see the real one's).

    (importlib's LazyLoader would not do: an `import` of a module already in
    sys.modules reads its `__spec__`, and that read alone makes LazyLoader load it.)"""

    def __getattr__(self, name: str) -> object:
        import importlib
        import sys

        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = importlib.import_module(self.__name__)
        self.__dict__.update(real.__dict__)
        return getattr(real, name)


def _defer_inspect() -> None:
    """`import inspect` costs nothing until a name of it is used."""
    import sys

    sys.modules.setdefault("inspect", _Deferred("inspect"))


def _compile_dataclass_methods_once() -> None:
    """The records' generated methods come compiled from the cache (harness/codecache.py):
    compiling them was the largest part of start-up."""
    from .build.cache import cache_root
    from .codecache import install

    with contextlib.suppress(OSError):      # no cache directory: compile as before
        install(cache_root())


def main() -> int:
    signal.signal(signal.SIGINT, _interrupted)
    gc.disable()
    try:
        _defer_inspect()
        _compile_dataclass_methods_once()
        from .cli.main import main as command_line
    finally:
        gc.freeze()
        gc.enable()
    return command_line()
