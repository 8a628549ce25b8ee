"""A failed run's diagnosis names addresses from the graded kernel (symbol+offset and
file:line, as `privlab inspect` does), keeps the trap that led to a panic among the
last traps, and opens with exactly one headline."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from privlab.course.submission_build import build_submission, staging_slot
from privlab.grade.errors import GradeFailure
from privlab.grade.graded_boot import EVENT_LIMIT, KernelRun, LimitedConsole, diagnose
from privlab.grade.naming import call_before
from privlab.grade.under_test import KernelUnderTest
from privlab.machine import RunResult, Stop

from .conftest import variant

GETPID = "long sys_getpid(void) { return"
FAULT = "long sys_getpid(void) { *(volatile int *)8 = 1; return"   # a store fault in S
PANIC = "long sys_getpid(void) { panic(\"boom %d\", 7); return"


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _failed(root: Path, body: str) -> Iterator[tuple[KernelRun, str, Path]]:
    sub = variant(root, {"sysproc.c": (GETPID, body)})
    with staging_slot() as slot:
        built = build_submission(sub, slot)
        assert built.images is not None, built.output
        kernel = KernelUnderTest(built.images)
        run = kernel.boot("lab_taskinfo", "counts", kernel.token, 3, 2)
        with pytest.raises(GradeFailure) as failure:
            run.expect_pass()
        yield run, failure.value.diagnosis, sub / "kernel"
        kernel.close()


@pytest.fixture(scope="module")
def store_fault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KernelRun, str, Path]]:
    yield from _failed(tmp_path_factory.mktemp("fault"), FAULT)


@pytest.fixture(scope="module")
def panic_in_syscall(tmp_path_factory: pytest.TempPathFactory
                     ) -> Iterator[tuple[KernelRun, str, Path]]:
    yield from _failed(tmp_path_factory.mktemp("panic"), PANIC)


def _block(text: str, head: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(head) + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("  "))
    return lines[start:end]


def test_a_kernel_trap_panic_names_its_sepc_with_symbol_offset_and_line(
        store_fault: tuple[KernelRun, str, Path]) -> None:
    run, text, kernel = store_fault
    panic = re.search(r"^panic: kernel trap: store_page_fault .*sepc=(0x[0-9a-f]+)",
                      run.output, re.M)
    assert panic is not None
    sepc = int(panic.group(1), 16)
    start = run.kernel_image.symbol("sys_getpid")
    assert start is not None
    line = _line_of(kernel / "sysproc.c", FAULT)
    named = f"0x{sepc:x} sys_getpid+{sepc - start:#x} kernel/sysproc.c:{line}"
    lines = text.splitlines()
    assert lines[0] == ("kernel panic: kernel trap: store_page_fault scause=0xf "
                        f"sepc=0x{sepc:x} stval=0x8")
    assert lines[2] == f"sepc={named}"
    # The trap that caused the panic heads the last traps, though the firmware calls
    # that printed the panic came after it.
    traps = _block(text, "last traps:")
    assert re.fullmatch(rf"  #\d+ store_page_fault S->S epc={re.escape(named)} tval=0x8 "
                        r"\(the last trap into S-mode\)", traps[0])
    assert all(" supervisor_ecall S->M epc=0x" in t for t in traps[-8:])


def test_the_pc_line_names_where_the_hart_stopped(
        store_fault: tuple[KernelRun, str, Path]) -> None:
    run, text, kernel = store_fault
    pc = run.machine.hart.pc
    start = run.firmware_image.symbol("finisher_exit")
    assert start is not None and start <= pc
    line = _line_of(kernel / "firmware" / "finisher.c", "for (;;)")  # where it spins
    assert run.result is not None
    assert text.splitlines()[1] == (
        f"pc 0x{pc:x} finisher_exit+{pc - start:#x} kernel/firmware/finisher.c:{line} "
        f"in M-mode after {run.result.instret:,} instructions")


def test_each_backtrace_frame_is_named_by_the_call_it_returns_from(
        store_fault: tuple[KernelRun, str, Path]) -> None:
    """kerneltrap's last instruction is its call to panic, which never returns: the
    return address the kernel prints is the first byte of whatever function follows
    kerneltrap, which is not in the call chain. Named by its call, it is kerneltrap's
    frame at the panic line."""
    run, text, kernel = store_fault
    frames = _block(text, "backtrace, each return address named by its call:")
    names = [f.split()[1].split("+")[0] for f in frames]
    assert names == ["panic", "kerneltrap", "kernelvec", "syscall", "usertrap"]
    ra = int(frames[1].split()[0], 16)
    after = run.namer().location(ra)
    assert after.symbol != "kerneltrap"          # what the bare address names
    start = run.kernel_image.symbol("kerneltrap")
    assert start is not None
    panic_line = _line_of(kernel / "trap.c", 'panic("kernel trap:')
    assert frames[1] == f"  0x{ra:x} kerneltrap+{ra - start:#x} kernel/trap.c:{panic_line}"


def test_backtrace_addresses_that_follow_no_call_are_left_out_and_listed(
        store_fault: tuple[KernelRun, str, Path]) -> None:
    """A word that no call instruction precedes (a function's first byte, a stack
    address) is not in the call chain: left out of the named frames, and said so."""
    run, text, _ = store_fault
    frames = _block(text, "backtrace, each return address named by its call:")
    first = int(frames[0].split()[0], 16)
    entry = run.kernel_image.symbol("usertrap")
    assert entry is not None
    stack = 0x87FFF000
    console = LimitedConsole()
    for byte in f"panic: x\nbacktrace:\n  {first:#x}\n  {entry:#x}\n  {stack:#x}\n".encode():
        console.put(byte)
    shown = diagnose(None, console, None, namer=run.namer())
    assert _block(shown, "backtrace, each return address named by its call:") == [
        frames[0],
        f"  left out, not return addresses (no call instruction before them): "
        f"{entry:#x}, {stack:#x}"]


def test_a_panic_in_a_system_call_keeps_the_ecall_that_led_to_it(
        panic_in_syscall: tuple[KernelRun, str, Path]) -> None:
    _, text, kernel = panic_in_syscall
    lines = text.splitlines()
    assert lines[0] == "kernel panic: boom 7"
    traps = _block(text, "last traps:")
    assert re.fullmatch(r"  #\d+ user_ecall U->S epc=0x[0-9a-f]+ getpid\+0x4 "
                        r"build/rv64/gen/usys\.S:\d+ tval=0x0 \(the last trap into S-mode\)",
                        traps[0]), traps[0]
    frames = _block(text, "backtrace, each return address named by its call:")
    line = _line_of(kernel / "sysproc.c", PANIC)
    assert [f.split()[1].split("+")[0] for f in frames] == ["panic", "sys_getpid", "syscall",
                                                           "usertrap"]
    assert frames[1].endswith(f" kernel/sysproc.c:{line}")


@pytest.mark.parametrize(("code", "size"), [
    (0x000000EF, 4),      # jal ra, 0
    (0x000780E7, 4),      # jalr ra, 0(a5)
    (0x97820001, 2),      # c.nop, then c.jalr a5 right before the return address
    (0x0000006F, None),   # j 0: jal x0 links nothing
    (0x80820001, None),   # c.jr ra (ret)
    (0x11410001, None),   # c.addi sp, -16
])
def test_a_call_is_recognised_by_its_encoding(code: int, size: int | None) -> None:
    assert call_before(code.to_bytes(4, "little"), 64) == size


def test_a_trap_loop_has_one_headline_not_a_hang_as_well() -> None:
    """The grader stops a run whose traps and xRETs pass EVENT_LIMIT; the machine's own
    stop is then the end of an instruction slice (Stop.BUDGET), far below the budget.
    The flood is how the run ended: "hang: still running" would be a second, false,
    headline."""
    result = RunResult(Stop.BUDGET, pc=0x8000026E, instret=30_000_011)
    text = diagnose(result, LimitedConsole(), 150_000_000, flood=True)
    assert text.splitlines()[:2] == [
        f"stopped: more than {EVENT_LIMIT:,} traps and xRETs (a trap loop that makes progress)",
        "pc 0x8000026e in M-mode after 30,000,011 instructions"]
    assert "hang" not in text


def test_a_killed_processes_sepc_is_named_from_the_program_its_line_names() -> None:
    from privlab.kernelinfo.symbols import ElfSymbols
    from privlab.paths import REPO_ROOT, USERLAND_DIR

    with staging_slot() as slot:
        built = build_submission(REPO_ROOT, slot)
        assert built.images is not None
        kernel = KernelUnderTest(built.images)
        run = kernel.boot("hostile", "kread")
        run.run(50_000_000)
        killed = re.search(r"^\[kernel\] pid \d+ \(hostile\) killed: load_page_fault "
                           r"sepc=(0x[0-9a-f]+) ", run.output, re.M)
        assert killed is not None, run.output
        sepc = int(killed.group(1), 16)
        symbols = ElfSymbols(built.images.users["hostile"])
        main_at = symbols.by_name["main"][0]
        symbols.close()
        text = run.diagnosis()
        kernel.close()
    line = _line_of(USERLAND_DIR / "hostile.c", 'strcmp(mode, "kread")') + 1
    assert text.splitlines()[2] == (f"sepc=0x{sepc:x} main+{sepc - main_at:#x} "
                                    f"userland/hostile.c:{line}")
