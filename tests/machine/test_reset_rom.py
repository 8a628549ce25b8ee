"""The reset ROM as QEMU 7.2 fills it: the reset vector's words at PLATFORM_MROM_BASE
and OpenSBI's fw_dynamic_info right after them, its address in a2 at reset; so
OpenSBI's fw_dynamic (and fw_jump) boot the bundled kernel as under QEMU."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from machine.asm import build_asm
from privlab.abi.platform import PLATFORM
from privlab.build.images import Images
from privlab.build.toolchain import RV64
from privlab.devices.mrom import FW_DYNAMIC_INFO_OFFSET
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_bare
from privlab.qemu import qemu_binary, run_qemu

# Reads the ROM the way OpenSBI's fw_dynamic does (a2), and the vector's first word;
# any mismatch fails with the check's number. The same bytes on privlab and QEMU.
READS_THE_RESET_ROM = f"""
    li t0, {PLATFORM.mrom_base + FW_DYNAMIC_INFO_OFFSET:#x}
    bne a2, t0, 1f                 # a2: the fw_dynamic_info
    ld t1, 0(a2)
    li t0, 0x4942534f              # magic "OSBI"
    bne t1, t0, 2f
    ld t1, 8(a2)
    li t0, 2                       # version
    bne t1, t0, 3f
    ld t1, 16(a2)
    la t0, _start                  # next_addr: the ELF's entry
    bne t1, t0, 4f
    ld t1, 24(a2)
    li t0, 1                       # next_mode: S
    bne t1, t0, 5f
    li t0, {PLATFORM.mrom_base:#x}
    lw t1, 0(t0)
    li t0, 0x00000297              # the vector's auipc t0, 0
    bne t1, t0, 6f
    csrr t0, mhartid
    bne a0, t0, 7f
    PASS
1:  FAIL 1
2:  FAIL 2
3:  FAIL 3
4:  FAIL 4
5:  FAIL 5
6:  FAIL 6
7:  FAIL 7
"""
OPENSBI = Path("/usr/lib/riscv64-linux-gnu/opensbi/generic")
needs_opensbi = pytest.mark.skipif(not (OPENSBI / "fw_dynamic.elf").is_file(),
                                   reason="Debian's opensbi is not installed (.ci/run installs it)")


@pytest.fixture(scope="module")
def rom_reader() -> Path:
    return build_asm(READS_THE_RESET_ROM)


def test_a2_and_the_rom_hold_the_fw_dynamic_info_on_privlab(rom_reader: Path) -> None:
    m = Machine(64)
    boot_bare(m, load_elf(rom_reader))
    result = m.run(max_insns=1000)
    assert (result.stop, result.exit_status) == (Stop.HALT, 0)


@pytest.mark.skipif(qemu_binary(RV64) is None, reason="qemu-system-riscv64 is not installed")
def test_qemu_holds_the_same_rom(rom_reader: Path) -> None:
    assert run_qemu(rom_reader, RV64, timeout_s=20).exit_status == 0


def test_a_write_to_the_rom_changes_nothing() -> None:
    elf = build_asm(f"""
        li t0, {PLATFORM.mrom_base:#x}
        lw t1, 0(t0)
        sw zero, 0(t0)
        lw t2, 0(t0)
        bne t1, t2, 1f
        PASS
    1:  FAIL 1
    """)
    m = Machine(64)
    boot_bare(m, load_elf(elf))
    assert m.run(max_insns=1000).exit_status == 0


def test_every_elf_enters_at_its_linker_scripts_entry(images: Images) -> None:
    kernel = load_elf(images.kernel)
    assert kernel.entry == kernel.symbol("_entry") == PLATFORM.kernel_base
    assert load_elf(images.firmware).entry == PLATFORM.ram_base
    hello = load_elf(images.users["hello"])
    assert hello.entry == hello.symbol("_start")


@needs_opensbi
@pytest.mark.parametrize("firmware", ["fw_jump.elf", "fw_dynamic.elf"])
def test_debians_opensbi_boots_the_bundled_kernel(firmware: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "privlab", "run", "--bios",
                           str(OPENSBI / firmware), "--max-insns", "100000000",
                           "--user", "hello"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OpenSBI v" in proc.stdout and "Domain0 Next Address      : 0x0000000080200000" \
        in proc.stdout
    assert proc.stdout.endswith("Hello, world!\n")
