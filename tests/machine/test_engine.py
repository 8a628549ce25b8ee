"""privlab's own calls into libunicorn (harness/machine/engine.py): the numbers it
passes are Unicorn's, errors carry Unicorn's code and message, an exception in a
device callback ends the run and comes out of emu_start, contexts round-trip, and an
engine closes once."""

from __future__ import annotations

import struct
import subprocess
import sys

import pytest
import unicorn.riscv_const as riscv_const
import unicorn.unicorn_const as unicorn_const

from privlab.abi import unicorn_abi
from privlab.abi.unicorn_abi import (
    UC_ERR_FETCH_UNMAPPED,
    UC_HOOK_CODE,
    UC_PROT_ALL,
    UC_RISCV_REG_PC,
    UC_RISCV_REG_X0,
)
from privlab.machine.engine import Engine, EngineError

CODE = 0x1000
DEVICE = 0x10000


def test_the_numbers_are_the_binding_s() -> None:
    """The same values the unicorn package's own binding uses (the core's build checks
    them against the C headers as well)."""
    for name, value in unicorn_abi.UNICORN_CONSTANTS.items():
        module = riscv_const if name.startswith("UC_RISCV_") else unicorn_const
        assert getattr(module, name) == value, name


def _engine(*words: int) -> Engine:
    e = Engine(64)
    e.mem_map(CODE, 0x1000, UC_PROT_ALL)
    e.mem_write(CODE, struct.pack(f"<{len(words)}I", *words))
    return e


LW_A0_FROM_T0 = 0x0002A503       # lw a0, 0(t0)
ADDI_T1_T1_1 = 0x00130313        # addi t1, t1, 1


def test_a_device_read_that_raises_ends_the_run_with_its_exception() -> None:
    e = _engine(LW_A0_FROM_T0, ADDI_T1_T1_1)
    calls: list[tuple[int, int]] = []

    def read(engine: Engine, offset: int, size: int, _ud: object) -> int:
        assert engine is e
        calls.append((offset, size))
        raise ValueError("the device broke")

    e.mmio_map(DEVICE, 0x1000, read, None, lambda *_: None, None)
    e.reg_write(UC_RISCV_REG_X0 + 5, DEVICE + 8)
    with pytest.raises(ValueError, match="the device broke"):
        e.emu_start(CODE, CODE + 8)
    assert calls == [(8, 4)]
    assert e.reg_read(UC_RISCV_REG_X0 + 6) == 0          # stopped before the addi
    assert e.hook_exception is None
    e.close()


def test_a_device_read_gives_the_load_its_value() -> None:
    e = _engine(LW_A0_FROM_T0)
    e.mmio_map(DEVICE, 0x1000, lambda _e, off, size, _ud: 0x1234_0000 + off, None,
               lambda *_: None, None)
    e.reg_write(UC_RISCV_REG_X0 + 5, DEVICE + 0x10)
    e.emu_start(CODE, CODE + 4)
    assert e.reg_read(UC_RISCV_REG_X0 + 10) == 0x1234_0010
    assert e.reg_read(UC_RISCV_REG_PC) == CODE + 4
    e.close()


def test_an_error_carries_unicorns_code_and_message() -> None:
    e = Engine(64)
    with pytest.raises(EngineError) as info:
        e.emu_start(0x5000, 0x5004)
    assert info.value.errno == UC_ERR_FETCH_UNMAPPED
    assert "UC_ERR_FETCH_UNMAPPED" in str(info.value)
    e.close()


def test_a_code_hook_sees_each_instruction() -> None:
    e = _engine(ADDI_T1_T1_1, ADDI_T1_T1_1, ADDI_T1_T1_1)
    seen: list[tuple[int, int]] = []
    e.hook_add(UC_HOOK_CODE, lambda _e, addr, size, _ud: seen.append((addr, size)))
    e.emu_start(CODE, CODE + 12)
    assert seen == [(CODE, 4), (CODE + 4, 4), (CODE + 8, 4)]
    assert e.reg_read(UC_RISCV_REG_X0 + 6) == 3
    e.close()


def test_a_context_restores_the_registers() -> None:
    e = _engine(ADDI_T1_T1_1)
    e.reg_write(UC_RISCV_REG_X0 + 6, 41)
    e.reg_write(UC_RISCV_REG_PC, CODE)
    saved = e.context_save()
    e.emu_start(CODE, CODE + 4)
    assert e.reg_read(UC_RISCV_REG_X0 + 6) == 42
    e.context_restore(saved)
    assert (e.reg_read(UC_RISCV_REG_X0 + 6), e.reg_read(UC_RISCV_REG_PC)) == (41, CODE)
    e.close()


def test_an_engine_closes_once() -> None:
    e = Engine(32)
    e.close()
    assert not e._uch
    e.close()                    # a second close does nothing


def test_contexts_and_engines_held_until_exit_leave_quietly() -> None:
    """A script that keeps a machine and a snapshot (Unicorn contexts) until the
    interpreter exits: nothing printed when they are freed after module globals go."""
    code = ("from privlab.api import Session\n"
            "from privlab.machine.snapshot import PageStore, take_snapshot\n"
            "s = Session.boot('hello')\n"
            "s.machine.run(max_insns=100_000)\n"
            "kept = [s, take_snapshot(s.machine, PageStore(s.machine))]\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, check=False)
    assert (p.returncode, p.stderr) == (0, "")
