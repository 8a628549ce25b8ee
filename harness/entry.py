"""The `privlab` command's first code (the console script and `python -m privlab`).

Importing the command line takes a few tenths of a second, and a Ctrl-C then would
print Python's KeyboardInterrupt traceback: until harness/cli/main.py's own handling
(harness/sigint.py) is in force, SIGINT ends the process at once with the same one
line and status 130. Nothing before that handler imports more than the standard
library's contextlib, gc, os, signal and types, so only the interpreter's own start-up
comes before it.

The command line also leaves out gettext (and the locale module it imports, 1.5 ms of
every command): argparse imports it to translate its own few words ("usage:",
"options", its error messages) through a catalogue named messages.mo, which Python
does not ship. privlab's command line is English throughout, its help and its
errors, so argparse gets the two functions with the untranslated answers gettext
gives when it finds no catalogue; any other module importing gettext gets the real one.

And it defers two standard modules that a plain run imports and never uses, each
loaded whole on first use:
- `inspect` (4-5 ms of a 70 ms start: it brings ast, dis and tokenize). The dataclasses
  module imports it for one purpose, to write a `__doc__` for a record that has none,
  and every privlab record has one (tests/test_records.py). Rich, pytest and a
  traceback's formatting use it.
- `urllib.parse` (1.5-2 ms: it brings ipaddress). pathlib imports one function of it,
  which only `Path.as_uri` calls. (Nothing has loaded pathlib before this runs: not a
  wheel's install, nor the checkout's editable one, whose import finder
  packaging/privlab_backend.py writes to load nothing.)
"""

from __future__ import annotations

import contextlib
import gc
import os
import types

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal
    from collections.abc import Callable
else:
    import _signal as signal  # as harness/sigint.py does, and why

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
        if name == "__path__":      # `from M import x` asks whether M is a package
            raise AttributeError(name)
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


def _forwarder(stand_in: _Deferred, name: str) -> Callable[..., object]:
    """A function that a module can import from `stand_in` without loading the real
    module: the first call loads it, and every call goes to the real function."""
    def forward(*args: object, **kwargs: object) -> object:
        fn = stand_in.__dict__[name]
        if fn is forward:           # the real module's names replace it once loaded
            fn = stand_in.__getattr__(name)
        return fn(*args, **kwargs)
    forward.__name__ = forward.__qualname__ = name
    return forward


def _defer_url_parsing() -> None:
    """`import pathlib` without urllib.parse, until a path is written as a URI."""
    import sys

    if "urllib.parse" in sys.modules or "pathlib" in sys.modules:
        return
    import urllib

    stand_in = _Deferred("urllib.parse")
    stand_in.__dict__["quote_from_bytes"] = _forwarder(stand_in, "quote_from_bytes")
    sys.modules["urllib.parse"] = stand_in
    # `import urllib.parse` finds the stand-in in sys.modules and reads the package's
    # attribute; loading the real module sets that attribute again
    urllib.parse = stand_in


def _untranslated_argparse() -> None:
    """Import argparse with gettext's two functions as they answer without a catalogue."""
    import sys

    if "argparse" in sys.modules or "gettext" in sys.modules:
        return
    stand_in = types.ModuleType("gettext")
    stand_in.gettext = lambda message: message           # type: ignore[attr-defined]
    stand_in.ngettext = (                                 # type: ignore[attr-defined]
        lambda singular, plural, n: singular if n == 1 else plural)
    sys.modules["gettext"] = stand_in
    try:
        import argparse  # noqa: F401
    finally:
        del sys.modules["gettext"]      # whatever imports it next gets the real module


def _command() -> str:
    """The command line's first word ("" if none): which command this start is for."""
    import sys

    return sys.argv[1] if len(sys.argv) > 1 else ""


def _compile_dataclass_methods_once() -> None:
    """The records' generated methods come compiled from the command's table in the
    cache (harness/codecache.py): compiling them was the largest part of start-up."""
    from .build.cache import cache_root
    from .codecache import install

    with contextlib.suppress(OSError):      # no cache directory: compile as before
        install(cache_root(), _command())


BOOTS = frozenset({"run", "trace", "inspect", "step", "pagetable", "translate", "qemu", "tour"})
"""The commands that boot a machine in this process (lab and grade run theirs in
workers): for them the native core is loaded while the rest is imported."""


def _preload_core() -> None:
    if _command() in BOOTS:
        from .native.preload import preload_core

        preload_core()


def main() -> int:
    signal.signal(signal.SIGINT, _interrupted)
    gc.disable()
    try:
        _defer_inspect()
        _defer_url_parsing()
        _compile_dataclass_methods_once()
        _preload_core()
        _untranslated_argparse()
        from .cli.main import main as command_line
    finally:
        gc.freeze()
        gc.enable()
    return command_line()
