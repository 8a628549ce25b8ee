"""Snapshots and reverse execution in the Python API: going back to a moment
leaves the machine exactly as the forward run had it there — registers, CSRs, RAM,
console, event log — on a real kernel run with timer interrupts and the disk."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pytest

from privlab.abi.csr import Priv
from privlab.api import Session
from privlab.api.timetravel import Position
from privlab.build.images import Images
from privlab.devices.disk import Drive
from privlab.errors import BadInput
from privlab.machine import Stop
from privlab.machine.events import TrapEvent


@dataclass(frozen=True)
class State:
    position: Position
    pc: int
    priv: Priv
    x: tuple[int, ...]
    csrs: tuple[tuple[object, int], ...]
    mtime: int
    ram: str
    console: str
    events: tuple[str, ...]


def state(s: Session) -> State:
    m = s.machine
    return State(s.position, s.pc, s.priv, s.regs().x, s.csrs().values, m.hart.mtime(),
                 hashlib.sha256(m.memory.host[:]).hexdigest(), s.console,
                 tuple(repr(e.to_json()) for e in s.events))


def boot(images: Images, program: str, *args: str) -> Session:
    return Session.boot(program, list(args), images=images)


def test_going_back_to_an_instruction_gives_the_forward_runs_state(images: Images) -> None:
    """fstests: the disk (virtio interrupts) and the timer (M and S timer interrupts
    at 12.8M, 22.8M and 32.9M instructions) between the moments compared."""
    targets = (4_000_123, 12_900_000, 22_860_000, 33_000_777)
    fresh = boot(images, "fstests")
    expected = []
    for n in targets:
        fresh.run_until_instret(n)
        expected.append(state(fresh))
    kinds = {(e.interrupt, e.code) for e in fresh.events if isinstance(e, TrapEvent)}
    assert {(True, 7), (True, 5), (True, 9)} <= kinds    # timer M and S, external (disk)
    fresh.close()

    s = boot(images, "fstests")
    s.record(every=1_000_000)
    s.run(max_insns=36_000_000)
    for n, want in reversed(list(zip(targets, expected, strict=True))):
        s.run_back(instret=n)
        assert state(s) == want
    # And forward again from the earliest: the run continues as the first time did.
    s.run_until_instret(targets[-1])
    assert state(s) == expected[-1]
    s.close()


def test_step_back_undoes_each_step_through_an_ecall(images: Images) -> None:
    s = boot(images, "hello")
    s.record(every=100_000)
    s.run_until_syscall("write")
    s.run_back(steps=4)                  # four steps before the trap vector: in U
    assert s.priv == Priv.U
    seen = [state(s)]
    for _ in range(8):                   # through the ecall into the kernel
        assert s.step().stop is Stop.STEP
        seen.append(state(s))
    assert seen[-1].priv == Priv.S and seen[0].priv == Priv.U
    trap = next(i for i, st in enumerate(seen) if st.priv == Priv.S)
    assert s.csr("scause").cause == "user_ecall"
    for want in reversed(seen[:-1]):
        r = s.run_back()
        assert state(s) == want and r.position == want.position
    # Back across the trap: scause, sepc and sstatus.SPP are as they were before it.
    assert s.priv == Priv.U and trap > 0
    s.close()


def test_back_to_the_previous_trap_and_to_an_event(images: Images) -> None:
    s = boot(images, "hello")
    s.record(every=200_000)
    s.run()
    log = s.events
    last_trap = max(e.seq for e in log if isinstance(e, TrapEvent))
    r = s.run_back(trap=True)
    assert r.event is not None and r.event.seq == last_trap
    assert s.position == Position(log[last_trap].instret, last_trap + 1)
    assert s.pc == log[last_trap].vector
    r2 = s.run_back(trap=True)           # from right after a trap: the one before it
    assert r2.event is not None and r2.event.seq < last_trap

    fresh = boot(images, "hello")
    fresh.run_until_event(20)
    s.run_back(event=20)
    assert state(s) == state(fresh)
    fresh.close()
    s.close()


def test_snapshot_and_restore_replay_the_same_future(images: Images) -> None:
    s = boot(images, "hello")
    s.run_until_syscall("write")
    snap = s.snapshot()
    at_snap = state(s)
    s.run()
    end = state(s)
    assert "Hello, world!" in s.console
    s.restore(snap)
    assert state(s) == at_snap
    assert len(s.syscalls) == len([c for c in s.flow.syscalls])   # the flow is rebuilt
    s.run()
    assert state(s) == end
    s.close()


def test_a_snapshot_keeps_only_pages_not_seen_before(images: Images) -> None:
    s = boot(images, "hello")
    s.run(max_insns=1_000_000)
    store = s._store()
    s.snapshot()
    first = len(store.pages)
    s.run(max_insns=10_000)
    snap = s.snapshot()
    assert len(store.pages) - first < 64          # a few pages changed, not all of RAM
    assert len(snap.ram) == 8 * (s.machine.memory.ram_size // 4096)
    s.close()


def test_bad_input_to_run_back(images: Images) -> None:
    s = boot(images, "hello")
    with pytest.raises(BadInput, match=r"^no history to go back in: call record\(\) "):
        s.run_back()
    s.record()
    s.run(max_insns=50_000)
    with pytest.raises(BadInput, match=r"^no event #999999 so far"):
        s.run_back(event=999_999)
    with pytest.raises(BadInput, match=r"^instruction 60000 is ahead of now"):
        s.run_back(instret=60_000)
    with pytest.raises(BadInput, match=r"^run_back takes one of"):
        s.run_back(steps=1, trap=True)
    with pytest.raises(BadInput, match=r"^cannot step back 0 instructions"):
        s.run_back(steps=0)
    s.close()


def test_a_read_write_disk_cannot_be_rewound(images: Images, tmp_path) -> None:  # type: ignore[no-untyped-def]
    img = tmp_path / "disk.img"
    img.write_bytes(bytes(4096))
    s = Session.boot("hello", images=images, drive=Drive(img))
    with pytest.raises(BadInput, match=r"disk.img: a disk opened read-write cannot be rewound"):
        s.snapshot()
    s.close()


def test_run_until_instret_is_exact_far_ahead_in_a_loop(images: Images) -> None:
    """Past Machine's full-speed approach (2048 short of the target), a loop's block
    re-entered on the core's fast path used to run past the target."""
    s = boot(images, "hello")
    for n in (3_000, 10_001, 250_007, 1_000_003):
        assert s.run_until_instret(n).stop is Stop.EVENT
        assert s.instret == n
    s.close()


def test_changing_the_machine_voids_the_recorded_future(images: Images) -> None:
    s = boot(images, "hello")
    h = s.record(every=20_000)
    s.run(max_insns=200_000)
    s.run_back(instret=100_000)
    assert any(snap.instret > 100_000 for snap in h.snaps)
    s.set_reg("a0", 0x1234)
    assert all(snap.instret <= 100_000 for snap in h.snaps)
    assert s.reg("a0") == 0x1234
    s.run_back(instret=60_000)                # going back still works
    assert s.instret == 60_000
    s.close()


def test_a_snapshot_keeps_pmp_triggers_sstc_and_counter_state(images: Images) -> None:
    """The core keeps PMP entries, the debug triggers, stimecmp, menvcfg and the hpm
    counters itself (not Unicorn): restore() puts every one back as it was."""
    from privlab.abi.csr import Csr

    s = Session.boot("hello", images=images, bundled_disk=False)
    s.run_until_syscall("write")
    names = [Csr.PMPADDR0, Csr.PMPCFG0, Csr.TSELECT, Csr.TDATA2, Csr.STIMECMP, Csr.MENVCFG,
             Csr.MHPMCOUNTER3, Csr.MHPMEVENT3, Csr.MCOUNTINHIBIT]
    before = {n: s.csr(n).value for n in names}
    snap = s.snapshot()
    for n in names:
        s.set_csr(n, before[n] ^ 0x10)
    s.set_csr(Csr.TSELECT, 1)
    s.set_csr(Csr.TDATA2, 0x1234)
    assert s.csr(Csr.TDATA2).value == 0x1234
    s.set_csr(Csr.TSELECT, 0)
    s.restore(snap)
    assert {n: s.csr(n).value for n in names} == before
    s.set_csr(Csr.TSELECT, 1)
    assert s.csr(Csr.TDATA2).value == 0   # trigger 1's tdata2 came back too
    s.close()
