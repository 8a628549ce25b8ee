"""What privlab reads of an image to name addresses is kept per file content in the
cache (harness/kernelinfo/symbols.py, ElfTable): its symbols whole, and each
compilation unit's line table once a lookup has needed it. Every address is named as
pyelftools' line programs say, unit by unit, whether read now or read back; a second
reader needs no pyelftools; a damaged cache entry is read anew."""

from __future__ import annotations

import bisect
import json
import subprocess
import sys
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from privlab.build.images import build_images
from privlab.kernelinfo.symbols import ElfSymbols, ElfTable, _file_names


@pytest.fixture(scope="module")
def elves() -> list[Path]:
    images = build_images("rv64", listings=False)
    return [images.kernel, images.firmware, images.users["hello"]]


def _oracle(path: Path) -> dict[int, list[tuple[int, tuple[str, int] | None]]]:
    """Each compilation unit's own rows, by the unit's offset, as pyelftools reads them."""
    out = {}
    with path.open("rb") as f:
        dwarf = ELFFile(f).get_dwarf_info()
        for cu in dwarf.iter_CUs():
            prog = dwarf.line_program_for_CU(cu)
            if prog is None:
                continue
            files = _file_names(prog)
            rows = [(e.state.address, None if e.state.end_sequence
                     else (files.get(e.state.file, "?"), e.state.line))
                    for e in prog.get_entries() if e.state is not None]
            out[cu.cu_offset] = sorted(rows, key=lambda p: (p[0], p[1] is not None))
    return out


def test_every_text_address_gets_its_own_units_line(elves: list[Path]) -> None:
    for path in elves:
        table = ElfSymbols(path)
        units = _oracle(path)
        checked = 0
        for rows in units.values():
            addrs = [a for a, _ in rows]
            # every address of the unit's sequences, the unit's own answer
            for lo, row in rows:
                if row is None:
                    continue
                i = bisect.bisect_right(addrs, lo) - 1
                assert table.line(lo) == rows[i][1], (path.name, hex(lo))
                checked += 1
        assert checked > 20, path.name
        # at the end of a sequence where no other begins: no line
        starts = {a for rows in units.values() for a, r in rows if r is not None}
        ends = {a for rows in units.values() for a, r in rows if r is None} - starts
        assert ends and all(table.line(a) is None for a in ends), path.name


def test_a_table_read_back_answers_as_the_run_that_read_it(elves: list[Path]) -> None:
    for path in elves:
        ElfTable.cache_path(path).unlink(missing_ok=True)
        first = ElfSymbols(path)
        text = [a for lo, hi in first.ranges for a in range(lo, min(hi, lo + 0x4000), 2)]
        answers = [first.line(a) for a in text]
        again = ElfSymbols(path)               # every unit those needed, from the cache
        assert again._table.lines.keys() == first._table.lines.keys() != set()
        assert [again.line(a) for a in text] == answers


def test_a_second_reader_needs_no_pyelftools(elves: list[Path]) -> None:
    code = ("import sys, json\n"
            "from pathlib import Path\n"
            "from privlab.kernelinfo.symbols import ElfSymbols\n"
            f"s = ElfSymbols(Path({str(elves[0])!r}))\n"
            "print(json.dumps([s.symbol(s.by_name['usertrap'][0]), "
            "s.line(s.by_name['usertrap'][0]), 'elftools' in sys.modules]))\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)  # caches
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    symbol, line, loaded = json.loads(out)
    assert symbol == ["usertrap", 0]
    assert line[0] == "kernel/trap.c" and line[1] > 0
    assert loaded is False


def test_a_damaged_cache_entry_is_read_anew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            elves: list[Path]) -> None:
    monkeypatch.setenv("PRIVLAB_CACHE", str(tmp_path))
    path = elves[2]
    first = ElfSymbols(path)
    [entry] = (tmp_path / "symbols").iterdir()
    entry.write_bytes(b"not a pickle")
    again = ElfSymbols(path)
    assert (again.by_name, again.ranges) == (first.by_name, first.ranges)
    assert entry.read_bytes() != b"not a pickle"
