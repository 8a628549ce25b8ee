"""The teaching kernel on several harts (kernel/smp.c, spinlock.c): the boot hart starts
the others through SBI HSM, every hart runs user code from its own scheduler, the
kernel's test programs pass on three harts, a seed gives the same run every time, and
lockstat/freemem report what the kernel has."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from kernel.test_privlab_kernel import images
from privlab.abi.csr import Exc, Priv
from privlab.boot import user_boot
from privlab.devices import Console
from privlab.machine import Machine, RunResult, Stop, load_elf
from privlab.machine.assemble import boot_system
from privlab.trace import TrapEvent, XretEvent

SBI_EXT_HSM = 0x48534D
HSM_HART_START = 0


def boot_smp(prog: str, *args: str, harts: int, seed: int = 0,
             arch: str = "rv64") -> Machine:
    im = images(arch)
    ub = user_boot(im.users, prog, args)
    m = Machine(int(arch[2:]), console=Console(), smp=harts, smp_seed=seed)
    boot_system(m, load_elf(im.firmware), load_elf(im.kernel), ub.initrd, ub.bootargs)
    return m


def run_smp(prog: str, *args: str, harts: int, seed: int = 0, arch: str = "rv64",
            budget: int = 6_000_000_000) -> tuple[Machine, RunResult]:
    m = boot_smp(prog, *args, harts=harts, seed=seed, arch=arch)
    return m, m.run(max_insns=budget)


def test_the_boot_hart_starts_every_other_hart_and_each_runs_user_code() -> None:
    m, r = run_smp("forktree", harts=3, seed=1)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), m.console.text()[-2000:]
    assert "forktree: 15 of 15 processes" in m.console.text()
    # Hart 0 asks the firmware to start harts 1 and 2 (HSM hart_start, S -> M ecalls
    # with a7 = HSM, a6 = HART_START, a0 = the hart), once each, in order.
    starts = [e for e in m.events if isinstance(e, TrapEvent) and not e.interrupt
              and e.code == Exc.SUPERVISOR_ECALL and e.args[7] == SBI_EXT_HSM
              and e.args[6] == HSM_HART_START]
    assert [(e.hart, e.args[0]) for e in starts] == [(0, 1), (0, 2)]
    # Each started hart's first trip into S: the firmware's mret to S at _secondary.
    entry = load_elf(images("rv64").kernel).symbol("_secondary")
    assert entry is not None
    first_s = {h: next(e for e in m.events if isinstance(e, XretEvent) and e.hart == h
                       and e.priv_to == Priv.S) for h in (1, 2)}
    assert all(e.pc == entry and e.insn == "mret" for e in first_s.values())
    # Every hart enters U (an sret from S to U) and takes traps from U: the harts
    # really share the work.
    to_user = Counter(e.hart for e in m.events
                      if isinstance(e, XretEvent) and e.priv_to == Priv.U)
    from_user = Counter(e.hart for e in m.events
                        if isinstance(e, TrapEvent) and e.priv_from == Priv.U)
    assert set(to_user) == {0, 1, 2} and set(from_user) == {0, 1, 2}, (to_user, from_user)


@pytest.mark.parametrize("prog, harts", [("usertests", 3), ("threadtests", 2),
                                         ("sigtests", 3)])
def test_the_kernels_test_programs_pass_on_several_harts(prog: str, harts: int) -> None:
    m, r = run_smp(prog, harts=harts, seed=2)
    out = m.console.text()
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), out[-2000:]
    assert not re.search(r"^FAIL ", out, re.M)
    assert re.search(rf"^{prog}: \d+ passed, 0 failed$", out, re.M), out[-500:]


def test_one_seed_gives_the_same_run_and_another_seed_another_interleaving() -> None:
    def run(seed: int) -> tuple[str, list[tuple[int, dict[str, object]]]]:
        m, r = run_smp("lab_kalloc", "contend", "t", "3", "2", "16", harts=3, seed=seed)
        assert (r.stop, r.exit_status) == (Stop.HALT, 0), m.console.text()
        return m.console.text(), [(e.hart, e.to_json()) for e in m.events]

    first, again, other = run(4), run(4), run(5)
    assert first == again
    assert first[1] != other[1]
    # Each run freed what it allocated; only the interleaving (and so the number of
    # times a hart found a lock taken) differs.
    for console, _ in (first, other):
        assert "PASS t" in console


def test_lockstat_and_freemem_report_the_kernels_locks_and_free_memory() -> None:
    m, r = run_smp("lab_kalloc", "contend", "tok", "2", "3", "8", harts=2, seed=0)
    out = m.console.text()
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), out
    stats = re.search(r"^kmem: (\d+) locks, (\d+) acquires, (\d+) spins$", out, re.M)
    assert stats is not None, out
    # The reference allocator: one kmem lock per hart the kernel knows (NCPU = 8), and
    # at least one acquisition per page each child touched and gave back.
    locks, acquires, _ = map(int, stats.groups())
    assert locks == 8 and acquires >= 2 * 2 * 3 * 8
    assert "PASS tok" in out


def test_rv32_kernel_runs_on_several_harts_too() -> None:
    m, r = run_smp("usertests", "lab_spawn", "lab_task_info", harts=2, seed=3, arch="rv32")
    out = m.console.text()
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), out[-2000:]
    assert "PASS lab_spawn" in out
