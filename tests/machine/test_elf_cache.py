"""load_elf caches what it reads from an ELF by the file's content (harness/machine/loader.py):
a second load of the same bytes runs no pyelftools and yields the same image; changed
bytes are parsed again."""

from __future__ import annotations

from pathlib import Path

import pytest

from privlab.build.images import Images
from privlab.errors import BadInput
from privlab.machine import loader
from privlab.machine.loader import load_elf


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PRIVLAB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    parsed: list[Path] = []
    real = loader._parse

    def counting(p: Path, data: bytes) -> loader.ElfImage:
        parsed.append(p)
        return real(p, data)

    monkeypatch.setattr(loader, "_parse", counting)
    return parsed


def test_a_second_load_of_the_same_bytes_is_served_from_the_cache(
        images: Images, cache: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    parsed = _count_parses(monkeypatch)
    first = load_elf(images.kernel)
    copy = tmp_path / "copy.elf"                  # another path, the same content
    copy.write_bytes(images.kernel.read_bytes())
    second = load_elf(copy)
    assert parsed == [images.kernel]
    assert len(list((cache / "elf-facts").glob("*.json"))) == 1
    assert second.path == copy
    assert (second.xlen, second.entry, second.segments, second.symbols) == \
        (first.xlen, first.entry, first.segments, first.symbols)
    assert second.symbols  # the kernel's symbol table, not an empty one


def test_a_changed_elf_is_parsed_again(images: Images, cache: Path,
                                       monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    elf = tmp_path / "k.elf"
    elf.write_bytes(images.kernel.read_bytes())
    before = load_elf(elf)
    parsed = _count_parses(monkeypatch)
    seg = before.segments[0]
    data = bytearray(elf.read_bytes())
    data[seg.offset] ^= 0xFF                     # same size, one byte of code changed
    elf.write_bytes(bytes(data))
    after = load_elf(elf)
    assert parsed == [elf]
    assert after.segments[0].data[0] == seg.data[0] ^ 0xFF
    assert load_elf(elf).segments[0].data == after.segments[0].data


def test_an_unreadable_cache_entry_is_parsed_again(images: Images, cache: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    good = load_elf(images.firmware)
    for entry in (cache / "elf-facts").glob("*.json"):
        entry.write_text("{not json")
    parsed = _count_parses(monkeypatch)
    assert load_elf(images.firmware).symbols == good.symbols
    assert parsed == [images.firmware]


def test_a_corrupt_elf_is_still_one_line_of_bad_input(cache: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.elf"
    bad.write_bytes(b"\x7fELF" + b"\0" * 12)
    with pytest.raises(BadInput, match="truncated or corrupt ELF"):
        load_elf(bad)
    assert list(cache.glob("elf-facts/*.json")) == []
