"""The conformance programs against the reference: QEMU 7.2, bare-metal on `virt`.

Every program must pass (finisher exit 0) on qemu-system-riscv64 and -riscv32, and the
trap list QEMU logs must be non-empty, as long as the program's own count of the traps
its handlers checked, and identical over two runs, one timed by the host clock and one
by the instruction count (`-icount shift=N` at privlab's default pace). Then unit tests
of the `-d int` parser and of the finisher's exit codes, on literal lines captured from QEMU 7.2.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from privlab.build.baremetal import build_baremetal
from privlab.build.toolchain import ARCHES, RV32, RV64
from privlab.errors import BuildError
from privlab.pace import DEFAULT_ICOUNT_SHIFT
from privlab.qemu import (
    TIMEOUT_EXIT_STATUS,
    QemuNotFound,
    QemuResult,
    TrapRecord,
    finisher_exit_status,
    parse_int_log,
    qemu_binary,
    qemu_command,
    run_qemu,
)

from .programs import (
    DRIVES,
    HOST_CLOCK_ONLY,
    INCLUDE_DIR,
    LEGACY,
    PROGRAMS,
    RUNTIME_SOURCES,
    build_program,
    scratch_drive,
)

# A program runs in well under a second; a hang is killed long before pytest would be.
QEMU_TIMEOUT_S = 10.0
ARCH_NAMES = ("rv64", "rv32")


def _requires_qemu(arch: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        qemu_binary(ARCHES[arch]) is None,
        reason=f"qemu-system-riscv{ARCHES[arch].xlen} is not installed (QEMU 7.2 is the "
        "reference: apt-get install qemu-system-misc)",
    )


ARCH_PARAMS = [pytest.param(a, marks=_requires_qemu(a), id=a) for a in ARCH_NAMES]


def _build(name: str, arch: str) -> Path:
    try:
        return build_program(name, arch)
    except BuildError as e:
        pytest.fail(f"{e}\n{e.output}", pytrace=False)


def _explain(result: QemuResult) -> str:
    last = "\n".join(f"  {t}" for t in result.traps[-8:])
    return (f"exit {result.exit_status} (timed out: {result.timed_out})\n"
            f"console:\n{result.console.decode(errors='replace')}\n"
            f"stderr:\n{result.stderr}\nlast traps:\n{last}")


_PASS_LINE = re.compile(rb"conformance: (\w+): PASS \((\d+) traps\)")


@pytest.mark.parametrize("arch", ARCH_PARAMS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_program_passes_on_qemu_with_a_deterministic_trap_list(name: str, arch: str,
                                                               tmp_path: Path) -> None:
    elf = _build(name, arch)
    drive = scratch_drive(name, tmp_path)
    first = run_qemu(elf, ARCHES[arch], QEMU_TIMEOUT_S, drive=drive,
                     virtio_legacy=name in LEGACY)
    assert first.exit_status == 0, _explain(first)
    passed = _PASS_LINE.search(first.console)
    assert passed is not None, _explain(first)
    assert passed[1].decode() == name
    assert first.traps or name in DRIVES, "a trap conformance program must trap"
    # Every trap QEMU took went through the runtime's checking handlers.
    assert int(passed[2]) == len(first.traps), _explain(first)

    # Timing-independent: with time following the instruction count instead of the
    # host clock (-icount at privlab's pace), the program traps in exactly the same way.
    if name in HOST_CLOCK_ONLY:
        return
    second = run_qemu(elf, ARCHES[arch], QEMU_TIMEOUT_S, icount=True,
                      drive=scratch_drive(name, tmp_path), virtio_legacy=name in LEGACY)
    assert second.exit_status == 0, _explain(second)
    assert second.traps == first.traps


# ---- The failure path: a wrong expectation must fail, naming its check ----------------

_FAILING_PROGRAMS = {
    # A trap with the wrong expected tval: fails check 7 and says which field.
    "wrong_tval": ("""
        EXPECT 7, PRV_M, PRV_M, CAUSE_BREAKPOINT, 1f, 4, RESUME_AT, 2f
    1:  ebreak
    2:  TEST_PASS
    """, 7, b"FAIL check 7 (tval)"),
    # A trap nobody declared.
    "unexpected": ("""
        ecall
        TEST_PASS
    """, 255, b"unexpected trap"),
    # A declared trap that never happens.
    "missing": ("""
        EXPECT 9, PRV_M, PRV_M, CAUSE_BREAKPOINT, 1f, 0, RESUME_AT, 1f
    1:  nop
        TEST_PASS
    """, 9, b"FAIL check 9 (expected trap never happened)"),
    # A failed CHECK in U-mode reports through an ecall.
    "check_in_u": ("""
        MRET_TO PRV_U, 1f
    1:  li a0, 5
        CHECK_REG 12, a0, 6
        TEST_PASS
    """, 12, b"FAIL check 12 (value): got 0x"),
}


@pytest.mark.parametrize("arch", ARCH_PARAMS)
@pytest.mark.parametrize("case", sorted(_FAILING_PROGRAMS))
def test_a_failed_check_exits_with_its_number(case: str, arch: str, tmp_path: Path) -> None:
    body, status, message = _FAILING_PROGRAMS[case]
    source = tmp_path / f"{case}.S"
    source.write_text(f'#include "conformance.h"\nTEST_MAIN {case}\n'
                      f"{textwrap.dedent(body)}\n")
    elf = build_baremetal([source, *RUNTIME_SOURCES], ARCHES[arch], tmp_path / f"{case}.elf",
                          include_dirs=[INCLUDE_DIR])
    result = run_qemu(elf, ARCHES[arch], QEMU_TIMEOUT_S)
    assert result.exit_status == status, _explain(result)
    assert message in result.console


# ---- Oracle plumbing ------------------------------------------------------------------

@pytest.mark.parametrize("arch", ARCH_PARAMS)
def test_run_qemu_kills_a_guest_that_never_ends(arch: str, tmp_path: Path) -> None:
    source = tmp_path / "spin.S"
    source.write_text(".section .text.entry\n.globl _start\n_start:\n    j _start\n")
    elf = build_baremetal([source], ARCHES[arch], tmp_path / "spin.elf")
    result = run_qemu(elf, ARCHES[arch], timeout_s=0.5)
    assert result.timed_out
    assert result.exit_status == TIMEOUT_EXIT_STATUS
    assert result.traps == []


def test_qemu_command_runs_virt_without_firmware_and_logs_traps(tmp_path: Path) -> None:
    if qemu_binary(RV64) is None:
        pytest.skip("qemu-system-riscv64 is not installed")
    cmd = qemu_command(Path("x.elf"), RV64, tmp_path / "int.log", ["-m", "256M"], icount=True)
    assert Path(cmd[0]).name == "qemu-system-riscv64"
    joined = " ".join(cmd[1:])
    assert joined.startswith("-machine virt -bios none -nographic -kernel x.elf -d int -D ")
    assert joined.endswith(f"-icount shift={DEFAULT_ICOUNT_SHIFT} -m 256M")  # privlab's pace


def test_qemu_command_puts_a_drive_on_the_first_modern_transport(tmp_path: Path) -> None:
    if qemu_binary(RV64) is None:
        pytest.skip("qemu-system-riscv64 is not installed")
    cmd = qemu_command(Path("x.elf"), RV64, tmp_path / "int.log", drive=Path("d.img"))
    assert " ".join(cmd).endswith(
        "-global virtio-mmio.force-legacy=false "
        "-drive file=d.img,format=raw,if=none,id=x0,cache=unsafe "
        "-device virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0")


def test_missing_qemu_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("privlab.qemu.shutil.which", lambda name: None)
    assert qemu_binary(RV32) is None
    with pytest.raises(QemuNotFound, match="qemu-system-riscv32 not found"):
        run_qemu(Path("x.elf"), RV32, 1.0)


# ---- The `-d int` parser, on lines QEMU 7.2 printed ----------------------------------

RV64_LOG = """\
riscv_cpu_do_interrupt: hart:0, async:1, cause:0000000000000001, epc:0x0000000080000140, \
tval:0x0000000000000000, desc=s_software
riscv_cpu_do_interrupt: hart:0, async:0, cause:0000000000000008, epc:0x0000000080000140, \
tval:0x0000000000000000, desc=user_ecall
riscv_cpu_do_interrupt: hart:0, async:0, cause:0000000000000002, epc:0x0000000080000010, \
tval:0x00000000fffff00b, desc=illegal_instruction
riscv_cpu_do_interrupt: hart:0, async:0, cause:000000000000000c, epc:0x0000000040002ffe, \
tval:0x0000000040003000, desc=exec_page_fault
"""

RV32_LOG = """\
riscv_cpu_do_interrupt: hart:0, async:1, cause:00000007, epc:0x8000014e, tval:0x00000000, \
desc=m_timer
riscv_cpu_do_interrupt: hart:0, async:0, cause:00000005, epc:0x80000022, tval:0x88000004, \
desc=fault_load
riscv_cpu_do_interrupt: hart:0, async:0, cause:0000000b, epc:0x8000002a, tval:0x00000000, \
desc=machine_ecall
"""


def test_parser_reads_rv64_lines() -> None:
    assert parse_int_log(RV64_LOG) == [
        TrapRecord(interrupt=True, code=1, epc=0x80000140, tval=0, name="s_software"),
        TrapRecord(interrupt=False, code=8, epc=0x80000140, tval=0, name="user_ecall"),
        TrapRecord(interrupt=False, code=2, epc=0x80000010, tval=0xFFFFF00B,
                   name="illegal_instruction"),
        TrapRecord(interrupt=False, code=12, epc=0x40002FFE, tval=0x40003000,
                   name="exec_page_fault"),
    ]


def test_parser_reads_rv32_lines() -> None:
    assert parse_int_log(RV32_LOG) == [
        TrapRecord(interrupt=True, code=7, epc=0x8000014E, tval=0, name="m_timer"),
        TrapRecord(interrupt=False, code=5, epc=0x80000022, tval=0x88000004, name="fault_load"),
        TrapRecord(interrupt=False, code=11, epc=0x8000002A, tval=0, name="machine_ecall"),
    ]


def test_parser_skips_other_log_lines() -> None:
    text = "Invalid read at addr 0x88000004, size 4\n" + RV32_LOG + "\n"
    assert len(parse_int_log(text)) == 3


def test_parser_rejects_a_trap_line_it_does_not_understand() -> None:
    with pytest.raises(ValueError, match="unrecognised QEMU trap line"):
        parse_int_log("riscv_cpu_do_interrupt: hart:0, async:0, cause:0000000b, desc=x\n")


def test_trap_record_is_frozen() -> None:
    record = TrapRecord(interrupt=False, code=3, epc=0x80000000, tval=0, name="breakpoint")
    with pytest.raises(AttributeError):
        record.code = 4  # type: ignore[misc]


# ---- The sifive_test finisher's exit codes -------------------------------------------

@pytest.mark.parametrize(("value", "status"), [
    (0x5555, 0),
    (0x3333, 0),
    (0x3333 | (7 << 16), 7),
    (0x3333 | (255 << 16), 255),
    (0x3333 | (0x1234 << 16), 0x1234),
    (0x7777, None),          # reset: the machine does not stop
    (0x1234, None),          # not a command
])
def test_finisher_exit_status(value: int, status: int | None) -> None:
    assert finisher_exit_status(value) == status
