"""The grader's trace (`KernelRun.trace`) is a view over the trap flow
(harness/trace/flow.py): its system calls are the flow's records, paired the flow's
way (return address, exec as a new image, fork's two returns, calls that never
return), on real runs of the bundled kernel and programs."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from privlab.abi.csr import Priv
from privlab.abi.syscall_table import load_syscall_table
from privlab.grade.graded_boot import KernelRun
from privlab.grade.under_test import KernelUnderTest
from privlab.trace import TrapEvent, XretEvent
from privlab.trace.flow import Flow
from privlab.trace.syscalls import SyscallRecord, call_specs


def _own_flow(run: KernelRun) -> Flow:
    """The flow of the run's events, made from scratch (not the run's own)."""
    flow = Flow(run.machine.events, call_specs(load_syscall_table()), run.machine.xlen,
                start=0)
    flow.catch_up()
    return flow


def _srets(run: KernelRun) -> dict[int, XretEvent]:
    return {e.seq: e for e in run.trace.events
            if isinstance(e, XretEvent) and e.insn == "sret"}


def test_a_successful_exec_has_the_new_images_result_not_none(
        kernel: KernelUnderTest) -> None:
    """exec (no arguments) runs `hello from exec`: the call returns into the new image
    with argc 3 in a0. The grader used to leave the result at None."""
    run = kernel.run("exec")
    (call,) = run.trace.syscalls("exec")
    assert (call.ret, call.outcome) == (3, "new image")
    assert call.exit_seq is not None and run.trace.events[call.exit_seq].satp != call.satp
    assert call.ret_text() == "3 (new program image)"


def test_exit_never_returns_even_when_its_address_space_is_reused(
        kernel: KernelUnderTest) -> None:
    """A child that exited frees its page table, and a later fork's child gets the
    same satp; that child's first sret is not exit's return (the grader used to show
    `exit(0x3) -> 0`). usertests runs each case in a child that forks, waits and
    exits before the next case's fork, and the frame allocator hands the pages freed
    last out first, so the next child's page table is the last one's. (forktree's
    children all exist at once unless a timer tick reorders them, which moves with
    every change to the kernel's code.)"""
    run = kernel.run("usertests", "exit_status", "fork_copies_memory")
    exits = run.trace.syscalls("exit")
    srets = _srets(run)
    reused = [c for c in exits
              if any(s.satp == c.satp and seq > c.entry_seq for seq, s in srets.items())]
    assert reused, "the run no longer reuses an exited process's address space"
    assert len(exits) == 5   # two cases, each a child and a grandchild, then usertests
    assert all((c.ret, c.outcome, c.exit_seq) == (None, "noreturn", None) for c in exits)
    assert all(str(c).endswith(" -> does not return") for c in exits)


def test_a_fork_has_its_parents_return_and_its_childs(kernel: KernelUnderTest) -> None:
    """forktree 4 forks 30 times: each fork returns the child's pid to the parent (at
    the sret to pc + 4 in the parent's address space) and 0 to the child (its first
    sret, to the same pc in another address space), and no other call claims the
    child's return."""
    run = kernel.run("forktree", 4)
    calls = run.trace.syscalls()
    forks = run.trace.syscalls("fork")
    srets = _srets(run)
    assert len(forks) == 30
    for f in forks:
        assert f.outcome == "returned" and f.ret is not None and f.ret > 1
        assert f.exit_seq is not None and f.child_seq is not None
        parent, child = srets[f.exit_seq], srets[f.child_seq]
        assert (parent.satp, parent.pc, parent.a0) == (f.satp, f.epc + 4, f.ret)
        assert child.satp != f.satp and (child.pc, child.a0) == (f.epc + 4, 0)
    assert sorted(f.ret for f in forks if f.ret is not None) == list(range(2, 32))
    children = {f.child_seq for f in forks}
    assert not [c for c in calls if c.exit_seq in children]


@pytest.mark.parametrize("program", [("forktree", "4"), ("exec", "forktree", "2")],
                         ids=["forktree-4", "exec-forktree-2"])
def test_the_graders_syscalls_are_the_flows(kernel: KernelUnderTest,
                                            program: tuple[str, ...]) -> None:
    """Call for call, the grader's list and a flow of the same events agree: number,
    name, arguments, result, outcome and when (instret at the ecall and the return)."""
    run = kernel.run(*program)

    def shown(calls: Sequence[SyscallRecord]) -> list[tuple[object, ...]]:
        return [(c.number, c.name, c.args, c.ret, c.outcome, c.satp, c.entry_instret,
                 c.exit_instret, c.child_seq) for c in calls]

    graded = run.trace.syscalls()
    assert len(graded) > 20
    assert shown(graded) == shown(_own_flow(run).syscalls)
    assert run.trace.count("fork") == len(run.trace.syscalls("fork")) > 0


def test_traps_are_the_events_that_match(kernel: KernelUnderTest) -> None:
    """traps() filters the raw records and decodes only the matches: the same traps,
    in order, as filtering every decoded event."""
    run = kernel.run("compute", 2_000_000)
    traps = [e for e in run.trace.events if isinstance(e, TrapEvent)]
    U, S, M = Priv.U, Priv.S, Priv.M
    assert run.trace.traps() == traps
    assert run.trace.traps(code=8) == [t for t in traps if t.code == 8]
    assert run.trace.traps(interrupt=False) == [t for t in traps if not t.interrupt]
    assert run.trace.traps(from_priv=S, to_priv=M) == \
        [t for t in traps if (t.priv_from, t.priv_to) == (S, M)]
    ticks = [t for t in traps if t.interrupt and t.code == 5 and
             (t.priv_from, t.priv_to) == (U, S)]
    assert ticks and run.trace.timer_interrupts_from_user() == ticks
