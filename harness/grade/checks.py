"""Ready-made expectations that need the machine's own view of the guest: the page
table behind vmprint, the frame-pointer chain behind a backtrace, the time slices
behind a scheduler's shares, the ticks behind an alarm, and the page-table entries
and trap returns behind a page fault the kernel resolves (copy-on-write, lazy
allocation). The harness computes the truth itself, from memory and the trace, so the
expected output differs from run to run and cannot be memorised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..abi.csr import Irq, Priv
from ..abi.paging import PAGE_SHIFT, PAGE_SIZE, PTE_COW, PteFlag
from ..build.asm_offsets import kernel_layout
from ..machine.loader import load_elf
from ..machine.rawevents import KIND, TO, XRET, iter_records
from ..machine.until import AfterSyscall, AtAddress, PrivilegeChange
from ..mmu import walk
from ..mmu.tree import TableNode, read_page_table
from ..trace import Event, TrapEvent, XretEvent
from ..trace.syscalls import to_signed
from .graded_boot import DEFAULT_MAX_INSNS, KernelRun
from .trace_view import SyscallRecord

__all__ = ["AlarmLoop", "AlarmTrace", "FrameWalk", "UserLayout", "UserLeaf", "alarm_trace",
           "backtrace_at_entry", "backtrace_in", "check_shares", "printed_backtrace",
           "resumed_at", "slices_by_priority", "stop_at_syscall", "user_layout", "user_leaf",
           "vmprint_lines", "walk_frames"]


HEX = re.compile(r"^\s*(0x[0-9a-fA-F]+)\s*$")


# -- scheduling -------------------------------------------------------------------------
def slices_by_priority(run: KernelRun) -> dict[int, int]:
    """Time slices (timer interrupts from U) each process got after the last
    set_priority call, keyed by the priority it set; processes are told apart by
    their address space (satp)."""
    trace = run.trace
    prio_of: dict[int, int] = {}
    start = 0
    for call in trace.syscalls("set_priority"):
        prio_of[call.satp] = call.args[0]
        start = max(start, call.entry_instret)
    counts = dict.fromkeys(prio_of.values(), 0)
    for t in trace.timer_interrupts_from_user():
        if t.instret > start and t.satp in prio_of:
            counts[prio_of[t.satp]] += 1
    return counts


def check_shares(counts: dict[int, int], tolerance: float = 0.08, minimum: int = 20) -> None:
    """Each priority's share of the slices is within `tolerance` of prio / sum."""
    total = sum(counts.values())
    assert total >= minimum, f"too few time slices to judge ({total}): {counts}"
    weight = sum(counts)
    for prio, got in sorted(counts.items()):
        share, want = got / total, prio / weight
        assert abs(share - want) <= tolerance, (
            f"priority {prio} got {got} of {total} slices ({share:.0%}), expected about "
            f"{want:.0%}; slices by priority: {counts}")


# -- page tables ------------------------------------------------------------------------
def vmprint_lines(run: KernelRun, satp: int) -> list[str]:
    """What vmprint must print for the page table `satp` selects (format:
    labs/vmprint/README.md), read from guest memory by the page-table reader of
    harness/mmu/ (levels, PTE size and fields: harness/abi/paging.py)."""
    table = read_page_table(run.machine.memory, satp, run.machine.xlen)
    scheme = table.scheme
    va_mask = (1 << scheme.va_bits) - 1       # printed as the index bits make it
    lines = [f"page table {int(table.root.table):#x}"]

    def level(node: TableNode) -> None:
        indent = " .." * (scheme.levels - node.level)
        for e in node.entries:
            pa = int(e.pte.ppn) << PAGE_SHIFT
            line = f"{indent}{e.index}: pte {e.pte.raw:#x} pa {pa:#x}"
            if e.pte.leaf:
                flags = "".join(c.lower() if e.pte.flags & PteFlag[c] else "-" for c in "RWXU")
                lines.append(f"{line} va {int(e.va) & va_mask:#x} {flags}")
            else:
                lines.append(line)
                if e.child is not None:
                    level(e.child)

    level(table.root)
    return lines


@dataclass(frozen=True)
class UserLayout:
    """A user process's layout as the build made it: `base`, where the program's ELF
    segments start (USER_BASE: userland/user.ld links them there); `trapframe`, the
    main thread's trap frame (TRAPFRAME, from the kernel's generated asm-offsets.h);
    the main thread's user stack, `stack_size` bytes right below it (USTACK_TOP is
    TRAPFRAME)."""

    base: int
    trapframe: int
    stack_size: int

    @property
    def stack_bottom(self) -> int:
        return self.trapframe - self.stack_size


def user_layout(run: KernelRun, program: str | None = None) -> UserLayout:
    """The layout of `program` (default: the booted one) under the kernel under test."""
    layout = kernel_layout(run.kernel_image.path, run.machine.xlen)
    name = program or run.spec.program
    if name not in run.users or layout.thread_stack_size is None:
        run.fail(f"grader error: no layout for {name} (its ELF, or the kernel's "
                 "LAYOUT_USTACK_SIZE, is missing)")
    elf = load_elf(run.users[name])
    return UserLayout(min(s.vaddr for s in elf.segments), layout.trapframe,
                      int(layout.thread_stack_size or 0))


def first_user_page_table(run: KernelRun, within: int) -> int:
    """Run until the first process enters U; the satp of its page table."""
    result = run.run(within, until=[PrivilegeChange(to=Priv.U)])
    if result.event is None:
        run.fail("the first process never reached user mode")
    assert result.event is not None
    return result.event.satp


def printed_block(text: str, header: str, line: re.Pattern[str]) -> list[str]:
    """The header line and the lines matching `line` right after it (first block)."""
    lines = text.splitlines()
    for i, candidate in enumerate(lines):
        if candidate.startswith(header):
            block = [candidate]
            for following in lines[i + 1:]:
                if not line.match(following):
                    break
                block.append(following)
            return block
    return []


# -- page faults the kernel resolves ---------------------------------------------------
@dataclass(frozen=True)
class UserLeaf:
    """The valid leaf PTE that maps one user page, read from guest memory."""

    va: int     # the page's virtual address
    pa: int     # the frame it maps
    raw: int    # the whole PTE

    @property
    def flags(self) -> PteFlag:
        return PteFlag(self.raw & 0xFF)

    @property
    def readable(self) -> bool:
        return bool(self.raw & PteFlag.R)

    @property
    def writable(self) -> bool:
        return bool(self.raw & PteFlag.W)

    @property
    def executable(self) -> bool:
        return bool(self.raw & PteFlag.X)

    @property
    def user(self) -> bool:
        return bool(self.raw & PteFlag.U)

    @property
    def cow(self) -> bool:
        """The kernel's copy-on-write mark (PTE_COW, an RSW bit: harness/abi/paging.py)."""
        return bool(self.raw & PTE_COW)

    def __str__(self) -> str:
        spelled = "".join(c.lower() if self.raw & PteFlag[c] else "-" for c in "RWXUAD")
        return f"va {self.va:#x} -> pa {self.pa:#x} {spelled}{' cow' if self.cow else ''}"


def user_leaf(run: KernelRun, satp: int, va: int) -> UserLeaf | None:
    """The valid leaf that maps the page of `va` in the address space `satp` names (a
    trap's or a system call's satp), by the harness's own walk (harness/mmu); None if
    no valid leaf maps it. Whatever the leaf's permissions: a page U may not write, or
    not even read, is still a mapped page."""
    page = va - va % PAGE_SIZE
    w = walk(run.machine.memory, satp, page, xlen=run.machine.xlen)
    last = w.steps[-1].pte if w.steps else None
    if last is None or not last.valid or not last.leaf:
        return None
    return UserLeaf(page, int(last.ppn) * PAGE_SIZE, last.raw)


def stop_at_syscall(run: KernelRun, name: str, within: int = DEFAULT_MAX_INSNS) -> TrapEvent:
    """Run until the next system call `name` from U (any process) and stop on its
    ecall's trap, before the kernel has done any of it: the page tables are as the
    caller left them, and the trap's satp names the caller's address space. A test
    program makes such a call (getppid, say) where the grader should look."""
    number = next((n for n, spec in run.flow.specs.items() if spec.name == name), None)
    if number is None:
        run.fail(f"the kernel has no system call {name}")
    assert number is not None
    result = run.run(within, until=[AfterSyscall(number)])
    if not isinstance(result.event, TrapEvent):
        run.fail(f"the run ended before any {name} system call" if run.finished else
                 f"expected a {name} system call within {within:,} instructions", ending=True)
    assert isinstance(result.event, TrapEvent)
    return result.event


def resumed_at(run: KernelRun, trap: TrapEvent) -> XretEvent | None:
    """The first sret into U after `trap`: where the kernel went back to user code,
    and in which address space (its satp). None if no sret to U followed (yet)."""
    log = run.flow.log
    for seq, rec in iter_records(log, trap.seq + 1):
        if rec[KIND] == XRET and rec[TO] == Priv.U:
            event = log[seq]
            assert isinstance(event, XretEvent)
            return event
    return None


# -- frame pointers ---------------------------------------------------------------------
@dataclass(frozen=True)
class FrameWalk:
    """The return addresses a frame-pointer backtrace from here must print."""

    addresses: list[int]
    stack: tuple[int, int]


def _stack_bounds(run: KernelRun, fp: int) -> tuple[int, int]:
    image = run.kernel_image
    low, high = image.symbol("boot_stack"), image.symbol("boot_stack_top")
    if low is not None and high is not None and low <= fp <= high:
        return low, high
    stack = kernel_layout(image.path, run.machine.xlen).kernel_stack(fp)
    return stack if stack is not None else (fp, fp)   # not a kernel stack: walk nothing


def walk_frames(run: KernelRun, first: int, fp: int) -> FrameWalk:
    """`first`, then the saved return address of each frame from `fp` on: at fp - 1
    word, the caller's fp at fp - 2 words, while fp stays inside its stack."""
    word = run.machine.xlen // 8
    low, high = _stack_bounds(run, fp)
    out = [first]
    for _ in range(64):
        if not (low + 2 * word < fp < high and fp % word == 0):
            break
        raw = run.machine.read_virtual(fp - 2 * word, 2 * word)
        caller_fp = int.from_bytes(raw[:word], "little")
        out.append(int.from_bytes(raw[word:], "little"))
        fp = caller_fp
    return FrameWalk(out, (low, high))


def printed_backtrace(text: str, nth: int = 0) -> list[int] | None:
    """The addresses under the nth `backtrace:` line, or None if there is none."""
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == "backtrace:"]
    if len(starts) <= nth:
        return None
    out = []
    for line in lines[starts[nth] + 1:]:
        m = HEX.match(line)
        if m is None:
            break
        out.append(int(m.group(1), 16))
    return out


def backtrace_at_entry(run: KernelRun, function: str, within: int) -> FrameWalk:
    """Run until the kernel enters `function`; what a backtrace() called there by
    its caller must print (its return address, then the caller's chain)."""
    target = run.kernel_image.symbol(function)
    if target is None:
        run.fail(f"the kernel has no function {function}")
    assert target is not None
    result = run.run(within, until=[AtAddress(target)])
    if result.condition is None:
        run.fail(f"the kernel never called {function}")
    hart = run.machine.hart
    return walk_frames(run, hart.x(1), hart.x(8))


def backtrace_in(run: KernelRun, function: str, within: int) -> FrameWalk:
    """Stop when the kernel enters `function` and make that call a call of
    backtrace() instead (same return address, same caller frames); when backtrace()
    returns, restore every register and let `function` run after all. Returns what
    that backtrace() must print."""
    backtrace = run.kernel_image.symbol("backtrace")
    if backtrace is None:
        run.fail("the kernel has no function backtrace")
    assert backtrace is not None
    expected = backtrace_at_entry(run, function, within)
    hart = run.machine.hart
    saved_pc, saved = hart.pc, [hart.x(n) for n in range(32)]
    hart.pc = backtrace
    result = run.run(within, until=[AtAddress(saved[1])])
    if result.condition is None:
        run.fail("backtrace() did not return to its caller")
    for n in range(1, 32):
        hart.set_x(n, saved[n])
    hart.pc = saved_pc
    return expected


# -- alarms (sigalarm) ------------------------------------------------------------------
@dataclass
class AlarmLoop:
    """One alarm as the trace shows it: the timer interrupt from U after which the
    kernel entered the handler, that sret, the events of the process in between
    (traps from U and srets to U: ticks that stopped the handler, its system calls),
    the handler's sigreturn ecall and the sret after it (None if not seen)."""

    tick: TrapEvent
    enter: XretEvent
    inside: list[Event] = field(default_factory=list)
    sigreturn: TrapEvent | None = None
    back: XretEvent | None = None


@dataclass
class AlarmTrace:
    """A process's alarm, from its sigalarm(ticks, handler) call to its next sigalarm
    call (the stop: sigalarm(0, 0), or a new setting), if any.

    `due` is what the kernel must do, computed from the trace: the timer interrupts
    from U (the process's ticks) that complete an interval while no alarm handler runs
    (the count restarts at each alarm and stops at the interval while a handler runs,
    so the first tick after its sigreturn fires). `entered` is what it did: the ticks
    after which its sret went to the handler. A process with one thread and no
    signal handler running is assumed (a handler running holds the alarm back too,
    and the trace tells threads apart by satp alone)."""

    satp: int
    ticks: int
    handler: int
    start: SyscallRecord
    stop: SyscallRecord | None
    due: list[int] = field(default_factory=list)       # seqs of timer interrupts
    entered: list[int] = field(default_factory=list)   # seqs of timer interrupts
    loops: list[AlarmLoop] = field(default_factory=list)
    ticks_while_set: int = 0       # timer interrupts from U between start and stop
    ticks_after_stop: int = 0
    entered_after_stop: int = 0    # handler entries after the stop (there must be none)


def alarm_trace(run: KernelRun, nth: int = 0) -> AlarmTrace:
    """The nth successful sigalarm(ticks > 0, handler) call of the run and what the
    trace shows of that alarm. Fails the test if there is no such call."""
    trace = run.trace
    calls = trace.syscalls("sigalarm")
    setting = [c for c in calls if c.ret == 0 and to_signed(c.args[0], 32) > 0]
    if len(setting) <= nth:
        run.fail(f"expected at least {nth + 1} sigalarm(ticks > 0, handler) call(s) that "
                 f"returned 0; saw: {', '.join(str(c) for c in calls) or 'none'}")
    start = setting[nth]
    satp, ticks, handler = start.satp, to_signed(start.args[0], 32), start.args[1]
    stop = next((c for c in calls if c.satp == satp and c.entry_seq > start.entry_seq),
                None)
    end = stop.entry_seq if stop is not None else None
    sigreturns = {c.entry_seq for c in trace.syscalls("sigreturn") if c.satp == satp}
    out = AlarmTrace(satp, ticks, handler, start, stop)
    count, running = 0, False
    last: TrapEvent | None = None
    loop: AlarmLoop | None = None
    for e in trace.events:
        if e.seq < start.entry_seq or e.satp != satp:
            continue
        after_stop = end is not None and e.seq >= end
        if isinstance(e, TrapEvent) and e.priv_from == Priv.U:
            if e.interrupt and e.code == Irq.S_TIMER:
                if after_stop:
                    out.ticks_after_stop += 1
                else:
                    out.ticks_while_set += 1
                    count = min(count + 1, ticks)
                    if count == ticks and not running:
                        out.due.append(e.seq)
                        count, running = 0, True
            if e.seq in sigreturns:
                running = False
            if loop is not None and loop.sigreturn is None:
                if e.seq in sigreturns:
                    loop.sigreturn = e
                else:
                    loop.inside.append(e)
            last = e
        elif isinstance(e, XretEvent) and e.insn == "sret" and e.priv_to == Priv.U:
            if loop is not None and loop.sigreturn is not None and loop.back is None:
                loop.back = e
            elif (e.pc == handler and last is not None and last.interrupt
                  and last.code == Irq.S_TIMER and last.epc != handler):
                if after_stop:
                    out.entered_after_stop += 1
                else:
                    out.entered.append(last.seq)
                    loop = AlarmLoop(last, e)
                    out.loops.append(loop)
            elif loop is not None and loop.sigreturn is None:
                loop.inside.append(e)
    return out
