"""The same image and input give a byte-identical trace, run after run: guest time is
instructions retired, never the host clock."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conformance.programs import build_program

from machine.asm import build_asm
from privlab.abi.platform import PLATFORM
from privlab.devices.mrom import FW_DYNAMIC_INFO_OFFSET
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_bare
from privlab.trace import TrapEvent

A2_AT_RESET = PLATFORM.mrom_base + FW_DYNAMIC_INFO_OFFSET   # the reset ROM's fw_dynamic_info


def trace_of(args: list[str], out: Path) -> bytes:
    proc = subprocess.run([sys.executable, "-m", "privlab", "run", "--quiet",
                           "--trace-out", str(out), *args],
                          capture_output=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr.decode()
    return out.read_bytes()


def test_timer_heavy_bare_metal_program_gives_identical_traces(tmp_path: Path) -> None:
    elf = str(build_program("irq_clint", "rv64"))
    one = trace_of(["--bios", "none", "--kernel", elf], tmp_path / "a.jsonl")
    two = trace_of(["--bios", "none", "--kernel", elf], tmp_path / "b.jsonl")
    assert one == two
    assert b'"name": "m_timer"' in one


def test_device_interrupts_through_the_plic_give_identical_traces(tmp_path: Path) -> None:
    # The UART's THR-empty interrupt, raised by MMIO writes, through the PLIC to S and U.
    elf = str(build_program("irq_plic_s", "rv64"))
    one = trace_of(["--bios", "none", "--kernel", elf], tmp_path / "a.jsonl")
    two = trace_of(["--bios", "none", "--kernel", elf], tmp_path / "b.jsonl")
    assert one == two
    assert one.count(b'"name": "s_external"') == 2


def test_disk_interrupts_give_identical_traces(tmp_path: Path) -> None:
    # virtio-blk completions through PLIC source 1 to M, with a drive that changes.
    elf = str(build_program("virtio_blk_irq", "rv64"))
    traces = []
    for run in ("a", "b"):
        image = tmp_path / f"{run}.img"
        image.write_bytes(bytes(64 * 512))
        traces.append(trace_of(["--bios", "none", "--kernel", elf, "--drive", str(image)],
                               tmp_path / f"{run}.jsonl"))
    assert traces[0] == traces[1]
    assert traces[0].count(b'"name": "m_external"') == 2
    assert (tmp_path / "a.img").read_bytes() == (tmp_path / "b.img").read_bytes()


# Console input by interrupt: the UART's received-data interrupt through the PLIC to M;
# the handler claims, reads every byte ready, completes; three bytes and it passes.
UART_RX_BY_INTERRUPT = """
    UART_RX_INTERRUPTS_TO_M
    li s1, 0
1:  wfi
    j 1b
    .align 2
trap:
    li t0, PLATFORM_PLIC_BASE + PLIC_CLAIM + PLIC_CONTEXT_M * PLIC_CONTEXT_STRIDE
    lw t2, 0(t0)
    li t3, PLATFORM_UART0_BASE
2:  lbu t4, 5(t3)                   // LSR.DR
    andi t4, t4, 1
    beqz t4, 3f
    lbu t4, 0(t3)                   // RBR
    addi s1, s1, 1
    j 2b
3:  sw t2, 0(t0)
    li t4, 3
    bne s1, t4, 4f
    PASS
4:  mret
"""


def test_console_input_interrupts_give_identical_traces(tmp_path: Path) -> None:
    elf = str(build_asm(UART_RX_BY_INTERRUPT, "rv64"))
    args = ["--bios", "none", "--kernel", elf, "--input", "abc"]
    one = trace_of(args, tmp_path / "a.jsonl")
    two = trace_of(args, tmp_path / "b.jsonl")
    assert one == two
    # Scripted input is all in the receive FIFO when the guest first looks: one
    # interrupt, whose handler reads the three bytes.
    assert one.count(b'"name": "m_external"') == 1


def test_preempted_kernel_processes_give_identical_traces(tmp_path: Path) -> None:
    # Two CPU-bound processes preempted by the timer (every 10 ms of guest time): timer
    # interrupts forwarded by the firmware, context switches, satp switches, console.
    args = ["--user", "compute", "3000000", "2"]
    one = trace_of(args, tmp_path / "a.jsonl")
    two = trace_of(args, tmp_path / "b.jsonl")
    assert one == two
    assert one.count(b'"name": "s_timer"') >= 3
    assert one.count(b'"name": "m_timer"') == one.count(b'"name": "s_timer"')


def test_a_stepped_wfi_with_nothing_to_wake_it_is_the_runs_diagnosis() -> None:
    image = load_elf(build_asm("""
        csrw mie, zero
        wfi
        PASS
    """, "rv64"))
    plain, stepped = Machine(image.xlen), Machine(image.xlen)
    try:
        boot_bare(plain, image)
        boot_bare(stepped, image)
        ran = plain.run()
        assert ran.stop is Stop.ERROR and ran.message.startswith("wfi with no interrupt source")
        for _ in range(100):
            result = stepped.step()
            if result.stop is not Stop.STEP:
                break
        assert (result.stop, result.message, result.pc) == (ran.stop, ran.message, ran.pc)
    finally:
        plain.close()
        stepped.close()


def test_a_run_that_powers_off_counts_only_the_instructions_that_ran() -> None:
    """The finisher store ends the run inside a block, which the core counted whole
    as it entered it: the instructions after the store never ran and do not count."""
    image = load_elf(build_asm("""
        li a0, 1
        li a1, 2
        PASS
        li a2, 3
        li a3, 4
    """, "rv64"))
    plain, stepped = Machine(image.xlen), Machine(image.xlen)
    try:
        boot_bare(plain, image)
        boot_bare(stepped, image)
        ran = plain.run()
        for _ in range(100):
            result = stepped.step()
            if result.stop is not Stop.STEP:
                break
        assert ran.stop is result.stop is Stop.HALT
        assert (ran.pc, ran.instret) == (result.pc, result.instret)
        assert plain.hart.x(12) == A2_AT_RESET   # `li a2, 3` never ran
    finally:
        plain.close()
        stepped.close()


def test_an_interrupt_raised_by_a_device_write_is_taken_at_the_same_pc_stepped() -> None:
    """MEIP rises inside a block (the UART's IER write, interrupts enabled): a run takes
    it where the block ends, and single-stepping does the same."""
    image = load_elf(build_asm("""
        UART_IRQ_TO_M
        li t0, 1 << 11
        csrw mie, t0
        csrsi mstatus, 8
        li t0, PLATFORM_UART0_BASE
        li t1, 0x02                 // IER.ETBEI: MEIP at once
        sb t1, 1(t0)
        addi a0, a0, 1
        addi a0, a0, 1
        j 1f
    1:  FAIL 1
        .align 2
    trap:
        PASS
    """, "rv64"))
    plain, stepped = Machine(image.xlen), Machine(image.xlen)
    try:
        boot_bare(plain, image)
        boot_bare(stepped, image)
        ran = plain.run(max_insns=1_000)
        for _ in range(1_000):
            result = stepped.step()
            if result.stop is not Stop.STEP:
                break
        assert ran.stop is result.stop is Stop.HALT
        traps = [[(e.code, e.epc) for e in m.events if isinstance(e, TrapEvent)]
                 for m in (plain, stepped)]
        assert traps[0] == traps[1] and len(traps[0]) == 1
        assert plain.hart.x(10) == stepped.hart.x(10) == 2
    finally:
        plain.close()
        stepped.close()
