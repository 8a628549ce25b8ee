"""How a stopped run is reported (harness/cli/console.py, diagnose.py): every code
address named as symbol+offset and file:line, and the process table with each
sleeping process's wait channel named."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

from privlab.api import Session
from privlab.build.images import Images, build_images
from privlab.cli.console import report_run
from privlab.cli.diagnose import describe_machine, info_for
from privlab.machine import Stop
from privlab.paths import KERNEL_DIR

NAMED = r"0x[0-9a-f]+ \w+(\+0x[0-9a-f]+)? \S+\.[chS]:\d+"


def test_a_budget_stop_names_the_pc_and_every_trap_epc(images: Images) -> None:
    s = Session.boot("hello", images=images)
    try:
        r = s.run(2_000_000)
        assert r.stop is Stop.BUDGET
        out = io.StringIO()
        report_run(r, 2_000_000, out, machine=s.machine)     # images read from the machine
        text = out.getvalue()
        assert re.search(rf"exhausted at pc {NAMED} in [MS]-mode", text), text
        epcs = re.findall(r" epc (\S+ \S+ \S+) tval", text)
        assert epcs and all(re.fullmatch(NAMED, e) for e in epcs), text
    finally:
        s.close()


def test_info_for_a_machine_finds_the_firmware_and_the_kernel(images: Images) -> None:
    s = Session.boot("hello", images=images)
    try:
        info = info_for(s.machine)
        assert info.kernel is not None and info.kernel.name == "kernel.elf"
        assert info.firmware is not None and info.firmware.name != "kernel.elf"
    finally:
        s.close()


def test_sleeping_parents_wait_on_their_own_proc_slot_named(images: Images) -> None:
    """forktree 2: the parents sleep in waitpid on their own struct proc, named as
    the slot and pid instead of an address."""
    s = Session.boot("forktree", args=["2"], images=images)
    try:
        s.run_until_syscall("waitpid")
        s.run(200_000)
        lines = describe_machine(s.machine, s.info)
        assert lines[0] == "processes:"
        sleeping = [line for line in lines if "SLEEPING" in line]
        assert sleeping and all(re.search(r"waits on proc\[\d+\] \(pid \d+\)$", line)
                                for line in sleeping), lines
        assert not any(re.search(r"waits on 0x", line) for line in lines)
    finally:
        s.close()


# -- planted bugs: what a hang looks like ------------------------------------------------
# Kernels with one bug each, made as the grader's mutation tests make them
# (tests/grade/conftest.py: the reference kernel with an edit).
READ_WAKES_WRITER = ("    done++;\n  }\n  wakeup(&pi->nwrite);\n", "    done++;\n  }\n")
TIMER_ON = ("  w_sie(r_sie() | SIE_STIE);  // taken only in U: the kernel runs with "
            "sstatus.SIE = 0\n  timer_next();\n", "")


def _planted(root: Path, edits: dict[str, tuple[str, str]]) -> Images:
    kernel = root / "kernel"
    shutil.copytree(KERNEL_DIR, kernel)
    for name, (old, new) in edits.items():
        text = (kernel / name).read_text()
        assert old in text, f"{name} no longer contains {old!r}"
        (kernel / name).write_text(text.replace(old, new, 1))
    return build_images("rv64", kernel_dir=kernel, out_dir=root / "out", listings=False)


def _report(s: Session, budget: int) -> list[str]:
    r = s.run(budget)
    out = io.StringIO()
    report_run(r, budget, out, machine=s.machine, info=s.info)
    return out.getvalue().splitlines()


PIPE_SLEEPERS = [
    "processes:",
    "  pid 1   SLEEPING  lab_pipe  waits on pipe+0x204 (nwrite)",   # the writer
    "  pid 2   SLEEPING  lab_pipe  waits on pipe+0x200 (nread)",    # the reader
]


def test_a_reader_that_never_wakes_the_writer_is_a_lost_wakeup_without_a_timer(
        tmp_path: Path) -> None:
    """piperead() forgets wakeup(&pi->nwrite) and the kernel arms no timer (lab 6's
    handout): 64 KiB through a 512-byte pipe stops with both ends asleep, and the hart
    waits in wfi for an interrupt nothing will raise."""
    images = _planted(tmp_path, {"pipe.c": READ_WAKES_WRITER, "trap.c": TIMER_ON})
    s = Session.boot("lab_pipe", ["large", "tok"], images=images)
    try:
        lines = _report(s, 50_000_000)
    finally:
        s.close()
    assert re.match(r"privlab: .*wfi.* \(pc 0x[0-9a-f]+ \w+", lines[0]), lines
    start = lines.index("processes:")
    assert lines[start:start + 4] == [
        *PIPE_SLEEPERS,
        "it looks like: every process is asleep and no timer is armed: a lost wakeup?"], lines


def test_the_same_lost_wakeup_with_the_timer_ticking(tmp_path: Path) -> None:
    images = _planted(tmp_path, {"pipe.c": READ_WAKES_WRITER})
    s = Session.boot("lab_pipe", ["large", "tok"], images=images)
    try:
        lines = _report(s, 20_000_000)
    finally:
        s.close()
    assert re.fullmatch(rf"privlab: instruction budget of 20000000 exhausted at pc {NAMED} "
                        r"in [MSU]-mode", lines[0]), lines
    assert lines[1:5] == [
        *PIPE_SLEEPERS,
        "it looks like: every process is asleep (the timer still ticks): a lost wakeup?"], lines


DEADLOCK = re.compile(r"it looks like: hart (\d) spins in acquire\(kmem\[(\d)\]\) held by "
                      r"hart (\d), which waits for kmem\[(\d)\]: deadlock")


def test_harts_that_steal_frames_holding_their_own_lock_deadlock(tmp_path: Path) -> None:
    """kalloc() takes another hart's kmem lock while it holds its own (the locks lab's
    mutation, tests/grade/test_mutations.py): under some seed, harts wait for each
    other's locks for ever. Every hart is named spinning in acquire(), and the verdict
    names the lock each one holds: hart K holds its own kmem[K]."""
    from grade.test_mutations import STEAL_HOLDING_OWN_LOCK

    images = _planted(tmp_path, {"kalloc.c": STEAL_HOLDING_OWN_LOCK})
    seen = []
    for seed in (11, 1, 0, 2):    # seed 11 deadlocks with this emulator's interleaving
        s = Session.boot("lab_kalloc", ["exhaust", "tok", "3", "2", "64"], images=images,
                         smp=3, smp_seed=seed)
        try:
            lines = _report(s, 300_000_000)
        finally:
            s.close()
        seen.append(lines[-1] if lines else "")
        verdict = next((m for line in lines if (m := DEADLOCK.fullmatch(line))), None)
        if verdict is None:
            continue
        spinner, wanted, holder, waits = map(int, verdict.groups())
        assert wanted == holder != spinner and waits not in (holder,), verdict[0]
        harts = [line for line in lines if re.match(r"  hart \d  ", line)]
        assert len(harts) == 3 and lines[1] == "harts:", lines
        for k in (spinner, holder):
            assert re.fullmatch(rf"  hart {k}  S-mode  pc 0x[0-9a-f]+ acquire\+0x[0-9a-f]+ "
                                r"kernel/spinlock\.c:\d+", harts[k]), harts
        return
    raise AssertionError(f"no seed deadlocked: {seen}")
