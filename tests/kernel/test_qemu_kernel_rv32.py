"""The same kernel built for RV32 (Sv32) on qemu-system-riscv32, with our firmware
(QEMU ships no 32-bit OpenSBI here)."""

from __future__ import annotations

import re

from privlab.build.images import Images

from .qemu_boot import boot_qemu, needs_qemu32

pytestmark = needs_qemu32


def test_rv32_usertests_all_pass(images32: Images) -> None:
    boot = boot_qemu(images32, bootargs="quiet init=usertests")
    assert re.search(r"^usertests: \d+ passed, 0 failed$", boot.output, re.M), boot.output
    assert "stval=0xffffe000" in boot.output  # the Sv32 trapframe page
    assert boot.status == 0


def test_rv32_fuzzer_survives(images32: Images) -> None:
    boot = boot_qemu(images32, bootargs="quiet init=fuzz 2 3000")
    assert boot.output.rstrip().endswith("fuzz: kernel survived")
    assert boot.status == 0


def test_rv32_shell_exit_status(images32: Images) -> None:
    boot = boot_qemu(images32, stdin="hello 32\nexit 4\n")
    assert "$ hello 32\nHello, world!\nargv[1] = 32\n" in boot.output
    assert boot.status == 4
