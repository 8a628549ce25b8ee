"""The nesting of a trap flow (harness/native/shape.c through Flow): which trap each
xRET returns from, the root, the privilege path and the owner, per hart, and the same
whether a run is shaped at once (Flow.rows) or chunk by chunk as it streams."""

from __future__ import annotations

from fakes import A_SATP, B_SATP, K_SATP, demo_events, log_of, record

from privlab.abi.csr import Priv
from privlab.abi.syscall_table import load_syscall_table
from privlab.machine.events import RECORD, EventLog
from privlab.trace.flow import Flow
from privlab.trace.sbi import load_sbi_names
from privlab.trace.syscalls import call_specs

U, S, M = Priv.U, Priv.S, Priv.M
SPECS = call_specs(load_syscall_table())


def flow_of(records: list[bytes], initial: Priv = Priv.M) -> Flow:
    return Flow(log_of(records), SPECS, 64, load_sbi_names(), initial=initial, start=0)


def nesting(flow: Flow) -> list[tuple[int | None, int | None, str, int]]:
    return [(r.returns_from, r.root, ">".join(p.letter for p in r.path), r.owner)
            for r in flow.rows()]


def two_harts() -> list[bytes]:
    """Hart 0 takes an ecall from U in process A; while it is in S, hart 1 takes one
    from process B, nests an SBI call and returns; then hart 0 returns."""
    return [
        record("trap", U, S, instret=10, code=8, epc=0x100, satp=A_SATP, hart=0),
        record("trap", U, S, instret=11, code=8, epc=0x200, satp=B_SATP, hart=1),
        record("trap", S, M, instret=12, code=9, epc=0x8020_0000, satp=K_SATP, hart=1),
        record("xret", M, S, instret=13, pc=0x8020_0004, satp=K_SATP, hart=1),
        record("trap", S, M, instret=14, code=9, epc=0x8020_0100, satp=K_SATP, hart=0),
        record("xret", M, S, instret=15, pc=0x8020_0104, satp=K_SATP, hart=0),
        record("xret", S, U, instret=16, pc=0x204, satp=B_SATP, hart=1),
        record("xret", S, U, instret=17, pc=0x104, satp=A_SATP, hart=0),
    ]


def test_each_hart_nests_on_its_own_and_keeps_its_roots_owner() -> None:
    # Hart 0 starts (as every hart here) in U: the flow's initial privilege.
    assert nesting(flow_of(two_harts(), initial=U)) == [
        (None, 0, "U>S", A_SATP),
        (None, 1, "U>S", B_SATP),          # hart 1's own nesting, rooted at its trap
        (None, 1, "U>S>M", B_SATP),
        (2, 1, "U>S", B_SATP),             # mret: returns from hart 1's SBI call
        (None, 0, "U>S>M", A_SATP),        # hart 0 again: still A's, root #0
        (4, 0, "U>S", A_SATP),
        (1, 1, "U", B_SATP),               # a return to U belongs to the process entered
        (0, 0, "U", A_SATP),
    ]


def test_an_xret_from_a_level_never_entered_starts_at_its_target() -> None:
    # The flow starts with the hart in M (reset); firmware mrets to S, the kernel
    # srets to U, and only then does the first trap open a nesting.
    rows = nesting(flow_of([
        record("xret", M, S, instret=1, pc=0x8020_0000),
        record("xret", S, U, instret=2, pc=0x1000, satp=A_SATP),
        record("trap", U, S, instret=3, code=8, epc=0x1000, satp=A_SATP),
        record("xret", S, U, instret=4, pc=0x1004, satp=A_SATP),
    ]))
    assert rows == [(None, None, "S", 0), (None, None, "U", A_SATP),
                    (None, 2, "U>S", A_SATP), (2, 2, "U", A_SATP)]


def test_a_trap_from_a_privilege_the_flow_did_not_expect_retops_the_path() -> None:
    # Started in M, the first event is a trap from U: the bottom level becomes U.
    rows = nesting(flow_of([
        record("trap", U, S, instret=1, code=8, epc=0x1000, satp=B_SATP),
        record("trap", S, S, instret=2, code=13, epc=0x8020_0000, satp=K_SATP),
        record("xret", S, S, instret=3, pc=0x8020_0004, satp=K_SATP),
        record("xret", S, U, instret=4, pc=0x1004, satp=B_SATP),
    ]))
    assert rows == [(None, 0, "U>S", B_SATP), (None, 0, "U>S>S", B_SATP),
                    (1, 0, "U>S", B_SATP), (0, 0, "U", B_SATP)]


def test_deep_nesting_grows_past_any_fixed_stack() -> None:
    n = 300                     # S faulting in its own handler, again and again
    events = [record("trap", S, S, instret=i, code=13, epc=0x8020_0000) for i in range(n)]
    events += [record("xret", S, S, instret=n + i, pc=0x8020_0000) for i in range(n)]
    f = flow_of(events, initial=S)
    rows = list(f.rows())
    assert len(rows[n - 1].path) == n + 1
    assert [r.returns_from for r in rows[n:]] == list(range(n - 1, -1, -1))
    assert rows[-1].path == (S,) and f.depth == 0


def test_shaping_chunk_by_chunk_gives_what_shaping_at_once_gives() -> None:
    for records, initial in ((demo_events(), M), (two_harts(), U)):
        whole = flow_of(records, initial)
        want = [(r.returns_from, r.root, r.path, r.owner) for r in whole.rows()]
        streamed = Flow(EventLog(), SPECS, 64, load_sbi_names(), initial=initial, start=0,
                        retain=False)
        got, depths = [], []
        for first in range(0, len(records), 3):
            shaped = streamed.shape(first, b"".join(records[first:first + 3]))
            for i in range(len(shaped.returns)):
                got.append((None if shaped.returns[i] < 0 else shaped.returns[i],
                            None if shaped.roots[i] < 0 else shaped.roots[i],
                            streamed.path(shaped.paths[i]), shaped.owners[i]))
                depths.append(shaped.depths[i])
        assert got == want
        assert streamed.shaped == len(records)
        assert depths[-1] == streamed.depth == whole.depth == (1 if initial is M else 0)
        assert len(records[0]) == RECORD.size
