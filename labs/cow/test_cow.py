"""Lab 10: copy-on-write fork (kernel/cow.c, reference counts in kernel/kalloc.c).

The test program (userland/lab_cow.c) calls getppid() at each checkpoint; the grader
stops there and reads both processes' page tables from guest memory itself
(privlab.grade.checks.user_leaf), so sharing is checked in the page tables, not taken
from the program's word.
"""

from __future__ import annotations

import random
import re

import pytest

from privlab.abi.csr import Exc, Priv
from privlab.grade import KernelRun, KernelUnderTest
from privlab.grade.checks import (
    UserLeaf,
    resumed_at,
    stop_at_syscall,
    user_layout,
    user_leaf,
)
from privlab.trace import TrapEvent

PAGE = 4096
SMALL_RAM = 16        # MiB: about 10 MiB of it free for user pages


def _heap(run: KernelRun) -> int:
    """Where the program's heap starts: what its first sbrk returned."""
    calls = run.trace.syscalls("sbrk")
    ret = calls[0].ret if calls else None
    if ret is None or ret < 0:
        run.fail("the test program's sbrk failed")
    assert ret is not None
    return ret


def _parent_satp(run: KernelRun) -> int:
    forks = run.trace.syscalls("fork")
    if not forks:
        run.fail("the test program did not fork")
    return forks[0].satp


def _leaf(run: KernelRun, satp: int, va: int, who: str) -> UserLeaf:
    leaf = user_leaf(run, satp, va)
    if leaf is None:
        run.fail(f"{va:#x} is not mapped in the {who}'s page table")
    assert leaf is not None
    return leaf


def _expect_shared(run: KernelRun, parent: int, child: int, va: int, what: str) -> UserLeaf:
    """Both page tables map va to the same frame, and neither may write it."""
    p, c = _leaf(run, parent, va, "parent"), _leaf(run, child, va, "child")
    if p.pa != c.pa:
        run.fail(f"after fork, {what} at {va:#x} is not shared: the parent maps frame "
                 f"{p.pa:#x}, the child {c.pa:#x} (fork still copies)")
    if p.writable or c.writable:
        run.fail(f"{what} at {va:#x} is shared but writable ({p} / {c}): a store by one "
                 f"process would reach the other")
    return p


def _store_fault(run: KernelRun, satp: int, va: int) -> TrapEvent:
    """The store page fault from U at exactly va in this address space."""
    traps = [t for t in run.expect_trap(int(Exc.STORE_PAGE_FAULT), tval=va, from_priv=Priv.U)
             if t.satp == satp]
    if not traps:
        run.fail(f"no store page fault (cause 15) at {va:#x} from this process")
    return traps[0]


def _expect_resumed(run: KernelRun, trap: TrapEvent) -> None:
    """After the fault the same process runs on at the same instruction (sret to U at
    sepc = the faulting pc, in its own address space), which then stores again."""
    back = resumed_at(run, trap)
    if back is None or back.satp != trap.satp or back.pc != trap.epc:
        where = "nowhere" if back is None else f"pc {back.pc:#x} (satp {back.satp:#x})"
        run.fail(f"after the store page fault at pc {trap.epc:#x} (stval {trap.tval:#x}) "
                 f"the kernel returned to {where}, not to the faulting store")


def _share_run(kernel: KernelUnderTest, rng: random.Random) -> tuple[KernelRun, int, int, int]:
    """lab_cow share, stopped at its first checkpoint (the child's, right after fork):
    the run, the heap's address, its pages and the child's satp."""
    pages = rng.randint(3, 12)
    run = kernel.boot("lab_cow", "share", kernel.token, pages)
    child = stop_at_syscall(run, "getppid", 50_000_000).satp
    if child == _parent_satp(run):
        run.fail("the first checkpoint should be the child's (right after fork)")
    return run, _heap(run), pages, child


@pytest.mark.points(3)
def test_fork_shares_every_page_read_only(privlab_kernel: KernelUnderTest,
                                          privlab_rng: random.Random) -> None:
    run, heap, pages, child = _share_run(privlab_kernel, privlab_rng)
    parent = _parent_satp(run)
    _expect_shared(run, parent, child, user_layout(run).base, "the text")
    for i in range(pages):
        _expect_shared(run, parent, child, heap + i * PAGE, f"heap page {i}")
    run.expect_pass()


@pytest.mark.points(3)
@pytest.mark.requires("test_fork_shares_every_page_read_only")
def test_a_store_copies_the_page_and_the_store_runs_again(privlab_kernel: KernelUnderTest,
                                                          privlab_rng: random.Random) -> None:
    run, heap, pages, child = _share_run(privlab_kernel, privlab_rng)
    parent = _parent_satp(run)
    before = _expect_shared(run, parent, child, heap, "heap page 0")
    stop_at_syscall(run, "getppid")                     # the child, after heap[0] = 'C'
    mine, theirs = _leaf(run, child, heap, "child"), _leaf(run, parent, heap, "parent")
    if mine.pa == theirs.pa:
        run.fail(f"after the child's store, heap page 0 is still one frame ({mine.pa:#x})")
    if not mine.writable:
        run.fail(f"the child's copy of heap page 0 is not writable: {mine}")
    if theirs.pa != before.pa or theirs.writable:
        run.fail(f"the parent's heap page 0 changed when the child stored to it: {before} "
                 f"became {theirs}")
    for i in range(1, pages):
        _expect_shared(run, parent, child, heap + i * PAGE, f"heap page {i}")
    fault = _store_fault(run, child, heap)
    _expect_resumed(run, fault)
    run.expect_pass()


@pytest.mark.points(2)
@pytest.mark.requires("test_a_store_copies_the_page_and_the_store_runs_again")
def test_the_last_owner_writes_its_frame_without_a_copy(privlab_kernel: KernelUnderTest,
                                                        privlab_rng: random.Random) -> None:
    """Once the child has its own page 0 (and has exited), the parent is the frame's only
    owner: its store page fault gives it PTE_W back on the same frame."""
    run, heap, _, _ = _share_run(privlab_kernel, privlab_rng)
    parent = _parent_satp(run)
    before = _leaf(run, parent, heap, "parent")
    stop_at_syscall(run, "getppid")                     # the child's second
    third = stop_at_syscall(run, "getppid")             # the parent's, after heap[0] = 'P'
    if third.satp != parent:
        run.fail("the third checkpoint should be the parent's")
    after = _leaf(run, parent, heap, "parent")
    if after.pa != before.pa:
        run.fail(f"the parent, heap page 0's last owner, got a copy ({after.pa:#x}) instead "
                 f"of its own frame ({before.pa:#x}) back: are reference counts dropped?")
    if not after.writable:
        run.fail(f"the parent's heap page 0 is not writable after its store: {after}")
    _expect_resumed(run, _store_fault(run, parent, heap))
    run.expect_pass()


def _kill_line(run: KernelRun, pid: int, trap: TrapEvent) -> None:
    line = (f"[kernel] pid {pid} (lab_cow) killed: {trap.name} sepc={trap.epc:#x} "
            f"stval={trap.tval:#x}")
    if line not in run.lines():
        run.fail(f"expected the kill line {line!r}")


@pytest.mark.points(2)
@pytest.mark.requires("test_fork_shares_every_page_read_only")
def test_a_store_to_a_truly_read_only_page_still_kills(privlab_kernel: KernelUnderTest,
                                                       privlab_rng: random.Random) -> None:
    """The text and a PROT_READ mapping are shared but not COW: a store there is a real
    store page fault, and the process dies with the usual line, not with a copy."""
    addr = privlab_rng.randrange(0x10000000, 0x40000000, PAGE)
    run = privlab_kernel.boot("lab_cow", "readonly", privlab_kernel.token, addr)
    child, parent = stop_at_syscall(run, "getppid", 50_000_000).satp, _parent_satp(run)
    _expect_shared(run, parent, child, user_layout(run).base, "the text")
    run.expect_pass()
    heap = _heap(run)
    _expect_resumed(run, _store_fault(run, child, heap))  # the COW page: copied
    pids = [int(c.ret or 0) for c in run.trace.syscalls("fork")]
    text = [t for t in run.trace.traps(code=int(Exc.STORE_PAGE_FAULT), from_priv=Priv.U)
            if t.satp == child and user_layout(run).base <= t.tval < heap]
    if not text:
        run.fail("no store page fault at the text from the first child")
    mapping = run.expect_trap(int(Exc.STORE_PAGE_FAULT), tval=addr, from_priv=Priv.U)
    for pid, trap in ((pids[0], text[0]), (pids[1], mapping[0])):
        _kill_line(run, pid, trap)
        back = resumed_at(run, trap)
        if back is not None and back.satp == trap.satp and back.pc == trap.epc:
            run.fail(f"the store to read-only {trap.tval:#x} was retried, not killed")


@pytest.mark.points(2)
@pytest.mark.requires("test_fork_shares_every_page_read_only")
def test_the_kernels_own_stores_break_cow_too(privlab_kernel: KernelUnderTest) -> None:
    """read() from a pipe and get_time() into shared pages: copyout gives the child its
    own copies (the parent's pages keep their bytes), and the calls succeed."""
    run = privlab_kernel.boot("lab_cow", "copyout", privlab_kernel.token)
    first = stop_at_syscall(run, "getppid", 50_000_000)
    buf = _heap(run)
    parent = _parent_satp(run)
    shared = [_expect_shared(run, parent, first.satp, buf + i * PAGE, f"buffer page {i}")
              for i in range(2)]
    stop_at_syscall(run, "getppid")
    for i, was in enumerate(shared):
        mine = _leaf(run, first.satp, buf + i * PAGE, "child")
        theirs = _leaf(run, parent, buf + i * PAGE, "parent")
        if mine.pa == theirs.pa:
            run.fail(f"the kernel stored into buffer page {i} for the child without a copy: "
                     f"both map {mine.pa:#x}")
        if not mine.writable or theirs.pa != was.pa:
            run.fail(f"buffer page {i}: the child's copy should be writable and the parent "
                     f"keep its frame; shared {was}, now child {mine}, parent {theirs}")
    run.expect_pass()
    reads = [c for c in run.trace.syscalls("read") if c.satp == first.satp]
    assert reads and reads[0].args[1] == buf and reads[0].ret == 24, \
        f"the child's read into its shared buffer: {reads[:1]}"
    times = [c for c in run.trace.syscalls("get_time") if c.satp == first.satp]
    assert times and times[0].args[0] == buf + PAGE and times[0].ret == 0, \
        f"the child's get_time into a shared page: {times[:1]}"


@pytest.mark.points(2)
def test_fork_of_a_process_using_most_of_memory(privlab_kernel: KernelUnderTest) -> None:
    """6 MiB of heap on a machine with about 10 MiB free: two copies do not fit, three
    rounds of shared pages do (and their frames come back each time)."""
    run = privlab_kernel.run("lab_cow", "big", privlab_kernel.token, 6, 3, ram_mib=SMALL_RAM,
                             max_insns=400_000_000)
    run.expect_pass(within=400_000_000)
    forks = run.expect_syscall("fork", count=3)
    assert all(c.ret is not None and c.ret > 0 for c in forks), [str(c) for c in forks]


OOM = re.compile(r"^\[kernel\] pid (\d+) \(lab_cow\) killed: out of memory\b.*$", re.M)


@pytest.mark.points(2)
@pytest.mark.requires("test_fork_shares_every_page_read_only")
def test_out_of_memory_in_a_cow_fault_kills_only_that_process(
        privlab_kernel: KernelUnderTest) -> None:
    """8 MiB shared; the child stores to every page and runs out of frames. It is killed
    with a line that says "out of memory" (no panic), and the parent's pages are intact
    and its own again."""
    run = privlab_kernel.run("lab_cow", "oom", privlab_kernel.token, 8, ram_mib=SMALL_RAM)
    run.expect_pass()
    child_pid = run.trace.syscalls("fork")[0].ret
    found = OOM.search(run.output)
    if found is None or int(found.group(1)) != child_pid:
        run.fail(f"expected '[kernel] pid {child_pid} (lab_cow) killed: out of memory ...'")
    parent = _parent_satp(run)
    faults = [t for t in run.trace.traps(code=int(Exc.STORE_PAGE_FAULT), from_priv=Priv.U)
              if t.satp != parent]
    last = faults[-1] if faults else None
    if last is None:
        run.fail("the child took no store page fault")
    assert last is not None
    back = resumed_at(run, last)
    if back is not None and back.satp == last.satp:
        run.fail("the child ran on after its last store page fault")
