"""Kernel mirrors: the process table and a process's trap frame.

Both read the kernel's own structures with layouts from its DWARF
(harness/kernelinfo): when a student adds or reorders fields of `struct proc` or
`struct trapframe`, the views still read the right bytes. The process table shows a
fixed set of columns (those of _SHOWN that the struct has); the trap frame, every
field it has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from ..abi.fs_layout import T_DEVICE, T_DIR, T_FILE
from ..kernelinfo.dwarf_types import StructValue
from ..kernelinfo.mirrors import OpenFile, Process, ProcessTable
from ..kernelinfo.symbols import Location
from ..trace.capture import format_value

__all__ = ["OpenFilesView", "ProcessTableView", "TrapFrameView"]

_SHOWN = ("pagetable", "trapframe", "kstack", "brk", "xstatus")
_PER_THREAD = ("trapframe", "xstatus")


_SYNC_KINDS = (("mutex", "mutex"), ("sem", "semaphore"), ("condvar", "condvar"))


def _sync_objects(p: Process) -> list[tuple[str, int, StructValue]]:
    """The sync objects in use of the process whose main thread is p (kernel/sync.c):
    (kind, index, object)."""
    if not p.value.type.has("sync"):
        return []
    sync = p.value["sync"]
    found = []
    for member, kind in _SYNC_KINDS:
        objs = sync[member] if isinstance(sync, StructValue) and sync.type.has(member) else []
        for i, obj in enumerate(objs if isinstance(objs, list) else []):
            if isinstance(obj, StructValue) and obj.get_int("used"):
                found.append((kind, i, obj))
    return found


def _waits(procs: Sequence[Process], name: Callable[[int], str]) -> dict[int, str]:
    """What each sleeping process waits on, by slot, its chan named by `name`."""
    waits = {}
    for p in procs:
        chan = p.value.get_int("chan") if p.value.type.has("chan") else 0
        if p.state == "SLEEPING" and chan:
            waits[p.slot] = name(chan)
    return waits


def _waits_and_holds(procs: Sequence[Process], name: Callable[[int], str] | None
                     ) -> tuple[dict[int, str], dict[int, str]]:
    """For the threads of a kernel with threads (struct proc has `group`): what each
    sleeping one waits on, by slot, and the mutexes each holds, by slot."""
    labels: dict[int, str] = {}          # address -> what it is, for chan
    holds: dict[int, list[str]] = {}
    by_address = {p.address: p for p in procs}
    for p in procs:
        if p.value.get_int("group") == p.address:        # a main thread: the process
            labels[p.address] = "a child's exit"        # waitpid sleeps on it
            for kind, i, obj in _sync_objects(p):
                labels[obj.address] = f"{kind} {i}"
                owner = obj.get_int("owner") if obj.type.has("owner") else 0
                if owner in by_address:
                    holds.setdefault(by_address[owner].slot, []).append(f"{kind} {i}")
    for p in procs:
        if p.value.get_int("group") != p.address:
            labels[p.address] = f"thread {p.value.get_int('tid')}"   # waittid
    waits = {}
    for p in procs:
        chan = p.value.get_int("chan")
        if p.state == "SLEEPING" and chan:
            waits[p.slot] = labels.get(chan) or (name(chan) if name else f"{chan:#x}")
    return waits, {slot: ", ".join(names) for slot, names in holds.items()}


class ProcessTableView:
    """The slots of `proc[]` in use; ▶ marks cpu.proc, the running thread. With a
    kernel that has threads, a tid column, what each sleeping thread waits on (a
    mutex, semaphore, condition variable, thread, child) and the mutexes it holds.
    With `channels` (chan -> its name: harness/cli/diagnose.py), what each sleeping
    process waits on, for any kernel whose struct proc has `chan`."""

    def __init__(self, table: ProcessTable, title: str | None = "Processes",
                 channels: Callable[[int], str] | None = None) -> None:
        self.table = table
        self.title = title
        self.channels = channels

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        procs = self.table.processes
        extra = [n for n in _SHOWN if procs and procs[0].value.type.has(n)]
        threads = bool(procs) and all(procs[0].value.type.has(n)
                                      for n in ("tid", "group", "chan"))
        if threads:
            waits, holds = _waits_and_holds(procs, self.channels)
        else:
            waits = _waits(procs, self.channels) if self.channels else {}
            holds = {}
        table = Table(box=None, padding=(0, 1), header_style="muted",
                      title=Text(self.title, "heading") if self.title else None,
                      title_justify="left")
        ids = ("slot", "pid", "tid") if threads else ("slot", "pid")
        sync_cols: tuple[str, ...] = ()
        if threads and (waits or holds):
            sync_cols = ("waits on", "holds")
            # room for them: the columns a process's threads share go
            extra = [n for n in extra if n in _PER_THREAD]
        elif waits:
            sync_cols = ("waits on",)
        for col in ("", *ids, "state", "name", "parent", *extra, *sync_cols):
            table.add_column(col, no_wrap=True, justify="right"
                             if col in ("slot", "pid", "tid", "parent") else "left")
        for p in procs:
            cur = p.slot == self.table.current
            cells = ["▶" if cur else "", str(p.slot), str(p.pid)]
            if threads:
                cells.append(str(p.value.get_int("tid")))
            cells += [p.state, p.name, str(p.parent_pid) if p.parent_pid is not None else "-"]
            for n in extra:
                v = p.value[n]
                cells.append(f"{v:#x}" if isinstance(v, int) and n != "xstatus"
                             else format_value(v))
            if sync_cols:
                cells += [waits.get(p.slot, ""), holds.get(p.slot, "")][:len(sync_cols)]
            table.add_row(*cells, style="heading" if cur else None)
        if not procs:
            yield Text("(no processes yet)", "muted")
            return
        yield table


_INODE_TYPES = {T_DIR: "dir", T_FILE: "file", T_DEVICE: "device"}


class OpenFilesView:
    """A process's descriptors (struct file, kernel/file.c): what each refers to."""

    def __init__(self, files: list[OpenFile]) -> None:
        self.files = files

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if not self.files:
            yield Text("(no open files)", "muted")
            return
        table = Table(box=None, padding=(0, 1), header_style="muted")
        for col in ("fd", "kind", "mode", "ref", "what"):
            table.add_column(col, no_wrap=True, justify="right" if col in ("fd", "ref")
                             else "left")
        for f in self.files:
            mode = ("r" if f.readable else "") + ("w" if f.writable else "") + \
                ("a" if f.append else "")
            if f.kind == "INODE":
                what = (f"inode {f.inum} ({_INODE_TYPES.get(f.inode_type or 0, '?')}, "
                        f"{f.size} bytes), offset {f.offset}")
            elif f.kind == "PIPE":
                what = f"{f.buffered} bytes unread"
            else:
                what = ""
            table.add_row(str(f.fd), f.kind.lower(), mode, str(f.ref), what)
        yield table


class TrapFrameView:
    """struct trapframe, field by field: the kernel's own fields, then the user
    registers uservec saved (four per line)."""

    def __init__(self, frame: StructValue, title: str | None = None,
                 locate: dict[str, Location] | None = None) -> None:
        self.frame = frame
        self.title = title
        self.locate = locate or {}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        title = Text()
        title.append(self.title or "Trap frame", "heading")
        title.append(f"  struct trapframe at {self.frame.address:#x}", "muted")
        yield title
        kernel = [(n, v) for n, v in self.frame if n.startswith("kernel_") or n == "epc"]
        user = [(n, v) for n, v in self.frame if (n, v) not in kernel]
        for n, v in kernel:
            t = Text()
            t.append(f"  {n:<14}", "csr.name")
            t.append(f"{v:#018x}" if isinstance(v, int) else format_value(v), "addr")
            if n in self.locate and self.locate[n].symbol is not None:
                t.append(f"  {self.locate[n]}", "symbol")
            yield t
        grid = Table(box=None, padding=(0, 1), show_header=False)
        for _ in range(4):
            grid.add_column(no_wrap=True)
            grid.add_column(no_wrap=True)
        for i in range(0, len(user), 4):
            row: list[Text | str] = []
            for n, v in user[i:i + 4]:
                row += [Text(n, "csr.name"), Text(f"{v:#018x}" if isinstance(v, int)
                                                  else format_value(v), "addr")]
            grid.add_row(*row)
        yield grid
