"""The alarm (kernel/alarm.c, lab 12's reference): every mode of userland/lab_alarm.c
passes on privlab (RV64 and RV32, at the grader's 1000 Hz and at the kernel's default
100 Hz) and on QEMU 7.2 (with -icount, so that its clock, like privlab's, follows the
instructions: the spins of the register mode are counted in instructions)."""

from __future__ import annotations

import pytest

from kernel.qemu_boot import boot_qemu, needs_qemu
from kernel.test_privlab_kernel import images as built
from privlab.abi.csr import Irq, Priv
from privlab.api import Session
from privlab.boot import user_boot
from privlab.build.images import Images
from privlab.devices import Console
from privlab.kernelinfo.symbols import ElfSymbols
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_system

# (mode, arguments after the token) at 1000 Hz: one tick per 1,000,000 instructions.
MODES = [
    ("once", "2"),
    ("many", "2 10"),
    ("slow", "2 12"),
    ("a0", "1"),
    ("keep", "2 8 4"),
    ("regs", "7 2 160000 3"),
    ("count", "3 160000"),
    ("signals", "2 6"),
    ("bad", "2149580800"),      # PLATFORM_KERNEL_BASE
    ("refuse", ""),
    ("exec", "2 10"),
]


def run_mode(arch: str, mode: str, args: str, hz: int) -> tuple[str, Stop, int | None]:
    im = built(arch)
    ub = user_boot(im.users, "lab_alarm", [mode, "tok", *args.split()],
                   flags=[f"timer_hz={hz}"])
    m = Machine(int(arch[2:]), console=Console())
    boot_system(m, load_elf(im.firmware), load_elf(im.kernel), ub.initrd, ub.bootargs)
    r = m.run(max_insns=2_000_000_000)
    return m.console.text(), r.stop, r.exit_status


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
@pytest.mark.parametrize(("mode", "args"), MODES, ids=[m for m, _ in MODES])
def test_every_lab_alarm_mode_passes_on_privlab(arch: str, mode: str, args: str) -> None:
    out, stop, status = run_mode(arch, mode, args, 1000)
    assert (stop, status) == (Stop.HALT, 0), out
    assert out.splitlines()[-1] == "PASS tok"
    if mode == "bad":
        assert "killed: exec_page_fault sepc=0x80200000 stval=0x80200000" in out


@pytest.mark.parametrize("mode", ["many", "signals", "exec"])
def test_the_same_at_the_kernels_default_100_hz(mode: str) -> None:
    """The programs wait on the clock with a margin for ticks ten times as long as the
    grader's (`privlab run` boots at 100 Hz)."""
    args = dict(MODES)[mode]
    out, stop, status = run_mode("rv64", mode, args, 100)
    assert (stop, status, out.splitlines()[-1]) == (Stop.HALT, 0, "PASS tok"), out


@needs_qemu
@pytest.mark.parametrize("mode", ["many", "slow", "regs", "signals", "bad", "exec"])
def test_lab_alarm_passes_on_qemu(images: Images, mode: str) -> None:
    boot = boot_qemu(images, bootargs=f"quiet timer_hz=1000 init=lab_alarm {mode} tok "
                                      f"{dict(MODES)[mode]}", icount=True)
    assert boot.output.splitlines()[-1] == "PASS tok", boot.output
    assert boot.status == 0


def test_the_trace_shows_each_alarm_as_a_loop(images: Images) -> None:
    """`privlab trace --user lab_alarm count tok 1 400000`: the flow names the sret
    into the handler `→ alarm handler` and the one after its sigreturn `back from
    alarm handler`, which goes to the pc the tick interrupted; the sigreturn does not
    return to its caller. At --icount-shift 0 that loop sees two ticks."""
    s = Session.boot("lab_alarm", ["count", "tok", "1", "400000"], images=images,
                     capture=True, bundled_disk=False, icount_shift=0)
    s.run()
    rows = [r for r in s.flow.rows()
            if (r.is_trap and r.priv_from == Priv.U) or (not r.is_trap and r.priv_to == Priv.U)]
    s.close()
    handler = ElfSymbols(images.users["lab_alarm"]).by_name["periodic"][0]
    entries = [i for i, r in enumerate(rows) if r.signal == "→ alarm handler"]
    assert len(entries) == 2
    for i in entries:
        tick, enter, sigreturn, back = rows[i - 1:i + 3]
        assert tick.is_trap and tick.interrupt and tick.code == Irq.S_TIMER
        assert enter.target == handler and enter.returns_from == tick.seq
        assert sigreturn.syscall is not None and sigreturn.syscall.name == "sigreturn"
        assert sigreturn.syscall.outcome == "noreturn"
        assert back.signal == "back from alarm handler" and back.target == tick.pc
