"""Lab 11 hidden tests: a sparse heap bigger than the free memory, fork before the
heap is touched (with copy-on-write, lab 10, in the same kernel), and frames that
come back over many rounds of growing and shrinking."""

from __future__ import annotations

import pytest

from privlab.grade import KernelRun, KernelUnderTest
from privlab.grade.checks import stop_at_syscall, user_leaf

PAGE = 4096
SMALL_RAM = 16


def _heap(run: KernelRun) -> int:
    for call in run.trace.syscalls("sbrk"):
        if call.args[0] > 0 and call.ret is not None and call.ret >= 0:
            return call.ret
    run.fail("the test program's sbrk failed")
    raise AssertionError


def _mapped(run: KernelRun, satp: int, heap: int, pages: int) -> list[int]:
    return [i for i in range(pages) if user_leaf(run, satp, heap + i * PAGE) is not None]


@pytest.mark.points(2)
def test_a_sparse_heap_bigger_than_the_free_memory(privlab_kernel: KernelUnderTest) -> None:
    """13 MiB of heap on a 16 MiB machine (about 10 MiB free), touched once a MiB."""
    run = privlab_kernel.run("lab_lazy", "sparse", privlab_kernel.token, 13, ram_mib=SMALL_RAM)
    run.expect_pass()
    run.expect_syscall("sbrk", args=(13 << 20,))


@pytest.mark.points(2)
def test_fork_before_the_heap_is_touched(privlab_kernel: KernelUnderTest) -> None:
    """Nothing mapped in either process after fork; the child's stores map its own
    pages only; later the parent's heap, touched at last, forks as any other."""
    pages = 8
    run = privlab_kernel.boot("lab_lazy", "forkfirst", privlab_kernel.token, pages)
    child = stop_at_syscall(run, "getppid", 50_000_000).satp
    parent, heap = run.trace.syscalls("fork")[0].satp, _heap(run)
    for who, satp in (("parent", parent), ("child", child)):
        if _mapped(run, satp, heap, pages):
            run.fail(f"right after fork the {who} has heap pages {_mapped(run, satp, heap, pages)}"
                     " mapped; none was touched")
    stop_at_syscall(run, "getppid")
    if _mapped(run, child, heap, pages) != list(range(pages // 2)):
        run.fail(f"the child stored to heap pages 0..{pages // 2 - 1}, but has "
                 f"{_mapped(run, child, heap, pages)} mapped")
    if _mapped(run, parent, heap, pages):
        run.fail("the child's stores mapped pages in the parent")
    run.expect_pass()
    assert len([c for c in run.trace.syscalls("fork") if c.ret and c.ret > 0]) == 2


@pytest.mark.points(2)
def test_frames_come_back_over_ten_rounds(privlab_kernel: KernelUnderTest) -> None:
    """Ten rounds of a 4 MiB heap on a 16 MiB machine, half of it touched and then given
    back: the frames must come back each time (and nothing is mapped before a touch)."""
    pages, rounds = 1024, 10
    run = privlab_kernel.boot("lab_lazy", "shrink", privlab_kernel.token, pages, rounds,
                              ram_mib=SMALL_RAM)
    satp = stop_at_syscall(run, "getppid", 50_000_000).satp
    heap = _heap(run)
    if _mapped(run, satp, heap, pages):
        run.fail("heap pages are mapped right after sbrk")
    run.expect_pass(within=400_000_000)


@pytest.mark.points(2)
def test_threads_touch_the_process_heap(privlab_kernel: KernelUnderTest) -> None:
    """Two threads store to the heap, one through read() from a pipe: the heap (its
    bottom and brk) is the process's, so a thread's fault maps it like the main
    thread's would."""
    pages = 8
    run = privlab_kernel.boot("lab_lazy", "threads", privlab_kernel.token, pages)
    satp = stop_at_syscall(run, "getppid", 50_000_000).satp
    heap = _heap(run)
    if _mapped(run, satp, heap, pages):
        run.fail("heap pages are mapped right after sbrk")
    stop_at_syscall(run, "getppid")
    if _mapped(run, satp, heap, pages) != list(range(pages)):
        run.fail(f"the threads touched every heap page, but only "
                 f"{_mapped(run, satp, heap, pages)} are mapped")
    run.expect_pass()
    run.expect_syscall("read", ret=14)
