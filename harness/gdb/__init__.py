"""GDB remote serial protocol stub: `privlab run --gdb [HOST:]PORT [--wait]`.

    codec    packet framing, checksums, escaping
    target   the register file and the target description XML (from privlab/abi/csr.py)
    stub     one method per packet type
    server   the socket, sessions, Ctrl-C, vanishing clients
    halt     stopping a running machine safely from another thread
    watch    watchpoints (the native core's watch slots, stopping before the access)
    access   guest memory as the debugger sees it
    monitor  `monitor` commands: traps, CSRs, page tables, physical memory
"""

from .codec import Decoder, encode
from .server import Address, GdbServer, parse_address
from .stub import SessionEnd, Stub
from .target import TargetDescription

__all__ = ["Address", "Decoder", "GdbServer", "SessionEnd", "Stub", "TargetDescription",
           "encode", "parse_address"]
