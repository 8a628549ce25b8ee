"""Where the bundled sources live: in a clone, or inside an installed wheel.

From a clone (`pip install -e .`) the kernel, userland and lab sources stay in the
repository next to the `harness/` folder, so students edit the same files the tools
build. A wheel (`packaging/stage.py` fills it) carries the same trees inside the
package, in `privlab/_data/`: `kernel/`, `userland/`, `labs/`, `docs/`, the images built from
them (`build/<arch>/`) and the native libraries (`native/`). `REPO_ROOT` is the
directory holding `kernel/`, `userland/`, `labs/` and `docs/` in either case.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ABI_HEADER", "DATA_DIR", "INSTALLED", "KERNEL_DIR", "PACKAGE_DIR",
           "PLATFORM_HEADER", "REPO_ROOT", "USERLAND_DIR"]

PACKAGE_DIR = Path(__file__).resolve().parent
DATA_DIR = PACKAGE_DIR / "_data"
# A wheel's install holds _data/kernel; a clone has no _data (packaging/stage.py
# writes it into the wheel's build tree, never into harness/).
INSTALLED = (DATA_DIR / "kernel").is_dir()
REPO_ROOT = DATA_DIR if INSTALLED else PACKAGE_DIR.parent
KERNEL_DIR = REPO_ROOT / "kernel"
USERLAND_DIR = REPO_ROOT / "userland"
PLATFORM_HEADER = KERNEL_DIR / "include" / "platform.h"
ABI_HEADER = KERNEL_DIR / "include" / "abi.h"
