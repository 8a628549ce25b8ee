"""Snapshots of a whole machine, for going back in time (issue 16).

A `MachineSnapshot` holds everything that decides a stopped machine's future, so that
restoring it and running on does exactly what the machine did from there the first
time:

- Unicorn's CPU context (integer registers, pc, privilege, the CSRs Unicorn keeps);
- the native core's state (harness/native/snapshot.c: the shared block with instret,
  idle time, mtimecmp and the virtual mip; the virtual CSRs; the interrupt-deadline
  and trap-storm bookkeeping), not its caches, which restoring invalidates;
- RAM, as one 64-bit hash per 4 KiB page: page contents live once, by hash, in the
  machine's `PageStore`, so a snapshot costs 8 bytes a page plus the pages that changed
  since any earlier snapshot, never a copy of all of RAM;
- the devices' registers and queues (PLIC, UART and its scripted input, virtio), the
  disk's overlay of written sectors, the console so far, the event log's position, and
  the run loop's pending halt.

Snapshots are taken and restored between runs only. A disk opened read-write cannot be
rewound (its writes are in the file): `snapshot()` refuses it with BadInput.
"""

from __future__ import annotations

import copy
import ctypes
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.errors import BadInput

if TYPE_CHECKING:
    from harness.machine.machine import Machine

__all__ = ["MachineSnapshot", "PageStore", "restore_machine", "take_snapshot"]

PAGE = 4096
_PLAIN = (int, bool, str, bytes, float, type(None))


def _is_plain(v: object) -> bool:
    if isinstance(v, _PLAIN) or isinstance(v, bytearray):
        return True
    if isinstance(v, list | tuple):
        return all(_is_plain(x) for x in v)
    if isinstance(v, dict):
        return all(_is_plain(k) and _is_plain(x) for k, x in v.items())
    return False


def _plain_state(obj: object) -> dict[str, Any]:
    """The attributes of `obj` that are data (numbers, bytes, lists of them), copied;
    references to other objects (the hart, the PLIC, callbacks) are not state."""
    return {k: copy.deepcopy(v) for k, v in vars(obj).items() if _is_plain(v)}


def _set_state(obj: object, state: dict[str, Any]) -> None:
    for k, v in state.items():
        setattr(obj, k, copy.deepcopy(v))


class PageStore:
    """RAM page contents by hash, shared by every snapshot of one machine."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.npages = machine.memory.ram_size // PAGE
        self.pages: dict[int, bytes] = {}
        self._lib = machine.hart._lib
        self._known: ctypes.Array[ctypes.c_uint64] | None = None   # hashes at last look
        self._idx = (ctypes.c_uint32 * self.npages)()

    def hashes(self) -> ctypes.Array[ctypes.c_uint64]:
        out = (ctypes.c_uint64 * self.npages)()
        self._lib.ram_page_hashes(ctypes.c_void_p(self.machine.memory.host_address),
                                  self.npages, out)
        return out

    def _diff(self, a: ctypes.Array[ctypes.c_uint64],
              b: ctypes.Array[ctypes.c_uint64]) -> list[int]:
        n = self._lib.ram_hash_diff(a, b, self.npages, self._idx)
        return list(self._idx[:n])

    def capture(self) -> bytes:
        """The page hashes of RAM now, storing each page not seen before."""
        now = self.hashes()
        host = self.machine.memory.host
        changed = range(self.npages) if self._known is None else self._diff(now, self._known)
        for i in changed:
            h = now[i]
            if h not in self.pages:
                self.pages[h] = bytes(host[i * PAGE:(i + 1) * PAGE])
        self._known = now
        return bytes(now)

    def restore(self, hashes: bytes) -> int:
        """Make RAM hold the pages `hashes` names; returns how many pages were written."""
        target = (ctypes.c_uint64 * self.npages).from_buffer_copy(hashes)
        now = self.hashes()
        host = self.machine.memory.host
        changed = self._diff(now, target)
        for i in changed:
            host[i * PAGE:(i + 1) * PAGE] = self.pages[target[i]]
        self._known = target
        return len(changed)

    @property
    def nbytes(self) -> int:
        return len(self.pages) * PAGE


@dataclass
class MachineSnapshot:
    instret: int
    pc: int
    cpu: Any                      # a unicorn UcContext
    native: bytes
    ram: bytes                    # one 64-bit hash per page
    devices: list[dict[str, Any]]
    console: bytes
    console_truncated: bool
    events: int                   # the event log's length
    event_chunks: tuple[list[bytes], list[int]]
    halted: tuple[int, str] | None
    waiting_for_input: bool
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        """What this snapshot holds of its own (not the shared page store)."""
        return len(self.native) + len(self.ram) + len(self.console) + 4096


def _stateful(machine: Machine) -> list[object]:
    """Every object whose data is device state, in a fixed order."""
    objs: list[object] = []
    for dev in machine.devices:
        objs.append(dev)
        for q in getattr(dev, "queues", ()):
            objs.append(q)
    objs.append(machine.uart.source)
    if machine.disk is not None:
        objs.append(machine.disk)
    return objs


def take_snapshot(machine: Machine, store: PageStore) -> MachineSnapshot:
    if machine.disk is not None and not machine.disk.snapshot:
        raise BadInput(f"{machine.disk.path}: a disk opened read-write cannot be rewound; "
                       "use --drive IMAGE,snapshot=on to go back in time")
    machine._drain()
    lib = machine.hart._lib
    buf = ctypes.create_string_buffer(lib.hart_snap_size())
    lib.hart_snap_save(machine.hart._h, buf)
    log = machine.events
    return MachineSnapshot(
        instret=int(machine.hart.state.instret), pc=machine.hart.pc,
        cpu=machine.uc.context_save(), native=buf.raw, ram=store.capture(),
        devices=[_plain_state(o) for o in _stateful(machine)],
        console=bytes(machine.console.data), console_truncated=machine.console.truncated,
        events=len(log), event_chunks=(list(log._chunks), list(log._starts)),
        halted=machine._halted, waiting_for_input=machine._waiting_for_input)


def restore_machine(machine: Machine, store: PageStore, snap: MachineSnapshot) -> None:
    lib = machine.hart._lib
    store.restore(snap.ram)
    machine.uc.context_restore(snap.cpu)
    lib.hart_snap_restore(machine.hart._h, ctypes.create_string_buffer(snap.native,
                                                                       len(snap.native)))
    machine._ran_since_step = True
    for obj, state in zip(_stateful(machine), snap.devices, strict=True):
        _set_state(obj, state)
    machine.console.data[:] = snap.console
    machine.console.truncated = snap.console_truncated
    machine.events.restore_position(snap.events, *snap.event_chunks)
    machine._halted = snap.halted
    machine._waiting_for_input = snap.waiting_for_input
    machine._device_error = None
    machine.hart.sync()
