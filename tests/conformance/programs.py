"""The conformance programs, and how to build them for either XLEN.

Each `tests/conformance/<name>.S` is one program; it is linked with the shared runtime
in `lib/` (reset entry, trap vectors, expectation checking, page tables) into a
bare-metal ELF that QEMU's `virt` board and `privlab run --bios none` both run.

    from conformance.programs import PROGRAMS, build_program
    elf = build_program("exc_ecall", "rv64")

or from a shell, printing the ELF paths (all programs when none is named):

    python tests/conformance/programs.py rv64 exc_ecall xret

Builds are cached by content (privlab.build.cache), so calling build_program again is
cheap; the ELF lands in `<cache>/conformance/<arch>/<name>.elf`. A program may have a C
half, `<name>.c`, linked in too.

A program in DRIVES needs a disk: `scratch_drive(name, directory)` makes its zero-filled
raw image, which both QEMU (`run_qemu(..., drive=)`) and privlab (`Machine(drive=)`)
get as virtio-blk in virtio-mmio slot 0, through the transport version LEGACY says.
Such a device program takes no traps unless it asks for the device's interrupt
(virtio_blk_irq).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path

from privlab.build.baremetal import build_baremetal
from privlab.build.cache import cache_root
from privlab.build.toolchain import ARCHES, Arch
from privlab.devices.disk import SECTOR

__all__ = ["CONFORMANCE_DIR", "DRIVES", "HOST_CLOCK_ONLY", "LEGACY", "PROGRAMS", "build_program",
           "program_source", "scratch_drive"]

CONFORMANCE_DIR = Path(__file__).resolve().parent
INCLUDE_DIR = CONFORMANCE_DIR / "include"
RUNTIME_SOURCES = (CONFORMANCE_DIR / "lib" / "entry.S", CONFORMANCE_DIR / "lib" / "runtime.c")

PROGRAMS: list[str] = sorted(p.stem for p in CONFORMANCE_DIR.glob("*.S"))
"""Program names (file stems), sorted."""

DRIVES: dict[str, int] = {name: 64 * SECTOR
                          for name in ("virtio_blk", "virtio_blk_irq", "virtio_blk_legacy")}
"""The programs that need a drive, and the size of their scratch image in bytes."""

LEGACY: frozenset[str] = frozenset({"virtio_blk_legacy"})
"""The programs that run with the legacy (version 1) virtio-mmio transport: QEMU's
`-global virtio-mmio.force-legacy=true`, privlab's `Machine(virtio_legacy=True)`."""


HOST_CLOCK_ONLY: frozenset[str] = frozenset({"exc_uart_fetch"})
"""The programs QEMU runs only with time from the host clock: under `-icount` QEMU 7.2
never completes a fetch from the UART (it runs until killed), so the second,
instruction-counted reference run is left out for them."""


def scratch_drive(name: str, directory: Path) -> Path | None:
    """A fresh zero-filled image for program `name` in `directory`, or None."""
    size = DRIVES.get(name)
    if size is None:
        return None
    path = directory / f"{name}.img"
    path.write_bytes(bytes(size))
    return path


def program_source(name: str) -> Path:
    path = CONFORMANCE_DIR / f"{name}.S"
    if name not in PROGRAMS:
        raise KeyError(f"no conformance program {name!r} (have: {', '.join(PROGRAMS)})")
    return path


def build_program(name: str, arch: Arch | str) -> Path:
    """Build program `name` for `arch` (an Arch or "rv64"/"rv32"); returns the ELF path."""
    return _build(name, ARCHES[arch] if isinstance(arch, str) else arch)


@cache
def _build(name: str, arch: Arch) -> Path:
    out = cache_root() / "conformance" / arch.name / f"{name}.elf"
    c_half = CONFORMANCE_DIR / f"{name}.c"
    sources = [program_source(name), *([c_half] if c_half.is_file() else []), *RUNTIME_SOURCES]
    return build_baremetal(sources, arch, out, include_dirs=[INCLUDE_DIR])


def main(argv: Sequence[str]) -> int:
    if not argv or argv[0] not in ARCHES:
        print(f"usage: programs.py {{{'|'.join(ARCHES)}}} [NAME...]", file=sys.stderr)
        return 2
    for name in argv[1:] or PROGRAMS:
        print(build_program(name, argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
