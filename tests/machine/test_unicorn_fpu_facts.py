"""Unicorn 2.1.4's own FPU (QEMU 5.0's), which the native core replaces
(harness/native/fpu.c, docs/unicorn.md#fpu-is-qemu-5).

The core's replacement is process-wide once a hart exists, so Unicorn's behaviour is
reproduced in a fresh interpreter that never loads the core; the last test checks that
the core did replace it here.
"""

from __future__ import annotations

import ast
import os
import platform
import subprocess
import sys

import pytest

from machine.child_env import child_env
from machine.fpu_cases import BODY, QEMU_7_2

FPU_PROBE = r"""
import sys
from unicorn import Uc
from unicorn.riscv_const import UC_RISCV_REG_X10
from unicorn.unicorn_const import UC_ARCH_RISCV, UC_HOOK_INTR, UC_MODE_RISCV64
from privlab.machine import load_elf
from machine.asm import build_asm

image = load_elf(build_asm(sys.argv[1], "rv64"))
uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
ram = min(s.paddr for s in image.segments) & ~0xfffff
uc.mem_map(ram, 1 << 20)
for seg in image.segments:
    uc.mem_write(seg.paddr, seg.data)
uc.hook_add(UC_HOOK_INTR, lambda uc, intno, _ud: uc.emu_stop())
uc.emu_start(ram, ram + 0x1000, count=500)
print([uc.reg_read(UC_RISCV_REG_X10 + i) for i in range(5)])
"""


def unicorn_fpu_probe() -> list[int]:
    out = subprocess.run([sys.executable, "-c", FPU_PROBE, BODY], capture_output=True,
                         text=True, env=child_env(), check=True).stdout
    return ast.literal_eval(out.strip())


def test_unicorns_fpu_is_qemu_5s_without_nan_boxing_or_minimum_number() -> None:
    # docs/unicorn.md#fpu-is-qemu-5. Every answer differs from QEMU 7.2's (QEMU_7_2).
    got = unicorn_fpu_probe()
    assert all(mine != qemu for mine, qemu in zip(got, QEMU_7_2, strict=True))
    fmax, fsgnj, fmv_w_x, fadd, fflags = got
    assert fmax == 0x7FC00000          # maxNum: the canonical NaN, upper word zero
    assert fsgnj == 0xFFFFFFFF12345678  # rs2's upper word, rs1's low 31 bits
    assert fmv_w_x == 0x3F800000       # the whole x register
    assert fadd == 0x40000000          # 2.0, upper word zero
    assert fflags == 0                 # no NV


def test_the_core_replaces_unicorns_fpu_helpers_on_this_host() -> None:
    # fpu.c replaces the helpers only on x86-64 with the pinned wheel (its fingerprint);
    # anywhere else F/D are Unicorn's except fmin/fmax (docs/machine.md).
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("the helpers are replaced on x86-64 hosts only")
    if os.environ.get("PRIVLAB_PORTABLE", "0") != "0":
        pytest.skip("portable mode replaces nothing: F/D are done in code hooks")
    from privlab.machine import Machine
    from privlab.native.library import load_library

    Machine(64)
    assert load_library().fpu_exact(), \
        f"fingerprint {load_library().fpu_fingerprint():#x}: not the pinned unicorn wheel?"
