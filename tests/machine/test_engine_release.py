"""Machine.close gives the host back what the machine held: its Unicorn
engines (each reserves 1 GiB of translation cache address space per hart) and its RAM,
at once, not when the garbage collector next reaches the machine's reference cycles.
A grader boots machine after machine in one test process; before this, 30 machines made
and closed in a loop reached 10 GiB of address space between two collections."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from machine.asm import build_asm
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_bare


def vm_size() -> int:
    """This process's address space, bytes (/proc/self/status VmSize)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) << 10
    raise AssertionError("no VmSize in /proc/self/status")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("smp", [1, 4])
def test_fifty_machines_made_and_closed_do_not_grow_the_address_space(
        smp: int) -> None:
    image = load_elf(build_asm("""
    1:  addi a0, a0, 1
        j 1b
    """))
    # No collection while the machines come and go: only close() can give them back.
    gc.collect()
    gc.disable()
    try:
        before = vm_size()
        peak = before
        for _ in range(50):
            m = Machine(64, smp=smp)
            boot_bare(m, image)
            assert m.run(max_insns=10_000).stop is Stop.BUDGET
            m.close()
            del m
            peak = max(peak, vm_size())
    finally:
        gc.enable()
    # One machine alive at a time: its engines (1 GiB each), 128 MiB of RAM and the
    # interpreter's own growth. Without the release: 50 engines, 50 GiB or more.
    assert peak - before < (smp + 1) << 30, \
        f"address space grew by {(peak - before) >> 20} MiB over 50 machines"


def test_a_second_close_does_nothing() -> None:
    m = Machine(64)
    m.close()
    m.close()
