"""The privlab API for notebooks, tests and graders: `Session` (docs/inspect/api.md).

    from harness.api import Session
    s = Session.boot("hello")
    s.run_until_syscall("write")
"""

from harness.api.memory import DEBUGGER, MemoryAccess
from harness.api.points import POINT_HELP, Point, parse_point, run_to
from harness.api.session import Handle, Session

__all__ = ["DEBUGGER", "POINT_HELP", "Handle", "MemoryAccess", "Point", "Session", "parse_point",
           "run_to"]
