"""Bare-metal programs (M-mode, `--bios none`), RV32 and RV64, under the stub."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from machine.asm import build_asm

from gdb.helpers import Served, serving_bare
from gdb.rsp import Client
from privlab.machine import load_elf


@pytest.fixture
def bare() -> Iterator[Callable[[str, str], Served]]:
    with serving_bare() as make:
        yield lambda body, arch: make(load_elf(build_asm(body, arch)), 1)


def test_stuck_guest_is_reported_as_sigabrt_with_the_diagnosis(
        bare: Callable[[str, str], Served]) -> None:
    s = bare("csrw mie, zero\n wfi\n j .", "rv64")
    c = Client(s.port)
    assert c.ask(b"c") == b"T06thread:1;"
    assert any("wfi with no interrupt source" in t for t in c.console), c.console
    assert c.ask(b"?") == b"T06thread:1;"


def _reg(c: Client, num: int) -> int:
    return int.from_bytes(bytes.fromhex(c.ask(b"p%x" % num).decode()), "little")


def test_rv32_registers_are_four_bytes_and_steps_are_exact(
        bare: Callable[[str, str], Served]) -> None:
    s = bare("li a0, 5\n addi a0, a0, 1\n ecall", "rv32")
    c = Client(s.port)
    assert len(c.ask(b"g")) == 33 * 8
    steps = 0
    while _reg(c, 10) != 6:            # through the prologue, then li and addi
        assert c.ask(b"s") == b"T05thread:1;"
        steps += 1
        assert steps < 100
    assert s.machine.hart.state.instret == steps
    assert c.ask(b"s") == b"T05thread:1;"            # the ecall: into the trap vector
    assert _reg(c, 65 + 0x342) == 11                   # mcause: ecall from M
    assert _reg(c, 32) == _reg(c, 65 + 0x305)          # pc == mtvec
