"""Lab 10 hidden tests: three generations, many readers of one shared buffer, exec
after fork, a lazily grown heap (lab 11) and many rounds of sharing on a small
machine."""

from __future__ import annotations

import pytest

from privlab.grade import KernelRun, KernelUnderTest
from privlab.grade.checks import UserLeaf, stop_at_syscall, user_leaf

PAGE = 4096
SMALL_RAM = 16


def _first_ret(run: KernelRun, name: str) -> int:
    calls = run.trace.syscalls(name)
    ret = calls[0].ret if calls else None
    if ret is None or ret < 0:
        run.fail(f"the test program's first {name} failed")
    assert ret is not None
    return ret


def _parent(run: KernelRun) -> int:
    return run.trace.syscalls("fork")[0].satp


def _leaf(run: KernelRun, satp: int, va: int, who: str) -> UserLeaf:
    leaf = user_leaf(run, satp, va)
    if leaf is None:
        run.fail(f"{va:#x} is not mapped in the {who}'s page table")
    assert leaf is not None
    return leaf


def _shared(run: KernelRun, parent: int, child: int, va: int) -> UserLeaf:
    p, c = _leaf(run, parent, va, "parent"), _leaf(run, child, va, "child")
    if p.pa != c.pa or p.writable or c.writable:
        run.fail(f"{va:#x} should be one read-only frame in both: parent {p}, child {c}")
    return p


@pytest.mark.points(2)
def test_three_generations_share_and_write_their_parts(privlab_kernel: KernelUnderTest
                                                       ) -> None:
    """4 MiB in a parent, its child and grandchild on a machine with about 10 MiB free:
    three copies do not fit; each writes a quarter, and nobody sees another's stores."""
    run = privlab_kernel.run("lab_cow", "three", privlab_kernel.token, 4, ram_mib=SMALL_RAM)
    run.expect_pass()
    forks = run.expect_syscall("fork", count=2)
    assert all(c.ret is not None and c.ret > 0 for c in forks), [str(c) for c in forks]


@pytest.mark.points(2)
def test_eight_readers_of_one_shared_buffer(privlab_kernel: KernelUnderTest) -> None:
    """Eight children read() from their own pipes into the same shared page: each
    read's copyout gives its child a copy, so each sees exactly its own bytes."""
    run = privlab_kernel.boot("lab_cow", "readers", privlab_kernel.token, 8)
    first = stop_at_syscall(run, "read", 80_000_000)
    buf = _first_ret(run, "sbrk")
    _shared(run, _parent(run), first.satp, buf)
    run.expect_pass()
    reads = [c for c in run.trace.syscalls("read") if c.ret == 16]
    assert len(reads) >= 8, [str(c) for c in run.trace.syscalls("read")]


@pytest.mark.points(2)
def test_exec_after_fork_lets_go_of_the_shared_frames(privlab_kernel: KernelUnderTest
                                                      ) -> None:
    """The child execs at once (the common case COW is for). Its old image goes, the
    frames' counts drop, and the parent's stores then copy nothing: each of its pages
    keeps its frame."""
    pages = 6
    run = privlab_kernel.boot("lab_cow", "exec", privlab_kernel.token, pages)
    child = stop_at_syscall(run, "exec", 80_000_000).satp
    heap, parent = _first_ret(run, "sbrk"), _parent(run)
    frames = [_shared(run, parent, child, heap + i * PAGE).pa for i in range(pages)]
    after = stop_at_syscall(run, "getppid")
    assert after.satp == parent
    for i, frame in enumerate(frames):
        leaf = _leaf(run, parent, heap + i * PAGE, "parent")
        if leaf.pa != frame or not leaf.writable:
            run.fail(f"heap page {i}: after the child's exec the parent should write its own "
                     f"frame {frame:#x}, but maps {leaf} (was a reference not dropped?)")
    run.expect_pass()


@pytest.mark.points(2)
def test_fork_of_a_lazily_grown_heap(privlab_kernel: KernelUnderTest) -> None:
    """With lab 11's lazy sbrk, half the heap is not mapped yet at fork: the touched
    pages are shared, the others stay unmapped in both, and each side's first touch is
    its own (a copy, or a fresh zeroed page)."""
    pages = 6
    run = privlab_kernel.boot("lab_cow", "mixed", privlab_kernel.token, pages)
    child = stop_at_syscall(run, "getppid", 50_000_000).satp
    heap, parent = _first_ret(run, "sbrk"), _parent(run)
    even = {i: _shared(run, parent, child, heap + i * PAGE) for i in range(0, pages, 2)}
    for i in range(1, pages, 2):
        if user_leaf(run, parent, heap + i * PAGE) or user_leaf(run, child, heap + i * PAGE):
            run.fail(f"heap page {i} was never touched but is mapped after fork")
    stop_at_syscall(run, "getppid")
    for i in range(pages):
        mine = _leaf(run, child, heap + i * PAGE, "child")
        theirs = user_leaf(run, parent, heap + i * PAGE)
        if not mine.writable or (theirs is not None and theirs.pa == mine.pa):
            run.fail(f"heap page {i} after the child's store: child {mine}, parent {theirs}")
        if (i in even) != (theirs is not None):
            run.fail(f"heap page {i}: the child's store changed the parent's page table")
    run.expect_pass()


@pytest.mark.points(2)
def test_frames_come_back_after_eight_rounds(privlab_kernel: KernelUnderTest) -> None:
    """Eight rounds of a 6 MiB heap shared with a child that copies one page and exits:
    a frame whose count never reaches 0 again is lost, and the rounds run out of RAM."""
    run = privlab_kernel.run("lab_cow", "big", privlab_kernel.token, 6, 8, ram_mib=SMALL_RAM,
                             max_insns=400_000_000)
    run.expect_pass(within=400_000_000)


@pytest.mark.points(2)
def test_a_threads_store_after_fork_copies_for_the_whole_process(
        privlab_kernel: KernelUnderTest) -> None:
    """After fork, a thread of the parent stores to every shared page: the copies land in
    the page table all the parent's threads share, and the child keeps the old frames."""
    pages = 6
    run = privlab_kernel.boot("lab_cow", "threads", privlab_kernel.token, pages)
    child = stop_at_syscall(run, "getppid", 80_000_000).satp
    heap, parent = _first_ret(run, "sbrk"), _parent(run)
    frames = [_shared(run, parent, child, heap + i * PAGE).pa for i in range(pages)]
    if stop_at_syscall(run, "getppid").satp != parent:
        run.fail("the second checkpoint should be the parent's")
    for i, frame in enumerate(frames):
        mine = _leaf(run, parent, heap + i * PAGE, "parent")
        theirs = _leaf(run, child, heap + i * PAGE, "child")
        if mine.pa == theirs.pa or not mine.writable or theirs.pa != frame:
            run.fail(f"heap page {i} after the parent's thread stored to it: parent {mine}, "
                     f"child {theirs} (shared: {frame:#x})")
    run.expect_pass()
