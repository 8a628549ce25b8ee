"""The `privlab` command's first code (the console script and `python -m privlab`).

Importing the command line takes a few tenths of a second, and a Ctrl-C then would
print Python's KeyboardInterrupt traceback: until harness/cli/main.py's own handling
(harness/sigint.py) is in force, SIGINT ends the process at once with the same one
line and status 130. Nothing here imports more than the standard library's gc, os and
signal, so only the interpreter's own start-up comes before it.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal

__all__ = ["main"]

INTERRUPTED = 130       # harness/errors.py ExitStatus.INTERRUPTED, not imported yet


def _interrupted(signum: int, frame: object) -> None:
    os.write(2, b"\nprivlab: interrupted\n")
    os._exit(INTERRUPTED)


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
        _compile_dataclass_methods_once()
        from .cli.main import main as command_line
    finally:
        gc.freeze()
        gc.enable()
    return command_line()
