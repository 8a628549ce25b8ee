"""The trap flow on an invented run: nesting, syscall pairing across a context switch,
fork's two returns, a fault, filters, and the timeline and syscall views (golden)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from fakes import A_SATP, B_SATP, USERRET_SRET, USERVEC, demo_events, log_of, record
from rich.console import RenderableType

from privlab.abi.csr import Priv
from privlab.abi.syscall_table import load_syscall_table
from privlab.inspect import SyscallSummary, SyscallTable, TrapTimeline
from privlab.trace.flow import Flow, FlowFilter
from privlab.trace.sbi import load_sbi_names
from privlab.trace.syscalls import call_specs

Render = Callable[[RenderableType], str]


@pytest.fixture
def flow() -> Flow:
    f = Flow(log_of(demo_events()), call_specs(load_syscall_table()), 64, load_sbi_names(),
             start=0)
    f.catch_up()
    return f


def lines(text: str) -> list[str]:
    return [x.rstrip() for x in text.splitlines()]


def test_nesting_path_follows_u_s_m_and_back(flow: Flow) -> None:
    paths = ["".join(p.letter for p in r.path) for r in flow.rows(FlowFilter(seq=(1, 6)))]
    assert paths == ["U", "US", "USM", "US", "U"]


def test_each_xret_names_the_trap_it_returns_from(flow: Flow) -> None:
    assert {r.seq: r.returns_from for r in flow.rows() if not r.is_trap} == {
        0: None, 1: None, 4: 3, 5: 2, 7: 6, 9: 8, 11: 10, 14: 13, 15: 12}


def test_write_pairs_its_ecall_with_the_sret_to_pc_plus_4(flow: Flow) -> None:
    write = flow.syscalls[0]
    assert (write.name, write.args[:3], write.ret, write.entry_seq, write.exit_seq) == \
        ("write", (1, 0x3FFFFFDD58, 14), 14, 2, 5)


def test_yield_returns_when_its_process_runs_again_not_at_the_next_sret(flow: Flow) -> None:
    y = next(c for c in flow.syscalls if c.name == "yield")
    assert (y.exit_seq, y.ret, y.outcome) == (11, 0, "returned")


def test_fork_child_return_is_noted_on_the_childs_first_sret(flow: Flow) -> None:
    row = next(r for r in flow.rows() if r.seq == 9)
    assert row.note == "child's return from fork() #6" and row.syscall is None


def test_exit_never_returns(flow: Flow) -> None:
    assert (flow.syscalls[-1].name, flow.syscalls[-1].outcome) == ("exit", "noreturn")


def test_sbi_calls_are_named_from_sbi_h(flow: Flow) -> None:
    assert [r.note for r in flow.rows() if r.is_trap and r.priv_to == Priv.M] == \
        ["sbi DBCN.WRITE", "sbi TIME.SET_TIMER"]


def test_cause_filter_keeps_traps_and_their_returns(flow: Flow) -> None:
    assert [r.seq for r in flow.rows(FlowFilter(causes=frozenset({"user_ecall"})))] == \
        [2, 5, 6, 7, 8, 9, 16]


def test_syscall_filter_keeps_the_whole_nesting(flow: Flow) -> None:
    assert [r.seq for r in flow.rows(FlowFilter(syscalls=frozenset({"write"})))] == [2, 3, 4, 5]


def test_address_space_filter_keeps_the_processes_own_events(flow: Flow) -> None:
    assert [r.seq for r in flow.rows(FlowFilter(owners=frozenset({B_SATP})))] == [9, 10]


def test_ranges_are_half_open(flow: Flow) -> None:
    assert [r.seq for r in flow.rows(FlowFilter(seq=(14, None)))] == [14, 15, 16]
    assert [r.seq for r in flow.rows(FlowFilter(instret=(0, 1000)))] == [0]


def test_timeline_golden(flow: Flow, render: Render) -> None:
    """Every row names who it belongs to: the kernel, or the process of its address
    space (the child from its first return on, the parent again when yield returns)."""
    flow._own(A_SATP, (1, "demo"))
    flow._own(B_SATP, (2, "demo"))
    assert lines(render(TrapTimeline(flow.rows(), 64))) == [
        "   seq    instret  U     S     M     path    event",
        "     0         62  ·     ◀━━━━━●     S       mret  kernel",
        "     1       1000  ◀━━━━━●     ·     U       sret  enter a new address space  pid 1",
        "     2       1100  ●━━━━━▶     ·     U▸S     user_ecall  write(1, 0x3fffffdd58, 14)"
        "  pid 1",
        "     3       1500  ·     ●━━━━━▶     U▸S▸M   supervisor_ecall  sbi DBCN.WRITE  pid 1",
        "     4       1600  ·     ◀━━━━━●     U▸S     mret  → 0  pid 1",
        "     5       1700  ◀━━━━━●     ·     U       sret  → 14  write  pid 1",
        "     6       1800  ●━━━━━▶     ·     U▸S     user_ecall  fork()  pid 1",
        "     7       2500  ◀━━━━━●     ·     U       sret  → 2  fork  pid 1",
        "     8       2600  ●━━━━━▶     ·     U▸S     user_ecall  yield()  pid 1",
        "     9       2900  ◀━━━━━●     ·     U       sret  child's return from fork() #6  pid 2",
        "    10       3000  ●━━━━━▶     ·     U▸S     load_page_fault  address 0x8  pid 2",
        "    11       3400  ◀━━━━━●     ·     U       sret  → 0  yield  pid 1",
        "    12       3500  ●━━━━━▶     ·     U▸S     s_timer  pid 1",
        "    13       3550  ·     ●━━━━━▶     U▸S▸M   supervisor_ecall  sbi TIME.SET_TIMER  pid 1",
        "    14       3600  ·     ◀━━━━━●     U▸S     mret  → 0  pid 1",
        "    15       3700  ◀━━━━━●     ·     U       sret  pid 1",
        "    16       3800  ●━━━━━▶     ·     U▸S     user_ecall  exit(0)  pid 1",
    ]


def test_an_address_space_no_process_names_stands_in_for_its_process(flow: Flow) -> None:
    """Without a process table (a foreign kernel, a trace file) the satp names the
    row's process; rows of no process are the kernel's."""
    who = {r.seq: r.who for r in flow.rows()}
    assert who[0] == "kernel"
    assert who[10] == f"satp {B_SATP:#x}" and who[11] == f"satp {A_SATP:#x}"


def test_timeline_truncates_long_rows_at_the_console_width(flow: Flow, render: Render) -> None:
    flow.syscalls[0].args = (1, 0x3FFFFFDD58, 10**60)
    out = lines(render(TrapTimeline(flow.rows(FlowFilter(seq=(2, 3))), 64)))
    assert len(out[1]) == 100 and out[1].endswith("…")


def test_timeline_limit(flow: Flow, render: Render) -> None:
    assert lines(render(TrapTimeline(flow.rows(), 64, limit=2)))[-1] == \
        "... stopped after 2 rows"


def test_timeline_colours_lanes_by_privilege(flow: Flow,
                                             render_ansi: Render) -> None:
    out = render_ansi(TrapTimeline(flow.rows(FlowFilter(seq=(2, 3))), 64))
    teal, amber = "38;2;42;157;143", "38;2;200;150;30"
    assert f"\x1b[1;{teal}m●━━━━━\x1b[0m\x1b[1;{amber}m▶" in out


def test_syscall_table_golden(flow: Flow, render: Render) -> None:
    assert lines(render(SyscallTable(flow.syscalls))) == [
        " seq  pid  call                        result           kernel insns",
        "   2    ?  write(1, 0x3fffffdd58, 14)  14                        600",
        "   6    ?  fork()                      2                         700",
        "   8    ?  yield()                     0                         800",
        "  16    ?  exit(0)                     does not return",
    ]


def test_syscall_summary_golden(flow: Flow, render: Render) -> None:
    assert lines(render(SyscallSummary(flow.syscalls))) == [
        " call   calls  failed",
        " exit       1       0",
        " fork       1       0",
        " write      1       0",
        " yield      1       0",
    ]


def test_a_failed_fork_has_no_child(flow: Flow) -> None:
    """fork at 0x10E80 fails (-1), then succeeds; the child's return is the second's."""
    U, S = Priv.U, Priv.S
    fork = (0, 0, 0, 0, 0, 0, 0, 220)
    events = [
        record("xret", S, U, instret=1000, pc=0x10000, epc=USERRET_SRET, satp=A_SATP),
        record("trap", U, S, instret=1100, code=8, epc=0x10E80, pc=USERVEC, satp=A_SATP,
               args=fork),
        record("xret", S, U, instret=1200, pc=0x10E84, epc=USERRET_SRET, satp=A_SATP,
               args=(-1 & (1 << 64) - 1,)),
        record("trap", U, S, instret=1300, code=8, epc=0x10E80, pc=USERVEC, satp=A_SATP,
               args=fork),
        record("xret", S, U, instret=1400, pc=0x10E84, epc=USERRET_SRET, satp=A_SATP,
               args=(2,)),
        record("xret", S, U, instret=1500, pc=0x10E84, epc=USERRET_SRET, satp=B_SATP),
    ]
    f = Flow(log_of(events), call_specs(load_syscall_table()), 64, load_sbi_names(), start=0)
    f.catch_up()
    assert [c.ret for c in f.syscalls] == [-1, 2]
    assert {r.seq: r.note for r in f.rows() if r.note.startswith("child")} == {
        5: "child's return from fork() #3"}
