"""Bare-metal M-mode programs: compile, link at 0x8000_0000, cache.

A bare-metal program is what `qemu-system-riscv64 -machine virt -bios none -kernel X.elf`
(and `privlab run --bios none --kernel X.elf`) runs: the hart starts in M-mode at RAM
base, which `baremetal.ld` fills with the input section `.text.entry`. Every program
sees `kernel/include` first on its include path, so `platform.h` (the memory map) is the
one place the finisher, CLINT and UART addresses come from, and `riscv_gen.h` (causes,
CSR fields, PTE bits, from privlab/abi) the one place for the spec's numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..abi import spec_header
from ..errors import BadInput
from ..paths import KERNEL_DIR, REPO_ROOT
from .cache import cache_root, write_if_changed
from .ldscript import with_platform
from .listing import write_listings
from .toolchain import Arch, CompileOptions, compile_object, link

__all__ = ["BAREMETAL_LDSCRIPT", "build_baremetal"]

BAREMETAL_LDSCRIPT = Path(__file__).with_name("baremetal.ld")
"""Links `.text.entry` first at PLATFORM_RAM_BASE; defines `__stack_top`, `__bss_start/end`.
Every script is linked through ldscript.with_platform, so it names the platform's
addresses instead of repeating them."""

_PLATFORM_INCLUDE = KERNEL_DIR / "include"


def _spec_header_dir(arch: Arch) -> Path:
    """A directory holding this architecture's riscv_gen.h (harness/abi/spec_header.py)."""
    gen = cache_root() / "gen" / arch.name
    write_if_changed(gen / "riscv_gen.h", spec_header.render(arch.xlen))
    return gen


def _prefix_map(dirs: Sequence[Path]) -> list[tuple[Path, str]]:
    """Record files of this repository by their path in it and any other directory by
    its own name, so the ELF is the same wherever the sources lie."""
    outside = sorted({d.resolve() for d in dirs} - {REPO_ROOT}, key=lambda d: len(d.parts))
    return [(REPO_ROOT, "."), *((d, d.name) for d in outside if not d.is_relative_to(REPO_ROOT))]


def build_baremetal(
    sources: Sequence[Path],
    arch: Arch,
    out: Path,
    include_dirs: Sequence[Path] = (),
    defines: Mapping[str, str | int] | None = None,
    listings: bool = True,
    ldscript: Path = BAREMETAL_LDSCRIPT,
) -> Path:
    """Compile `sources` (C or .S) for `arch` and link them into the ELF `out` (with
    `ldscript`: BAREMETAL_LDSCRIPT by default), with its disassembly (`.dis`) and
    symbol map (`.map`) beside it unless `listings` is off.

    Objects, the linked image and the listings are cached by content
    (privlab.build.cache), so a rebuild with unchanged inputs only copies files.
    """
    if not sources:
        raise BadInput(f"no sources given for {out.name}")
    missing = [str(s) for s in sources if not Path(s).is_file()]
    if missing:
        raise BadInput(f"no such source file: {', '.join(missing)}")
    gen = _spec_header_dir(arch)
    includes = (_PLATFORM_INCLUDE, gen, *map(Path, include_dirs))
    opts = CompileOptions(
        arch=arch,
        include_dirs=includes,
        defines=dict(defines or {}),
        prefix_map=[*_prefix_map([*(Path(s).parent for s in sources), *includes]),
                    (gen, f"gen/{arch.name}")],
    )
    objects = [compile_object(Path(s), opts) for s in sources]
    elf = link(objects, out, arch, with_platform(ldscript, gen))
    if listings:
        write_listings(elf)
    return elf
