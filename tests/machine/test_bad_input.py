"""Bad input gets one clear line on stderr and exit status 2, never a traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from machine.asm import build_asm


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "privlab", "run", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def assert_one_line_error(p: subprocess.CompletedProcess[str], expected: str) -> None:
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("privlab: "), lines[0]
    assert expected in lines[0]


def bare(path: Path | str) -> subprocess.CompletedProcess[str]:
    return run("--bios", "none", "--kernel", str(path))


def test_missing_file(tmp_path: Path) -> None:
    assert_one_line_error(bare(tmp_path / "nope.elf"), "nope.elf: no such file")


def test_directory(tmp_path: Path) -> None:
    assert_one_line_error(bare(tmp_path), "is a directory")


def test_not_an_elf(tmp_path: Path) -> None:
    f = tmp_path / "text.elf"
    f.write_text("hello\n")
    assert_one_line_error(bare(f), "text.elf: not an ELF file")


def test_not_risc_v() -> None:
    assert_one_line_error(bare(sys.executable), "not RISC-V")


@pytest.mark.parametrize("keep", [0x20, 0x40, 200])
def test_truncated_file(tmp_path: Path, keep: int) -> None:
    data = build_asm("PASS").read_bytes()
    f = tmp_path / "cut.elf"
    f.write_bytes(data[:keep])
    assert_one_line_error(bare(f), "cut.elf: truncated")


def test_segments_outside_ram(tmp_path: Path) -> None:
    elf = build_asm("PASS")
    # 1 MiB of RAM cannot hold a segment at 0x8000_0000 + ... ; use a program whose
    # data lies past the end of a small RAM instead.
    p = run("--bios", "none", "--kernel", str(elf), "--ram", "1")
    assert p.returncode == 0   # a tiny program fits in 1 MiB
    big = build_asm("""
        PASS
        .bss
        .space 0x200000
    """)
    assert_one_line_error(run("--bios", "none", "--kernel", str(big), "--ram", "1"),
                          "lies outside RAM 0x80000000-0x80100000")


def test_bios_none_needs_a_kernel() -> None:
    assert_one_line_error(run("--bios", "none"), "--bios none needs --kernel")


@pytest.mark.parametrize("option", ["--max-insns", "--ram"])
@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_bad_numbers(option: str, value: str) -> None:
    p = run(option, value, "--bios", "none", "--kernel", "x")
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert p.stderr.startswith("privlab: ")


def test_trace_out_in_missing_directory(tmp_path: Path) -> None:
    assert_one_line_error(run("--bios", "none", "--kernel", str(build_asm("PASS")),
                              "--trace-out", str(tmp_path / "no" / "t.jsonl")),
                          "does not exist")


def test_wrong_width_kernel_for_firmware() -> None:
    elf32 = build_asm("PASS", "rv32")
    assert_one_line_error(run("--kernel", str(elf32), "--arch", "rv64"), "32-bit")


def test_an_unwritable_output_is_one_line_and_status_1(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    p = subprocess.run([sys.executable, "-m", "privlab", "lab", "handout", "mmap", "-o",
                        str(blocker / "handout")], capture_output=True, text=True, timeout=120,
                       check=False)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr == f"privlab: {blocker / 'handout'}: Not a directory\n"


@pytest.mark.parametrize("fmt", ["text", "jsonl"])
def test_a_reader_that_stops_early_gets_no_traceback(fmt: str) -> None:
    """`privlab trace | head -1`: the pipe closes under privlab, which stops quietly
    with status 141, as `cat` does (128 + SIGPIPE), for the text output as for JSON
    Lines."""
    # sleep 50 writes ~320 KB of text timeline and ~1.2 MB of JSON Lines at the default
    # pace: several times what a pipe and the reader's buffer hold, so privlab is still
    # writing when the pipe closes
    proc = subprocess.Popen([sys.executable, "-m", "privlab", "trace", "--no-capture",
                             "--format", fmt, "--user", "sleep", "50"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""
    if fmt == "text":
        assert first.split() == [b"seq", b"instret", b"U", b"S", b"M", b"path", b"event"]
    else:
        assert first.startswith(b'{"kind": "xret", "seq": 0, ')
