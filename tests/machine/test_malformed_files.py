"""Every malformed ELF and trace file is one line on stderr and exit
status 2, never a traceback. The named cases first, then a seeded fuzz over mutated
copies of real files of each kind (FUZZ_CASES each; half of the trace files' mutants
edit only the JSON header), through the command line itself
(in process, so hundreds of files cost seconds)."""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from privlab.cli.main import main
from privlab.machine.tracefile import MAGIC, VERSION

FUZZ_SEED = 45
FUZZ_CASES = 500
FORMATS = ("text", "calls", "jsonl", "perfetto", "html")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().err


def assert_one_line(status: int, err: str, expected: str = "") -> None:
    assert status == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("privlab: "), err
    assert expected in lines[0], lines[0]


@pytest.fixture(scope="module")
def elf_bytes() -> bytes:
    from machine.asm import build_asm
    return build_asm("""
        li a0, 1
        la t0, value
        ld a0, 0(t0)
        PASS
    .data
    value: .dword 7
    """).read_bytes()


@pytest.fixture(scope="module")
def trace_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    from conformance.programs import build_program
    out = tmp_path_factory.mktemp("trace") / "run.trace"
    assert main(["run", "--input", "x", "--bios", "none", "--kernel",
                 str(build_program("exc_ecall", "rv64")),
                 "--trace-out", str(out)]) == 0
    return out.read_bytes()


# ---- ELF: named cases -------------------------------------------------------------------

def program_headers(data: bytes) -> tuple[int, int, int]:
    """(e_phoff, e_phentsize, e_phnum) of a 64-bit ELF."""
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    return phoff, phentsize, phnum


def first_load(data: bytes) -> int:
    phoff, phentsize, phnum = program_headers(data)
    for i in range(phnum):
        if struct.unpack_from("<I", data, phoff + i * phentsize)[0] == 1:   # PT_LOAD
            return phoff + i * phentsize
    raise AssertionError("no PT_LOAD")


def test_segment_with_file_size_above_memory_size_is_one_line(
        elf_bytes: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bytearray(elf_bytes)
    ph = first_load(data)
    filesz, = struct.unpack_from("<Q", data, ph + 0x20)
    struct.pack_into("<Q", data, ph + 0x28, filesz - 1)           # p_memsz < p_filesz
    path = tmp_path / "x.elf"
    path.write_bytes(bytes(data))
    status, err = cli(capsys, "run", "--input", "x", "--bios", "none", "--kernel", str(path))
    assert_one_line(status, err, f"x.elf: a segment's file size {filesz:#x} is larger "
                                 f"than its memory size {filesz - 1:#x}")


# ---- trace files: named cases -----------------------------------------------------------

def with_header(trace: bytes, header: bytes) -> bytes:
    length, = struct.unpack_from("<I", trace, 12)
    return struct.pack("<8sII", MAGIC, VERSION, len(header)) + header + trace[16 + length:]


def header_of(trace: bytes) -> dict[str, object]:
    length, = struct.unpack_from("<I", trace, 12)
    header: dict[str, object] = json.loads(trace[16:16 + length])
    return header


@pytest.mark.parametrize(("name", "change", "expected"), [
    ("xlen 1e400", lambda h: json.dumps(h).replace('"xlen": 64', '"xlen": 1e400'),
     "damaged trace header (xlen is not an integer)"),
    ("nested", lambda h: "[" * 30000 + "]" * 30000, "damaged trace header (not a JSON object"),
    ("no fields", lambda h: json.dumps({k: v for k, v in h.items() if k != "fields"}),
     "damaged trace header (no 'fields')"),
    ("harts 10**30", lambda h: json.dumps({**h, "harts": 10**30}),
     "damaged trace header (harts 1000000000000000000000000000000"),
    ("initial X", lambda h: json.dumps({**h, "initial": "X"}),
     "damaged trace header (initial privilege 'X')"),
])
def test_a_damaged_trace_header_is_one_line(
        trace_bytes: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
        change: Callable[[dict[str, object]], str], expected: str) -> None:
    path = tmp_path / "bad.trace"
    path.write_bytes(with_header(trace_bytes, change(header_of(trace_bytes)).encode()))
    assert_one_line(*cli(capsys, "trace", "--from", str(path)), expected)


def test_a_record_with_an_unknown_kind_is_one_line_naming_it(
        trace_bytes: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from privlab.abi.native_layout import EVENT_FIELDS
    from privlab.machine.events import RECORD
    length, = struct.unpack_from("<I", trace_bytes, 12)
    first = 16 + length
    data = bytearray(trace_bytes)
    sizes = {"uint64_t": 8, "uint32_t": 4, "uint8_t": 1}
    names = [name for name, _, _ in EVENT_FIELDS]
    kind_offset = sum(sizes[t] for _, t, _ in EVENT_FIELDS[:names.index("kind")])
    data[first + RECORD.size + kind_offset] = 9
    path = tmp_path / "bad.trace"
    path.write_bytes(bytes(data))
    assert_one_line(*cli(capsys, "trace", "--from", str(path)),
                    "damaged event record #1 (kind 9)")


# ---- the fuzz ---------------------------------------------------------------------------

def mutate(data: bytes, rng: random.Random, protect: int = 0) -> bytes:
    """One to four random edits: flip bytes, overwrite a run, cut, insert, or write an
    extreme integer; the first `protect` bytes are kept (so mutants get past a magic
    number and reach the parser)."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if len(out) <= protect + 8:
            break
        at = rng.randrange(protect, len(out) - 8)
        what = rng.randrange(6)
        if what == 0:
            out[at] ^= 1 << rng.randrange(8)
        elif what == 1:
            n = rng.randint(1, 64)
            out[at:at + n] = bytes(rng.randrange(256) for _ in range(n))
        elif what == 2:
            del out[at:]
        elif what == 3:
            out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
        elif what == 4:
            out[at:at + 8] = rng.choice([b"\xff" * 8, b"\x00" * 8, b"\x7f" + b"\xff" * 7,
                                         b"\x80" + b"\x00" * 7])
        else:
            out[at:at + 4] = struct.pack("<I", rng.choice([0, 1, 0xFFFFFFFF, 0x80000000]))
    return bytes(out)


def test_fuzzed_elfs_run_or_fail_in_one_line(
        elf_bytes: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(FUZZ_SEED)
    outcomes = {"ran": 0, "refused": 0}
    for n in range(FUZZ_CASES):
        path = tmp_path / f"m{n}.elf"
        path.write_bytes(mutate(elf_bytes, rng, protect=4))
        status, err = cli(capsys, "run", "--input", "x", "--bios", "none", "--kernel", str(path),
                          "--max-insns", "2000")
        assert "Traceback" not in err, (n, err)
        if status == 2:
            assert_one_line(status, err)
            outcomes["refused"] += 1
        else:
            outcomes["ran"] += 1
    print(outcomes)
    assert outcomes["refused"] >= FUZZ_CASES // 10 and outcomes["ran"] >= FUZZ_CASES // 10


def test_fuzzed_trace_files_show_or_fail_in_one_line(
        trace_bytes: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(FUZZ_SEED)
    outcomes = {"shown": 0, "refused": 0}
    for n in range(FUZZ_CASES):
        path = tmp_path / f"m{n}.trace"
        if n % 2:       # the JSON header alone, its length kept right
            length, = struct.unpack_from("<I", trace_bytes, 12)
            header = mutate(trace_bytes[16:16 + length], rng)
            path.write_bytes(with_header(trace_bytes, header))
        else:
            path.write_bytes(mutate(trace_bytes, rng, protect=len(MAGIC)))
        fmt = FORMATS[n % len(FORMATS)]
        status, err = cli(capsys, "trace", "--from", str(path), "--format", fmt,
                          "-o", str(tmp_path / f"out.{fmt}"))
        assert "Traceback" not in err, (n, err)
        if status == 2:
            assert_one_line(status, err)
            outcomes["refused"] += 1
        else:
            assert status == 0, (n, status, err)
            outcomes["shown"] += 1
    print(outcomes)
    assert outcomes["refused"] >= FUZZ_CASES // 10 and outcomes["shown"] >= FUZZ_CASES // 10
