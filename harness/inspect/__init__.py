"""Inspectors: rich renderables, one class per view, styled from one theme.

    CsrPanel          CSR fields, changes since an earlier snapshot highlighted
    TrapTimeline      the trap flow with U | S | M lanes, nesting and decoded calls
    SyscallTable      system calls with decoded arguments and results
    SyscallSummary    calls made and failed, by name
    PageTableTree     a whole Sv39/Sv32 table with ranges merged
    WalkView          one translation, level by level, and why it faults
    ProcessTableView  the kernel's proc[] (DWARF mirror)
    OpenFilesView     a process's open descriptors (DWARF mirror of struct file)
    TrapFrameView     a process's struct trapframe (DWARF mirror)
    RegisterView      x0..x31 by ABI name
    RoundTripView     user registers at a trap beside those at its sret, changes marked
    Disassembly       instructions around a pc (capstone)
    DiskSummary       a file-system image's regions (harness/fs)
    DiskTree          its files, ls -lR-like
    InodeView         one inode's fields and blocks


The names load on first use (PEP 562): `privlab trace` needs the snapshots of
state.py, not capstone's disassembler, the disk views or the page-table tree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazyload import lazy_exports

if TYPE_CHECKING:
    from ..theme import PALETTE, STYLES, THEME, make_console
    from .calltable import SyscallSummary, SyscallTable
    from .csrs import CsrPanel
    from .disasm import Disassembly, Instruction, disassemble_around
    from .diskview import DiskSummary, DiskTree, InodeView
    from .pagetable import PageTableTree, WalkView
    from .procs import OpenFilesView, ProcessTableView, TrapFrameView
    from .regview import RegisterView
    from .roundtrip import RoundTripView
    from .state import CsrSnapshot, CsrValue, RegisterSnapshot
    from .timeline import TrapTimeline

__all__ = [
    "PALETTE",
    "STYLES",
    "THEME",
    "CsrPanel",
    "CsrSnapshot",
    "CsrValue",
    "Disassembly",
    "DiskSummary",
    "DiskTree",
    "InodeView",
    "Instruction",
    "OpenFilesView",
    "PageTableTree",
    "ProcessTableView",
    "RegisterSnapshot",
    "RegisterView",
    "RoundTripView",
    "SyscallSummary",
    "SyscallTable",
    "TrapFrameView",
    "TrapTimeline",
    "WalkView",
    "disassemble_around",
    "make_console",
]

_HOME = {
    **dict.fromkeys(("SyscallSummary", "SyscallTable"), "calltable"),
    "CsrPanel": "csrs",
    **dict.fromkeys(("Disassembly", "Instruction", "disassemble_around"), "disasm"),
    **dict.fromkeys(("DiskSummary", "DiskTree", "InodeView"), "diskview"),
    **dict.fromkeys(("PageTableTree", "WalkView"), "pagetable"),
    **dict.fromkeys(("OpenFilesView", "ProcessTableView", "TrapFrameView"), "procs"),
    "RegisterView": "regview",
    "RoundTripView": "roundtrip",
    **dict.fromkeys(("CsrSnapshot", "CsrValue", "RegisterSnapshot"), "state"),
    "TrapTimeline": "timeline",
}


def __getattr__(name: str) -> object:
    if name in ("PALETTE", "STYLES", "THEME", "make_console"):   # the theme's, one level up
        from .. import theme

        value = getattr(theme, name)
        globals()[name] = value
        return value
    return _lazy(name)


_lazy = lazy_exports(__name__, globals(), _HOME)
