"""Threads and synchronisation (kernel/thread.c, kernel/sync.c) and the blocking
sleep (kernel/clock.c): threadtests' exact console on privlab (RV64 and RV32) and on
QEMU 7.2; a thread's trapframe and stack where memlayout.h puts them, seen from the
harness; a sleep that blocks lets the clock skip ahead."""

from __future__ import annotations

import re

import pytest

from kernel.qemu_boot import boot_qemu, needs_qemu
from kernel.test_privlab_kernel import images as images_for
from kernel.test_privlab_kernel import run_user
from privlab.api import Session
from privlab.build.images import Images
from privlab.kernelinfo.symbols import ElfSymbols
from privlab.machine import Stop

CASES = ["ids_and_exit_codes", "thread_function_may_return", "waittid_errors",
         "create_errors", "at_most_nthread", "tids_are_reused_after_waittid",
         "threads_share_memory_and_files", "main_exit_ends_every_thread",
         "a_fault_in_a_thread_kills_the_process", "sigkill_ends_every_thread",
         "exec_refused_with_threads", "fork_in_a_thread_copies_that_thread",
         "blocking_mutex_excludes", "spin_mutex_excludes", "without_a_mutex_updates_are_lost",
         "mutex_errors", "exiting_thread_releases_its_mutex", "only_the_owner_unlocks",
         "spin_waiter_lets_a_sleeping_holder_wake", "bounded_buffer_with_semaphores",
         "semaphore_errors",
         "condvar_signal_wakes_the_longest_waiter", "condvar_errors",
         "sleep_blocks_for_the_time_asked", "sleepers_wake_in_order"]

# The kernel's lines before the PASS of the two cases that end a process from
# outside its main thread: thread 2's store to address 16, and the parent's SIGKILL.
FAULT = re.compile(r"\[kernel\] pid 12 tid 2 \(threadtests\) killed: store_page_fault "
                   r"sepc=(0x[0-9a-f]+) stval=0x10")
KILLED = "[kernel] pid 14 (threadtests) killed by signal SIGKILL"


def check_console(out: str, images: Images) -> None:
    """out is threadtests' whole console: every case passes, with exactly the two
    kill lines, and the fault's sepc is inside fault_in_thread."""
    lines = out.splitlines()
    fault = FAULT.fullmatch(lines.pop(CASES.index("a_fault_in_a_thread_kills_the_process")))
    assert fault, out
    start, size = ElfSymbols(images.users["threadtests"]).by_name["fault_in_thread"]
    assert start <= int(fault.group(1), 16) < start + size
    want = [f"PASS {c}" for c in CASES]
    want.insert(CASES.index("sigkill_ends_every_thread"), KILLED)
    assert lines == [*want, f"threadtests: {len(CASES)} passed, 0 failed"]


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_threadtests_pass_with_the_exact_console(arch: str) -> None:
    m, r = run_user(arch, "threadtests")
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), m.console.text()
    check_console(m.console.text(), images_for(arch))


@needs_qemu
def test_threadtests_give_the_same_console_on_qemu(images: Images) -> None:
    boot = boot_qemu(images, bootargs="quiet init=threadtests", icount=True)
    check_console(boot.output, images)
    assert boot.status == 0


def test_a_blocking_sleep_skips_ahead_where_a_busy_one_spins(images: Images) -> None:
    """sleep -b 2000 blocks in the sleep call: the hart waits in wfi and the clock
    jumps to each timer interrupt, so two seconds of guest time cost ~no instructions
    beyond the boot (3.4 M); the yield loop of `sleep 20` retires one per nanosecond
    (at --icount-shift 0: the numbers below are nanoseconds)."""
    retired = {}
    for args in (["-b", "2000"], ["20"]):
        s = Session.boot("sleep", args, images=images, bundled_disk=False, icount_shift=0)
        r = s.run(max_insns=1_000_000_000)
        assert (r.stop, r.exit_status) == (Stop.HALT, 0)
        assert s.console == f"sleep: {args[-1]} ms\n"
        retired[args[0]] = r.instret
        s.close()
    assert retired["-b"] < 5_000_000 < 20_000_000 < retired["20"]


def test_a_threads_trapframe_and_stack_are_where_memlayout_puts_them(images: Images) -> None:
    """While thread 1 of threaddemo waits for the mutex: the process's page table maps
    thread 1's trapframe at THREAD_TRAPFRAME(1) without U (the slot's own trapframe
    page), its stack's pages below it with U, and the guard page below those not at
    all; after waittid, both are gone."""
    from privlab.abi.csr import Csr
    from privlab.abi.paging import PteFlag
    from privlab.build.asm_offsets import kernel_layout
    from privlab.mmu.walk import walk

    layout = kernel_layout(images.kernel, 64)
    tf1, stack = layout.trapframe_of(1), layout.thread_stack(1)
    assert tf1 is not None and stack is not None and stack == (tf1 - 8 * 0x1000, tf1)
    s = Session.boot("threaddemo", images=images, capture=True, bundled_disk=False)
    s.run_until_syscall("yield")
    s.run_until_syscall("write")          # main's printf: thread 1 sleeps in mutex_lock
    satp = s.machine.hart.csr(Csr.SATP)

    def leaf(va: int) -> PteFlag | None:
        """The flags of va's leaf PTE, whatever S-mode may do with it; None if unmapped."""
        last = walk(s.machine.memory, satp, va).steps[-1].pte
        return last.flags if last is not None and last.valid else None

    table = s.processes()
    thread1 = next(p for p in table.processes if p.value.get_int("tid") == 1)
    tf_frame = thread1.value.get_int("trapframe")
    w = walk(s.machine.memory, satp, tf1)
    assert w.pa == tf_frame and leaf(tf1) == PteFlag.V | PteFlag.R | PteFlag.W | PteFlag.A \
        | PteFlag.D  # no U: the user cannot touch it, uservec (in S) writes it
    assert all(PteFlag.U in (leaf(va) or 0) for va in range(stack[0], stack[1], 0x1000))
    assert leaf(stack[0] - 0x1000) is None
    r = s.run()
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)
    assert s.console == ("threaddemo: main holds the mutex, thread 1 waits for it\n"
                         "threaddemo: thread 1 exited with 7, counter 1\n")
    s.close()


def test_the_timeline_pairs_each_threads_calls_and_names_the_thread(
        capsys: pytest.CaptureFixture[str]) -> None:
    """threaddemo's timeline: thread 1's mutex_lock is made while main holds the
    mutex and returns only after main's unlock (rows between belong to main); the
    rows name the thread; thread 1's exit(7) is what main's waittid returns."""
    from privlab.cli.main import main
    assert main(["trace", "--no-drive", "--syscall", "mutex_lock,mutex_unlock,waittid,exit,"
                 "yield", "--user", "threaddemo"]) == 0
    events = [line[45:].rstrip() for line in capsys.readouterr().out.splitlines()
              if line[37:45].strip() in ("U▸S", "U")]
    calls = [re.sub(r"  at \w+\+0x[0-9a-f]+$|  to \w+\+0x[0-9a-f]+$", "", e) for e in events]
    assert calls == [
        "user_ecall  mutex_lock(0)  pid 1",
        "sret  → 0  mutex_lock  pid 1",
        "user_ecall  yield()  pid 1",
        "sret  enter pid 1 (threaddemo) thread 1  pid 1 tid 1  to worker",   # its first run
        "user_ecall  mutex_lock(0)  pid 1 tid 1",   # main holds the mutex: it sleeps
        "sret  → 0  yield  pid 1 tid 0",            # the process has two threads now
        "user_ecall  mutex_unlock(0)  pid 1 tid 0",
        "sret  → 0  mutex_unlock  pid 1 tid 0",
        "user_ecall  waittid(1)  pid 1 tid 0",
        "sret  → 0  mutex_lock  pid 1 tid 1",       # woken by the unlock
        "user_ecall  mutex_unlock(0)  pid 1 tid 1",
        "sret  → 0  mutex_unlock  pid 1 tid 1",
        "user_ecall  exit(7)  pid 1 tid 1",
        "sret  → 7  waittid  pid 1 tid 0",
        "user_ecall  exit(0)  pid 1 tid 0",
    ]


def test_inspect_lists_threads_what_each_waits_on_and_the_mutexes_held(images: Images) -> None:
    """At main's first write in threaddemo: main (tid 0) runs holding mutex 0; thread 1
    sleeps waiting on mutex 0. At thread 1's exit: main waits in waittid on thread 1.
    The rendering at the golden width, trap-frame addresses masked."""
    from io import StringIO

    from privlab.inspect import ProcessTableView, make_console

    def render(s: Session) -> list[str]:
        out = StringIO()
        make_console(width=100, file=out, color=False).print(ProcessTableView(s.processes()))
        return [re.sub(r"0x[0-9a-f]+", lambda m: "0x" + "#" * (len(m[0]) - 2), line).rstrip()
                for line in out.getvalue().splitlines()]

    s = Session.boot("threaddemo", images=images, capture=True, bundled_disk=False)
    s.run_until_syscall("write")
    assert render(s) == [
        "Processes",
        "    slot  pid  tid  state     name        parent  trapframe   xstatus  waits on  holds",
        " ▶     0    1    0  RUNNING   threaddemo       -  0x########  0                  mutex 0",
        "       1    1    1  SLEEPING  threaddemo       -  0x########  0        mutex 0",
    ]
    s.run_until_syscall("exit")                                 # thread 1's exit(7)
    assert render(s) == [
        "Processes",
        "    slot  pid  tid  state     name        parent  trapframe   xstatus  waits on  holds",
        "       0    1    0  SLEEPING  threaddemo       -  0x########  0        thread 1",
        " ▶     1    1    1  RUNNING   threaddemo       -  0x########  0",
    ]
    s.close()


def test_the_fuzzer_reaches_the_thread_and_sync_calls_and_the_kernel_survives(
        images: Images) -> None:
    """Over three seeds, each surviving: the fuzzer draws call numbers from the syscall
    table, so every new call changes the later draws, and one seed alone may miss a
    call. Deadlock detection gets turned on, and refuses something."""
    made: set[str] = set()
    condvar_wait_refused = deadlock_refused = False
    for seed in ("1", "2", "3"):
        s = Session.boot("fuzz", [seed, "3000"], images=images, bundled_disk=False)
        r = s.run(max_insns=3_000_000_000)
        assert (r.stop, r.exit_status) == (Stop.HALT, 0)
        assert s.console.endswith("fuzz: kernel survived\n")
        made |= {c.name for c in s.syscalls if c.ret is not None and c.ret >= 0}
        condvar_wait_refused |= any(c.name == "condvar_wait" and c.ret == -1
                                    for c in s.syscalls)
        deadlock_refused |= any(c.name in ("mutex_lock", "semaphore_down") and c.ret == -0xDEAD
                                for c in s.syscalls)
        s.close()
    assert {"thread_create", "waittid", "mutex_create", "mutex_lock", "semaphore_create",
            "semaphore_down", "condvar_create", "condvar_signal", "sleep",
            "enable_deadlock_detect"} <= made
    assert condvar_wait_refused and deadlock_refused
