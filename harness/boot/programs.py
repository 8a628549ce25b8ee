"""The user programs a boot offers the kernel: the bundled ones plus `--add PATH`.

`--add PATH` (repeatable) names a user ELF, or a directory whose ELF files (any name;
the listings beside them are skipped) all join. Each joins under its file name without
".elf", in the initrd and in the disk image (harness/boot/bootdisk.py). A name that is
a bundled program's replaces it, with a note saying so. A path that is missing, a file
that is not an ELF, a directory without one, or two added programs of one name is a
one-line BadInput.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..abi.fs_layout import DIRSIZ
from ..errors import BadInput

__all__ = ["ELF_MAGIC", "ProgramFiles", "Programs", "gather_programs", "program_name"]

ELF_MAGIC = b"\x7fELF"


class ProgramFiles(Mapping[str, bytes]):
    """Each program's bytes by name, read from its path when first asked for: a boot
    whose initrd the build has packed already reads none of them (harness/boot/
    bootargs.py user_boot)."""

    def __init__(self, paths: Mapping[str, Path]) -> None:
        self._paths = dict(paths)
        self._read: dict[str, bytes] = {}

    def __getitem__(self, name: str) -> bytes:
        data = self._read.get(name)
        if data is None:
            data = self._read[name] = self._paths[name].read_bytes()
        return data

    def __contains__(self, name: object) -> bool:     # (Mapping's would read the file)
        return name in self._paths

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


@dataclass(frozen=True)
class Programs:
    """Every program of a boot by name, where each came from, the names not built from
    this tree's userland/ (`added`), and one note per bundled program an --add
    replaced. The order is the initrd's: the bundled programs sorted (one replaced
    keeps its place), then the others in the order they were added."""

    files: Mapping[str, bytes]
    paths: dict[str, Path]
    added: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def with_program(self, name: str, path: Path, data: bytes) -> Programs:
        """These programs and one more (replacing any of its name)."""
        added = self.added if name in self.added else (*self.added, name)
        return Programs({**self.files, name: data}, {**self.paths, name: path}, added,
                        self.notes)


def program_name(path: Path) -> str:
    """The name a user ELF joins under: its file name without ".elf"; BadInput if a
    directory entry cannot hold it (1 to DIRSIZ bytes), the one rule for the initrd
    and the disk, so a program runs by its whole name wherever the kernel finds it."""
    name = path.name.removesuffix(".elf")
    size = len(name.encode())
    if not 1 <= size <= DIRSIZ:
        raise BadInput(f"{path}: the program name {name!r} is {size} bytes; a program name "
                       f"is 1 to {DIRSIZ} bytes, as a directory entry holds")
    return name


def _is_elf(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(len(ELF_MAGIC)) == ELF_MAGIC
    except OSError as e:
        raise BadInput(f"--add {path}: cannot read: {e.strerror}") from None


def _one_path(text: str | Path) -> list[Path]:
    path = Path(text)
    if path.is_dir():
        found = sorted(p for p in path.iterdir() if p.is_file() and _is_elf(p))
        if not found:
            raise BadInput(f"--add {path}: no ELF files in this directory")
        return found
    if not path.is_file():
        raise BadInput(f"--add {path}: no such file or directory")
    if not _is_elf(path):
        raise BadInput(f"--add {path}: not an ELF file")
    return [path]


def gather_programs(bundled: Mapping[str, Path], add: Sequence[str | Path] = ()) -> Programs:
    """The bundled programs (name -> ELF path, e.g. Images.users) with every --add."""
    paths = {name: bundled[name] for name in sorted(bundled)}
    added: dict[str, Path] = {}
    notes: list[str] = []
    for text in add:
        for path in _one_path(text):
            name = program_name(path)
            if name in added:
                raise BadInput(f"--add: two programs named {name!r}: {added[name]} and {path}")
            added[name] = path
            if name in bundled:
                notes.append(f"--add {path} replaces the bundled program {name!r}")
    paths.update(added)
    return Programs(ProgramFiles(paths), paths, tuple(added), tuple(notes))
