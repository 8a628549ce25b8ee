"""The teaching kernel on privlab itself (the QEMU tests beside this file check the
same kernel on QEMU 7.2): usertests, the fuzzer, the trap flow of a write, preemption."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

import pytest
from built_images import built

from kernel.qemu_boot import boot_qemu, needs_qemu
from privlab.abi.csr import Priv
from privlab.abi.syscall_table import load_syscall_table
from privlab.boot import user_boot
from privlab.devices import Console, ScriptedInput
from privlab.machine import Machine, RunResult, Stop, load_elf
from privlab.machine.assemble import boot_system
from privlab.trace import TrapEvent, XretEvent

images = built


def boot_user(arch: str, prog: str, *args: str) -> Machine:
    im = images(arch)
    ub = user_boot(im.users, prog, args)
    m = Machine(int(arch[2:]), console=Console())
    boot_system(m, load_elf(im.firmware), load_elf(im.kernel), ub.initrd, ub.bootargs)
    return m


def run_user(arch: str, prog: str, *args: str,
             budget: int = 3_000_000_000) -> tuple[Machine, RunResult]:
    m = boot_user(arch, prog, *args)
    return m, m.run(max_insns=budget)


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_usertests_all_pass_on_privlab(arch: str) -> None:
    m, r = run_user(arch, "usertests")
    out = m.console.text()
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), out[-2000:]
    assert not re.search(r"^FAIL ", out, re.M)
    total = re.search(r"usertests: (\d+) passed, 0 failed", out)
    assert total and int(total.group(1)) >= 28


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_waitpid_blocks_until_the_named_child_exits_and_getppid_names_the_parent(
        arch: str) -> None:
    # Children 2, 3, 4 sleep 10, 20, 30 ms and exit 10, 11, 12 (99 if getppid() is not
    # the parent's pid); the parent waits for them youngest first, so each waitpid
    # must block. The first process's parent is 0.
    m, r = run_user(arch, "waitpid")
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), m.console.text()
    assert m.console.text().splitlines()[-5:] == [
        "waitpid: pid 1, parent 0",
        "waitpid: child 4 exited with 12",
        "waitpid: child 3 exited with 11",
        "waitpid: child 2 exited with 10",
        "waitpid: ok"]


def test_fuzzer_survives_and_the_kernel_keeps_scheduling() -> None:
    m, r = run_user("rv64", "fuzz")
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), m.console.text()[-2000:]
    assert "panic" not in m.console.text()


@pytest.mark.parametrize("seed", [4, 8])
def test_fuzzer_on_the_file_system_leaves_the_kernel_and_the_disk_sound(seed: int) -> None:
    """With the disk: random file calls (paths the fuzzer knows, small fds) create,
    write, link and remove files. Seed 8 once found mip.SEIP latched by the firmware's
    csrs (a trap storm); afterwards fsck must find the disk consistent."""
    from privlab.devices.disk import Drive
    from privlab.fs import check
    im = images("rv64")
    ub = user_boot(im.users, "fuzz", (str(seed), "5000"))
    m = Machine(64, console=Console(),
                drive=Drive.in_memory(im.disk.read_bytes(), "fs.img"))
    boot_system(m, load_elf(im.firmware), load_elf(im.kernel), ub.initrd, ub.bootargs)
    r = m.run(max_insns=3_000_000_000)
    out = m.console.text()
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), out[-2000:]
    assert out.splitlines()[-1] == "fuzz: kernel survived" and "panic" not in out
    assert m.disk is not None
    assert check(m.disk.contents()) == []


def test_getpid_benchmark_program_makes_exactly_n_calls() -> None:
    # benchmarks/syscall_roundtrip.py times `getpid N`: N U-mode ecalls of getpid.
    m, r = run_user("rv64", "getpid", "1000")
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), m.console.text()[-500:]
    assert m.console.text().endswith("getpid: 1000 calls, pid 1\n")
    getpid = syscall_number("getpid")
    calls = [e for e in m.events if isinstance(e, TrapEvent) and e.code == 8
             and e.args[7] == getpid]
    assert len(calls) == 1000


def syscall_number(name: str) -> int:
    return next(s.number for s in load_syscall_table() if s.name == name)


def events_between(m: Machine, first: int, last: int) -> Iterator[TrapEvent | XretEvent]:
    for i in range(first, last + 1):
        yield m.events[i]


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_write_from_u_is_one_u_to_s_trap_and_its_matching_sret(arch: str) -> None:
    m, r = run_user(arch, "hello")
    assert r.exit_status == 0
    write = syscall_number("write")
    u_traps = [e for e in m.events if isinstance(e, TrapEvent) and e.priv_from == Priv.U]
    writes = [e for e in u_traps if e.code == 8 and e.args[7] == write]
    assert len(writes) == 1, "hello prints with a single write"
    trap = writes[0]
    assert (trap.interrupt, trap.code, trap.priv_to, trap.tval) == (False, 8, Priv.S, 0)
    # Everything until the sret that returns to U is kernel work: S->M SBI console calls
    # each answered by an mret to S, then exactly one sret to U at epc + 4.
    later = [e for e in m.events if e.seq > trap.seq]
    back = next(i for i, e in enumerate(later) if e.priv_to == Priv.U)
    between, ret = later[:back], later[back]
    assert isinstance(ret, XretEvent)
    assert (ret.insn, ret.priv_from, ret.pc) == ("sret", Priv.S, trap.epc + 4)
    assert ret.a0 == len("Hello, world!\n")
    sbi = [e for e in between if isinstance(e, TrapEvent)]
    assert sbi, "the console goes through the firmware"
    assert all((e.code, e.priv_from, e.priv_to) == (9, Priv.S, Priv.M) for e in sbi)
    mrets = [e for e in between if isinstance(e, XretEvent)]
    assert len(mrets) == len(sbi)
    assert all((e.insn, e.priv_to) == ("mret", Priv.S) for e in mrets)


def test_timer_preemption_interleaves_two_cpu_bound_processes() -> None:
    m, r = run_user("rv64", "compute", "3000000", "2")
    assert r.exit_status == 0
    tags = [line[0] for line in m.console.text().splitlines() if re.match(r"^[AB] \d+$", line)]
    assert sorted(tags) == ["A"] * 10 + ["B"] * 10
    switches = sum(1 for a, b in itertools.pairwise(tags) if a != b)
    assert switches >= 2, f"no interleaving: {''.join(tags)}"
    timer = [e for e in m.events if isinstance(e, TrapEvent) and e.interrupt]
    assert {(e.code, e.priv_to) for e in timer} == {(7, Priv.M), (5, Priv.S)}


def boot_privlab_console(bootargs: str, stdin: str) -> tuple[str, int]:
    im = images("rv64")
    m = Machine(64, console=Console(), uart_input=ScriptedInput(stdin.encode()))
    boot_system(m, load_elf(im.firmware), load_elf(im.kernel), im.initrd.read_bytes(),
                bootargs)
    r = m.run(max_insns=3_000_000_000)
    assert r.stop is Stop.HALT, r.message
    return m.console.text(), r.status


@needs_qemu
@pytest.mark.parametrize(("bootargs", "stdin"), [
    ("", "hello x\nnope\nsbrk\nexit 3\n"),
    ("init=usertests exec waitpid kill_sret kill_jump0", ""),
])
def test_same_kernel_and_initrd_give_the_same_console_on_privlab_and_qemu(
        bootargs: str, stdin: str) -> None:
    ours, status = boot_privlab_console(bootargs, stdin)
    reference = boot_qemu(images("rv64"), bootargs=bootargs or None, stdin=stdin)
    assert ours == reference.output
    assert status == reference.status
