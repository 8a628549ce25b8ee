"""Where the bundled sources live.

privlab is installed from a checkout (`pip install -e .`): the kernel, userland and
test sources stay in the repository next to the `harness` package, so students edit
the same files the tools build.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["ABI_HEADER", "KERNEL_DIR", "PLATFORM_HEADER", "REPO_ROOT", "USERLAND_DIR"]

REPO_ROOT = Path(__file__).resolve().parent.parent
KERNEL_DIR = REPO_ROOT / "kernel"
USERLAND_DIR = REPO_ROOT / "userland"
PLATFORM_HEADER = KERNEL_DIR / "include" / "platform.h"
ABI_HEADER = KERNEL_DIR / "include" / "abi.h"
