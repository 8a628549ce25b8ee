"""The privlab API for notebooks, tests and graders: `Session` (docs/inspect/api.md).

    from privlab.api import Session
    s = Session.boot("hello")
    s.run_until_syscall("write")
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .memaccess import DEBUGGER, MemoryAccess
    from .points import POINT_HELP, Point, parse_point, run_to
    from .session import Handle, Session

__all__ = ["DEBUGGER", "POINT_HELP", "Handle", "MemoryAccess", "Point", "Session", "parse_point",
           "run_to"]

# Each name's module, imported on first use: `privlab.api.points` (the command line's
# --at help) must not load the machine and the inspectors that `Session` needs.
_HOME = {"DEBUGGER": "memory", "MemoryAccess": "memory", "POINT_HELP": "points",
         "Point": "points", "parse_point": "points", "run_to": "points",
         "Handle": "session", "Session": "session"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value
    return value
