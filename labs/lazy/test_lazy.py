"""Lab 11: lazy heap allocation (kernel/lazy.c).

The test program (userland/lab_lazy.c) calls getppid() at each checkpoint; the grader
stops there and reads the page table from guest memory itself
(privlab.grade.checks.user_leaf): which heap pages exist is checked in the page
table, not taken from the program's word.
"""

from __future__ import annotations

import random

import pytest

from privlab.abi.csr import Exc, Priv
from privlab.grade import KernelRun, KernelUnderTest
from privlab.grade.checks import resumed_at, stop_at_syscall, user_layout, user_leaf
from privlab.trace import TrapEvent

PAGE = 4096
SMALL_RAM = 16          # MiB: about 10 MiB of it free for user pages


def _heap(run: KernelRun) -> int:
    """Where the heap starts: what the program's first successful sbrk(n > 0) returned."""
    for call in run.trace.syscalls("sbrk"):
        if call.args[0] > 0 and call.ret is not None and call.ret >= 0:
            return call.ret
    run.fail("the test program's sbrk failed")
    raise AssertionError


def _expect_unmapped(run: KernelRun, satp: int, start: int, pages: int, when: str) -> None:
    mapped = [i for i in range(pages) if user_leaf(run, satp, start + i * PAGE) is not None]
    if mapped:
        leaf = user_leaf(run, satp, start + mapped[0] * PAGE)
        run.fail(f"{when}, heap pages {mapped} of {pages} are mapped (page {mapped[0]}: "
                 f"{leaf}); sbrk must map nothing, a page gets its frame when first touched")


def _expect_mapped(run: KernelRun, satp: int, va: int, what: str) -> None:
    leaf = user_leaf(run, satp, va)
    if leaf is None:
        run.fail(f"{what} ({va:#x}) is not mapped")
    assert leaf is not None
    if not (leaf.readable and leaf.writable and leaf.user) or leaf.executable:
        run.fail(f"{what} should be a user read-write page, not {leaf}")


def _fault(run: KernelRun, cause: Exc, va: int, satp: int | None = None) -> TrapEvent:
    traps = [t for t in run.expect_trap(int(cause), tval=va, from_priv=Priv.U)
             if satp is None or t.satp == satp]
    if not traps:
        run.fail(f"no {cause.name.lower()} (cause {int(cause)}) at {va:#x} from this process")
    return traps[0]


def _expect_resumed(run: KernelRun, trap: TrapEvent) -> None:
    """The process goes on at the faulting instruction: sret to U at sepc = its pc, in
    its own address space (and that load or store then runs again, and succeeds)."""
    back = resumed_at(run, trap)
    if back is None or back.satp != trap.satp or back.pc != trap.epc:
        where = "nowhere" if back is None else f"pc {back.pc:#x} (satp {back.satp:#x})"
        run.fail(f"after the {trap.name} at pc {trap.epc:#x} (stval {trap.tval:#x}) the "
                 f"kernel returned to {where}, not to the faulting instruction")


def _expect_killed(run: KernelRun, pid: int, trap: TrapEvent) -> None:
    line = (f"[kernel] pid {pid} (lab_lazy) killed: {trap.name} sepc={trap.epc:#x} "
            f"stval={trap.tval:#x}")
    if line not in run.lines():
        run.fail(f"expected the kill line {line!r}")
    back = resumed_at(run, trap)
    if back is not None and back.satp == trap.satp and back.pc == trap.epc:
        run.fail(f"the {trap.name} at {trap.tval:#x}, outside the heap, was retried, not "
                 f"killed")


def _expect_call(run: KernelRun, name: str, buf: int, n: int, ret: int) -> None:
    """A read or write (fd, buf, n) that returned ret, whatever its descriptor."""
    calls = run.trace.syscalls(name)
    if not any(c.args[1:3] == (buf, n) and c.ret == ret for c in calls):
        run.fail(f"expected a call {name}(fd, {buf:#x}, {n}) -> {ret}; saw:\n"
                 + "\n".join(f"  {c}" for c in calls[:20]))


def _touch(kernel: KernelUnderTest, rng: random.Random) -> tuple[KernelRun, int, int, int, int]:
    pages = rng.randint(4, 24)
    load, store = rng.sample(range(pages), 2)
    run = kernel.boot("lab_lazy", "touch", kernel.token, pages, load, store)
    return run, pages, load, store, stop_at_syscall(run, "getppid", 50_000_000).satp


@pytest.mark.points(3)
def test_sbrk_maps_nothing_and_a_touch_maps_one_zeroed_page(privlab_kernel: KernelUnderTest,
                                                            privlab_rng: random.Random
                                                            ) -> None:
    run, pages, load, store, satp = _touch(privlab_kernel, privlab_rng)
    heap = _heap(run)
    _expect_unmapped(run, satp, heap, pages, f"right after sbrk({pages * PAGE})")
    stop_at_syscall(run, "getppid")
    _expect_mapped(run, satp, heap + load * PAGE, f"heap page {load}, after a load from it")
    _expect_mapped(run, satp, heap + store * PAGE, f"heap page {store}, after a store to it")
    others = [i for i in range(pages) if i not in (load, store)]
    for i in others:
        if user_leaf(run, satp, heap + i * PAGE) is not None:
            run.fail(f"heap page {i} was never touched but is mapped")
    run.expect_pass()
    run.expect_syscall("sbrk", args=(pages * PAGE,), ret=heap)


@pytest.mark.points(2)
@pytest.mark.requires("test_sbrk_maps_nothing_and_a_touch_maps_one_zeroed_page")
def test_the_load_and_the_store_fault_and_run_again(privlab_kernel: KernelUnderTest,
                                                    privlab_rng: random.Random) -> None:
    """A load page fault (13) and a store page fault (15) from U, stval = the address
    touched; each returns to the same sepc, in the same process."""
    run, _, load, store, satp = _touch(privlab_kernel, privlab_rng)
    run.expect_pass()
    heap = _heap(run)
    _expect_resumed(run, _fault(run, Exc.LOAD_PAGE_FAULT, heap + load * PAGE + 5, satp))
    _expect_resumed(run, _fault(run, Exc.STORE_PAGE_FAULT, heap + store * PAGE + 7, satp))


@pytest.mark.points(2)
@pytest.mark.requires("test_sbrk_maps_nothing_and_a_touch_maps_one_zeroed_page")
def test_a_fault_outside_the_heap_still_kills(privlab_kernel: KernelUnderTest,
                                              privlab_rng: random.Random) -> None:
    """Past the heap's last page, far above it, the stack's guard page, and a page that
    sbrk(-n) gave back: each a real fault, with the usual kill line."""
    pages = privlab_rng.randint(2, 12)
    run = privlab_kernel.boot("lab_lazy", "outside", privlab_kernel.token, pages)
    satp = stop_at_syscall(run, "getppid", 50_000_000).satp
    heap = _heap(run)
    _expect_unmapped(run, satp, heap, pages + 1, "right after sbrk")
    run.expect_pass()
    pids = [int(c.ret or 0) for c in run.trace.syscalls("fork")]
    past = heap + (pages + 1) * PAGE          # the heap is pages * 4096 + 100 bytes
    _expect_killed(run, pids[1], _fault(run, Exc.LOAD_PAGE_FAULT, past))
    _expect_killed(run, pids[2], _fault(run, Exc.STORE_PAGE_FAULT, past + 5 * PAGE))
    bottom = user_layout(run).stack_bottom
    guard = [t for t in run.trace.traps(code=int(Exc.STORE_PAGE_FAULT), from_priv=Priv.U)
             if bottom - PAGE <= t.tval < bottom]
    if not guard:
        run.fail(f"no store page fault in the stack's guard page ({bottom - PAGE:#x})")
    _expect_killed(run, pids[3], guard[0])
    _expect_killed(run, pids[4], _fault(run, Exc.LOAD_PAGE_FAULT, heap))


@pytest.mark.points(2)
@pytest.mark.requires("test_sbrk_maps_nothing_and_a_touch_maps_one_zeroed_page")
def test_sbrk_minus_n_unmaps_what_was_touched(privlab_kernel: KernelUnderTest,
                                              privlab_rng: random.Random) -> None:
    """Three rounds: grow (nothing mapped), touch every other page, shrink (nothing
    mapped any more); the heap then grows again into zeroed pages."""
    pages, rounds = privlab_rng.randint(4, 16), 3
    run = privlab_kernel.boot("lab_lazy", "shrink", privlab_kernel.token, pages, rounds)
    for r in range(rounds):
        satp = stop_at_syscall(run, "getppid", 50_000_000).satp
        heap = _heap(run)
        _expect_unmapped(run, satp, heap, pages, f"round {r}, right after sbrk")
        stop_at_syscall(run, "getppid", 50_000_000)
        _expect_unmapped(run, satp, heap, pages, f"round {r}, after sbrk(-{pages * PAGE})")
    run.expect_pass()


@pytest.mark.points(2)
@pytest.mark.requires("test_sbrk_maps_nothing_and_a_touch_maps_one_zeroed_page")
def test_fork_gives_the_child_only_the_pages_touched(privlab_kernel: KernelUnderTest,
                                                     privlab_rng: random.Random) -> None:
    pages = privlab_rng.randint(3, 12)
    run = privlab_kernel.boot("lab_lazy", "fork", privlab_kernel.token, pages)
    child = stop_at_syscall(run, "getppid", 50_000_000).satp
    parent, heap = run.trace.syscalls("fork")[0].satp, _heap(run)
    for i in range(pages):
        for who, satp in (("parent", parent), ("child", child)):
            leaf = user_leaf(run, satp, heap + i * PAGE)
            if (leaf is not None) != (i % 2 == 0):
                run.fail(f"after fork, heap page {i} is {'' if leaf else 'not '}mapped in the "
                         f"{who}; only the even pages were touched")
    stop_at_syscall(run, "getppid")
    _expect_mapped(run, child, heap + PAGE, "the child's heap page 1, after its store")
    if user_leaf(run, parent, heap + PAGE) is not None:
        run.fail("the child's first touch of heap page 1 mapped it in the parent")
    run.expect_pass()


@pytest.mark.points(3)
@pytest.mark.requires("test_sbrk_maps_nothing_and_a_touch_maps_one_zeroed_page")
def test_system_calls_given_heap_memory_not_touched_yet(privlab_kernel: KernelUnderTest
                                                        ) -> None:
    """pipe2, read, write and get_time with buffers in heap pages nobody has touched:
    copyin and copyout map them (no page fault from U), and each call succeeds; past
    the heap they still return -1."""
    run = privlab_kernel.boot("lab_lazy", "syscalls", privlab_kernel.token)
    satp = stop_at_syscall(run, "getppid", 50_000_000).satp
    heap = _heap(run)
    _expect_unmapped(run, satp, heap, 6, "right after sbrk")
    stop_at_syscall(run, "getppid")
    for i in range(4):
        _expect_mapped(run, satp, heap + i * PAGE, f"heap page {i}, after a system call on it")
    for i in (4, 5):
        if user_leaf(run, satp, heap + i * PAGE) is not None:
            run.fail(f"heap page {i} was given to no system call but is mapped")
    run.expect_pass()
    run.expect_syscall("pipe2", args=(heap, 0), ret=0)
    _expect_call(run, "read", heap + PAGE, 14, 14)          # into page 1, from the pipe
    _expect_call(run, "write", heap + 2 * PAGE, 16, 16)     # from page 2, into the pipe
    run.expect_syscall("get_time", args=(heap + 3 * PAGE + 8,), ret=0)
    run.expect_syscall("write", args=(1, heap + 5 * PAGE, 8), ret=-1)
    user_faults = [t for t in run.trace.traps(from_priv=Priv.U, interrupt=False)
                   if t.code in (Exc.LOAD_PAGE_FAULT, Exc.STORE_PAGE_FAULT)
                   and heap <= t.tval < heap + 4 * PAGE]
    if user_faults:
        run.fail(f"the program itself faulted at {user_faults[0].tval:#x}: the test is wrong")


@pytest.mark.points(2)
@pytest.mark.requires("test_sbrk_maps_nothing_and_a_touch_maps_one_zeroed_page")
def test_out_of_memory_kills_the_process_saying_so(privlab_kernel: KernelUnderTest) -> None:
    """On a 16 MiB machine sbrk(17 MiB) fails, sbrk(12 MiB) succeeds, and touching all of
    it (more than is free) kills the child with "out of memory"; the parent goes on."""
    run = privlab_kernel.boot("lab_lazy", "oom", privlab_kernel.token, 12, SMALL_RAM,
                              ram_mib=SMALL_RAM)
    satp = stop_at_syscall(run, "getppid", 50_000_000).satp
    heap = _heap(run)
    _expect_unmapped(run, satp, heap, 64, "right after sbrk(12 MiB)")
    run.expect_pass()
    run.expect_syscall("sbrk", args=((SMALL_RAM + 1) << 20,), ret=-1)
    run.expect_syscall("sbrk", args=(12 << 20,), ret=heap)
    pid = run.trace.syscalls("fork")[0].ret
    prefix = f"[kernel] pid {pid} (lab_lazy) killed: out of memory"
    if not any(line.startswith(prefix) for line in run.lines()):
        run.fail(f"expected a line starting {prefix!r}")
