"""End to end: the kernel, firmware and user programs on QEMU 7.2's virt board."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from privlab.abi.platform import PLATFORM
from privlab.boot.dtb import build_dtb
from privlab.boot.initrd import initrd_load_address
from privlab.build.images import Images

from .qemu_boot import boot_qemu, needs_qemu

pytestmark = needs_qemu

KILLED = 255  # EXIT_KILLED (-1) as an 8-bit exit status


def test_usertests_all_pass(images: Images) -> None:
    boot = boot_qemu(images, bootargs="quiet init=usertests")
    results = re.findall(r"^(PASS|FAIL) (\w+)$", boot.output, re.M)
    assert len(results) >= 28
    assert [name for verdict, name in results if verdict == "FAIL"] == []
    assert re.search(r"^usertests: \d+ passed, 0 failed$", boot.output, re.M)
    assert boot.status == 0


def test_fuzzer_survives_and_kernel_keeps_scheduling(images: Images) -> None:
    boot = boot_qemu(images, bootargs="quiet init=fuzz 1 3000")
    assert "fuzz: seed 1, 3000 calls, fuzzer exited with 0" in boot.output
    assert "Hello, world!\nargv[1] = after\n" in boot.output
    assert boot.output.rstrip().endswith("fuzz: kernel survived")
    assert "panic" not in boot.output
    assert boot.status == 0


def test_hello_output_with_arguments(images: Images) -> None:
    boot = boot_qemu(images, bootargs="quiet init=/hello one two")
    assert boot.output == "Hello, world!\nargv[1] = one\nargv[2] = two\n"
    assert boot.status == 0


def test_first_program_exit_status_becomes_qemu_exit_status(images: Images) -> None:
    boot = boot_qemu(images, bootargs="quiet init=hostile")  # usage error: returns 2
    assert boot.output.startswith("usage: hostile")
    assert boot.status == 2


def test_missing_init_program_powers_off_with_127(images: Images) -> None:
    boot = boot_qemu(images, bootargs="quiet init=no-such-program")
    assert "[kernel] cannot run no-such-program" in boot.output
    assert boot.status == 127


def test_user_fault_kills_with_one_line_naming_pid_cause_sepc_stval(images: Images) -> None:
    boot = boot_qemu(images, bootargs="quiet init=hostile kread")
    lines = boot.output.splitlines()
    assert len(lines) == 1
    assert re.fullmatch(r"\[kernel\] pid 1 \(hostile\) killed: load_page_fault "
                        r"sepc=0x[0-9a-f]+ stval=0x80200000", lines[0])
    assert boot.status == KILLED


def test_shell_runs_programs_and_reports_exit_codes(images: Images) -> None:
    boot = boot_qemu(images, stdin="hello x\nnope\nsbrk\nexit 3\n")
    assert boot.output.startswith("privlab kernel: 128 MiB RAM, timebase 10000000 Hz\n")
    assert "$ hello x\nHello, world!\nargv[1] = x\n" in boot.output
    assert "sh: nope: not found\nsh: nope exited with status 127\n" in boot.output
    assert "sbrk: heap at" in boot.output
    assert "[kernel] init exited with status 3: powering off" in boot.output
    assert boot.status == 3


def _from_kernel_banner(output: str) -> str:
    return output[output.index("privlab kernel:"):]


def test_opensbi_and_our_firmware_give_the_same_console_output(images: Images) -> None:
    ours = boot_qemu(images, bootargs="init=usertests exec waitpid kill_sret")
    opensbi = boot_qemu(images, bios="default", bootargs="init=usertests exec waitpid kill_sret")
    assert "OpenSBI" in opensbi.output
    assert "OpenSBI" not in ours.output
    assert _from_kernel_banner(ours.output) == _from_kernel_banner(opensbi.output)
    assert "PASS kill_sret" in ours.output


def test_timer_preemption_interleaves_two_cpu_bound_processes(images: Images) -> None:
    # icount: on the host clock, a fast or idle host may finish a copy within one slice
    boot = boot_qemu(images, bootargs="quiet init=compute 3000000 2", icount=True)
    tags = [line.split()[0] for line in boot.output.splitlines() if re.fullmatch(r"[AB] \d+", line)]
    assert sorted(tags) == ["A"] * 10 + ["B"] * 10
    switches = sum(1 for a, b in itertools.pairwise(tags) if a != b)
    assert switches >= 2, f"no preemption: {tags}"  # one switch = one ran to completion first
    assert boot.status == 0


def test_kernel_boots_with_the_harness_generated_device_tree(images: Images,
                                                             tmp_path: Path) -> None:
    size = PLATFORM.ram_size_default
    start = initrd_load_address(PLATFORM.ram_base, size, PLATFORM.kernel_base)
    end = start + images.initrd.stat().st_size
    dtb = tmp_path / "privlab.dtb"
    dtb.write_bytes(build_dtb(PLATFORM.ram_base, size, "quiet init=hello from-dtb",
                              (start, end), 64))
    boot = boot_qemu(images, dtb=dtb)  # QEMU rewrites the initrd bounds: same values
    assert boot.output == "Hello, world!\nargv[1] = from-dtb\n"


@pytest.mark.parametrize("flag, needle",
                         [("vmprint", " .. .. .."), ("backtrace", "backtrace:\n  0x")])
def test_debug_flags(images: Images, flag: str, needle: str) -> None:
    boot = boot_qemu(images, bootargs=f"quiet {flag} init=hello")
    assert needle in boot.output
    assert boot.output.endswith("Hello, world!\n")
