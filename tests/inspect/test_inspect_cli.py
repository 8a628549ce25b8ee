"""The inspection commands end to end: pagetable, translate, inspect --at, tour; and
system-call argument decoding from syscall.tbl."""

from __future__ import annotations

import re
import shutil
import time
from io import StringIO
from pathlib import Path

import pytest

from privlab.abi.syscall_table import load_syscall_table
from privlab.api import Session
from privlab.build.images import Images, build_images
from privlab.cli.main import main
from privlab.cli.tour_cmd import tour
from privlab.inspect import make_console
from privlab.paths import KERNEL_DIR
from privlab.trace.syscalls import ArgKind, call_specs, escape_bytes


def test_pagetable_shows_hellos_text_stack_trapframe_and_trampoline(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pagetable", "--user", "hello"]) == 0
    out = capsys.readouterr().out
    assert "Sv39" in out
    assert re.search(r"\[16[-\d]*\]\s+0x0000010000-0x000001[0-9a-f]fff  r-xu-ad", out)  # text
    assert re.search(r"0x3fffffe000-0x3fffffefff  rw---ad", out)              # trap frame: no u
    assert re.search(r"0x3ffffff000-0x3fffffffff  r-x--ad", out)              # trampoline


def test_translate_a_fault_names_the_missing_u_bit(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["translate", "0x3fffffe000", "--priv", "U", "--user", "hello"]) == 0
    out = capsys.readouterr().out
    assert "✗ load_page_fault (cause 13): level 0: U-mode access to a page without U" in out


def test_translate_a_symbol_agrees_with_the_hart(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["translate", "main", "--access", "x", "--user", "hello"]) == 0
    out = capsys.readouterr().out
    assert "fetch from U-mode" in out and "✓ pa 0x" in out and "main (userland/hello.c" in out
    # 16 bytes as hexdump -C shows them: one line, whatever they hold
    assert re.search(r"\nbytes there: (?:[0-9a-f]{2} ){15}[0-9a-f]{2}  \|[ -~]{16}\|\n", out)


def test_translate_agrees_with_the_hart_in_its_own_context(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["translate", "0x10000", "--priv", "S", "--user", "hello"]) == 0
    assert "the hart's own translation agrees: fault" in capsys.readouterr().out


def test_inspect_at_a_trap_shows_every_section_and_what_changed(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--at", "syscall:write", "--user", "hello"]) == 0
    out = capsys.readouterr().out
    for heading in ("Registers", "CSRs (* = changed by this event)", "Code",
                    "Processes (proc[])", "Trap frame"):
        assert heading in out
    assert re.search(r" scause\*\s+0x0+8  user_ecall", out)
    assert re.search(r" sepc\*\s+0x0+1[0-9a-f]{4}  write\+0x", out)
    assert out.index("\nSupervisor") < out.index("\nMachine")   # a trap into S: S first
    assert "▶ 0x" in out and "ecall" in out and "uservec:" in out
    assert re.search(r"▶\s+0\s+1\s+0\s+RUNNING\s+hello", out)  # slot, pid, tid
    # the trap frame's code pointers, named
    assert re.search(r"kernel_trap +0x0+802[0-9a-f]{5}  usertrap_entry "
                     r"\(kernel/trampoline\.S:\d+\)", out)
    assert re.search(r"epc +0x0+1[0-9a-f]{4}  \S+ \(", out)


def test_inspect_at_a_system_call_shows_the_registers_again_at_its_return(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--no-drive", "--at", "syscall:write", "--user", "compute"]) == 0
    out = capsys.readouterr().out
    trip = out[out.index("User registers: at the trap and at its return"):].splitlines()
    assert re.fullmatch(r" +trap #(\d+) +sret #(\d+) +trap #\1 +sret #\2 *", trip[1])
    assert re.match(r"  a0\*  0{15}1  0{15}4 ", trip[7])     # fd 1 in, 4 bytes written out
    assert trip[-1] == "* differs: pc, a0"


def test_inspect_round_trip_shows_the_register_a_broken_trap_path_lost(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The trap lab's bug: uservec does not save s5, so the write's return hands back
    the trap frame's stale s5 (0) instead of compute's loop bound."""
    shutil.copytree(KERNEL_DIR, tmp_path / "kernel")
    trampoline = tmp_path / "kernel" / "trampoline.S"
    trampoline.write_text(trampoline.read_text().replace("    REG_S s5, TF_S5(a0)\n", "", 1))
    broken = build_images("rv64", kernel_dir=tmp_path / "kernel", out_dir=tmp_path / "out",
                          listings=False)
    assert main(["inspect", "--no-drive", "--kernel", str(broken.kernel), "--icount-shift",
                 "0", "--at", "syscall:write", "--user", "compute"]) == 0
    out = capsys.readouterr().out
    trip = out[out.index("User registers: at the trap and at its return"):].splitlines()
    assert re.search(r"  s5\*  0000000000030d40  0{16} *$", trip[12]), trip[12]
    assert trip[-1] == "* differs: pc, a0, s5"


def test_inspect_bad_point_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--no-drive", "--at", "trap:9", "--user", "hello"]) == 2
    assert capsys.readouterr().err == "privlab: event #9 is an sret, not a trap: use event:9\n"


def test_tour_walks_through_boot_write_csrs_and_page_table() -> None:
    out = StringIO()
    start = time.perf_counter()
    assert tour(console=make_console(width=100, file=out, color=False)) == 0
    took = time.perf_counter() - start
    text = out.getvalue()
    for title in ("1  Boot: M-mode to S-mode to U-mode", "2  hello's write(), across U, S and M",
                  "3  What the ecall did to the CSRs",
                  "4  The kernel's write reaches the firmware, in M-mode",
                  "5  hello's page table, and the walk to its buffer"):
        assert title in text
    assert 'user_ecall  write(1, "Hello, world!\\n", 14)  pid 1' in text
    assert "sret  → 14  write" in text and "SIE=1→0" in text and "✓ pa 0x" in text
    assert took < 20, f"the tour took {took:.1f} s"


def test_syscall_arguments_are_classified_from_their_c_types() -> None:
    specs = {c.name: c for c in call_specs(load_syscall_table()).values()}
    kinds = {name: [a.kind for a in specs[name].args] for name in
             ("write", "read", "exec", "get_time", "mmap")}
    assert kinds == {
        "write": [ArgKind.INT, ArgKind.BUF_IN, ArgKind.UINT],
        "read": [ArgKind.INT, ArgKind.BUF_OUT, ArgKind.UINT],
        "exec": [ArgKind.STR_IN, ArgKind.STRV_IN],
        "get_time": [ArgKind.OUT, ArgKind.INT],
        "mmap": [ArgKind.ADDR, ArgKind.UINT, ArgKind.INT],
    }
    assert specs["write"].args[1].length_arg == 2 and specs["exit"].noreturn


def test_escape_bytes_is_c_like_and_bounded() -> None:
    assert escape_bytes(b'a\n\t\0"\\\x7f') == '"a\\n\\t\\0\\"\\\\\\x7f"'
    assert escape_bytes(b"x" * 60) == '"' + "x" * 48 + '"...'


def test_out_structs_are_read_after_the_call_returns(images: Images) -> None:
    s = Session.boot("sleep", ["1"], images=images, capture=True)
    s.run(max_insns=100_000_000)
    got = [c for c in s.syscalls if c.name == "get_time"]
    assert got and all(c.ret == 0 for c in got)
    assert re.fullmatch(r"\{sec=0, usec=\d+\}", got[0].outputs[0].text)
    usecs = [int(c.outputs[0].text.split("usec=")[1][:-1]) for c in got]
    assert usecs == sorted(usecs)
    s.close()


def test_inspect_pid_shows_that_processes_trap_frame(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--at", "syscall:exit:2", "--pid", "2", "--user", "forktree",
                 "1"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"\npid 2 \(forktree\)  struct trapframe at 0x[0-9a-f]+\n", out)
    assert re.search(r"epc +0x0+1[0-9a-f]{4}  exit\+0x8 \(build/rv64/gen/usys\.S:\d+\)", out)
    assert main(["inspect", "--at", "syscall:exit", "--pid", "9", "--user", "forktree",
                 "1"]) == 2
    assert capsys.readouterr().err == \
        "privlab: no process with pid 9 at syscall:exit (pids: 1, 2, 3)\n"


def test_the_tours_next_commands_run_on_the_tours_own_machine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = StringIO()
    assert tour("rv32", console=make_console(width=200, file=out, color=False)) == 0
    nexts = [line.split("  ")[1].strip() for line in out.getvalue().splitlines()
             if line.startswith("  privlab ")]
    assert len(nexts) == 6 and all(" --arch rv32 " in cmd for cmd in nexts)
    monkeypatch.chdir(tmp_path)           # the html export writes hello.html here
    for cmd in nexts:
        assert main(cmd.split()[1:]) == 0, cmd


def test_inspect_shows_the_processs_open_files(capsys: pytest.CaptureFixture[str]) -> None:
    """fscrash's first write is to d0/f0, just created: fd 3, write-only, 0 bytes yet;
    0, 1 and 2 are the console (1 and 2 one shared file, ref 2)."""
    assert main(["inspect", "--at", "syscall:write", "--user", "fscrash", "1"]) == 0
    out = capsys.readouterr().out
    section = out[out.index("Open files (pid 1)"):].splitlines()[1:6]
    rows = [line.split() for line in section]
    assert rows[0] == ["fd", "kind", "mode", "ref", "what"]
    assert rows[1:4] == [["0", "console", "r", "1"], ["1", "console", "w", "2"],
                         ["2", "console", "w", "2"]]
    assert re.fullmatch(r"3 inode w 1 inode \d+ \(file, 0 bytes\), offset 0", " ".join(rows[4]))

