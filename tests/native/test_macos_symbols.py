"""The native core against the macOS `unicorn==2.1.4` wheels' libunicorn.2.dylib
(docs/install.md, "Other hosts"): cross-compiled with zig for each macOS arch, it links
(zig's Mach-O linker refuses an undefined symbol), and every symbol it takes from
libunicorn, vtlb.c's public API among them, is one the dylib exports, as is each
libunicorn function Python calls through the core (harness/machine/engine.py). Nothing runs:
there is no macOS host here.

Not run in CI: PRIVLAB_MACOS_WHEELS names a directory holding the two wheels, from
`pip download unicorn==2.1.4 --no-deps --only-binary=:all: --platform
macosx_11_0_arm64 -d DIR` and the same with `--platform macosx_10_9_x86_64`; llvm-nm
(Debian's `llvm`) reads the Mach-O files."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from privlab.native.clib import PACKAGED_CFLAGS, compile_library
from privlab.native.library import HART_LIBRARY, unicorn_signatures

WHEELS = os.environ.get("PRIVLAB_MACOS_WHEELS")

# What the virtual TLB's path (vtlb.c, with the run loop's calls through hartapi.c and
# regs.c) calls in libunicorn: the uc_ctl_* macros are all uc_ctl.
VTLB_IMPORTS = {"uc_ctl", "uc_hook_add", "uc_emu_start", "uc_reg_read", "uc_reg_write",
                "uc_vmem_read", "uc_vmem_translate"}


def nm(*args: str) -> list[str]:
    out = subprocess.run(["llvm-nm", *args], capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


@pytest.mark.skipif(not WHEELS, reason="PRIVLAB_MACOS_WHEELS names no directory of wheels")
@pytest.mark.skipif(shutil.which("llvm-nm") is None, reason="no llvm-nm")
@pytest.mark.parametrize(("platform", "target"), [("macosx_11_0_arm64", "aarch64-macos"),
                                                  ("macosx_10_9_x86_64", "x86_64-macos")])
def test_every_libunicorn_symbol_the_core_takes_is_in_the_dylib(
        tmp_path: Path, platform: str, target: str) -> None:
    wheel = next(Path(str(WHEELS)).glob(f"unicorn-2.1.4-*-{platform}.whl"))
    zipfile.ZipFile(wheel).extractall(tmp_path)
    dylib = tmp_path / "unicorn" / "lib" / "libunicorn.2.dylib"
    core = tmp_path / HART_LIBRARY.name
    compile_library(HART_LIBRARY, core, HART_LIBRARY.gen_text(), PACKAGED_CFLAGS,
                    tmp_path / "unicorn" / "include", [str(dylib)], ["-target", target])
    exports = {line.split()[-1] for line in nm("-gU", "--defined-only", str(dylib))}
    # "(undefined) external _uc_ctl (from libunicorn)": Mach-O binds each to one library
    taken = {line.split()[2] for line in nm("-m", "-u", str(core)) if "(from libunicorn)" in line}
    assert taken and taken <= exports
    assert {f"_{name}" for name in VTLB_IMPORTS} <= taken
    # and what Python calls in libunicorn through the core's handle (machine/engine.py)
    assert {f"_{name}" for name in unicorn_signatures()} <= exports
