"""`Protocol` for the interfaces the modules of a run define, without the typing module.

A protocol says what a device needs of what it is given (harness/devices/base.py's
`HartLines`, virtqueue.py's `GuestRam`): the type checker holds every caller to it, and
at run time nobody asks. Importing `typing` to define them is 2 ms of every start, so
a plain base class stands in for `typing.Protocol` at run time (the type checker sees
the real one). Modules the command line loads only for some commands use typing's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol as Protocol
else:
    class Protocol:
        """typing.Protocol, at run time: documentation only."""

        __slots__ = ()

__all__ = ["Protocol"]
