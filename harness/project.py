"""Which kernel and userland a command builds and boots: the project it runs in.

A *project* is a directory with a `kernel/` like privlab's (one holding `kernel.ld` or
`syscall.tbl`): a lab handout, a student's clone, a copy of privlab. `privlab run`,
`build`, `trace`, `inspect`, `pagetable` and `translate` look for one from the working
directory upward and build *its* `kernel/` (firmware and kernel) and `userland/` (or
privlab's bundled `userland/` when it has none) into `<project>/build/<arch>/`. Outside
any project, or inside privlab's own checkout, they use the bundled sources.
`--src DIR` names the project instead of searching.

Kept free of the build and the machine: the command line imports it to parse.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import BadInput
from .paths import KERNEL_DIR, REPO_ROOT, USERLAND_DIR

__all__ = ["BUNDLED", "Sources", "find_project", "is_project", "sources_for"]

MARKERS = ("kernel.ld", "syscall.tbl")   # in kernel/: what makes a kernel "like privlab's"


@dataclass(frozen=True)
class Sources:
    """The source trees of one build: `root` is the project (None: privlab's own)."""

    root: Path | None
    kernel: Path
    userland: Path

    @property
    def bundled(self) -> bool:
        return self.root is None

    @property
    def own_userland(self) -> bool:
        return self.userland != USERLAND_DIR

    def out_dir(self, arch: str) -> Path:
        """Where the build goes: `<project>/build/<arch>` (privlab's: `build/<arch>`)."""
        return (self.root or REPO_ROOT) / "build" / arch

    def announcement(self) -> str | None:
        """The line a command prints first when it is not building the bundled system."""
        if self.root is None:
            return None
        if self.own_userland:
            return (f"privlab: using {self.root}: its kernel/ and userland/, not privlab's "
                    "bundled ones")
        return (f"privlab: using {self.root}: its kernel/ (not privlab's bundled one) and "
                "privlab's userland/ (it has none)")


BUNDLED = Sources(None, KERNEL_DIR, USERLAND_DIR)


def is_project(directory: Path) -> bool:
    kernel = directory / "kernel"
    return kernel.is_dir() and any((kernel / m).is_file() for m in MARKERS)


def find_project(start: Path | None = None) -> Path | None:
    """The nearest directory at or above `start` (default: the working directory)
    that holds a kernel/ like privlab's; None if there is none."""
    try:
        here = Path(start if start is not None else os.getcwd()).resolve()
    except OSError:            # the working directory was removed
        return None
    for directory in (here, *here.parents):
        if is_project(directory):
            return directory
    return None


def _sources(root: Path) -> Sources:
    root = root.resolve()
    if root == REPO_ROOT.resolve():
        return BUNDLED
    userland = root / "userland"
    return Sources(root, root / "kernel", userland if userland.is_dir() else USERLAND_DIR)


def sources_for(src: str | Path | None = None, start: Path | None = None) -> Sources:
    """The sources named by `--src DIR`, else those of the project around `start` (the
    working directory), else the bundled ones. BadInput for a DIR with no kernel/."""
    if src is not None:
        root = Path(src)
        if not root.is_dir():
            raise BadInput(f"--src {src}: " + ("not a directory" if root.exists()
                                               else "no such directory"))
        if not (root / "kernel").is_dir():
            hint = (f" (it looks like a kernel/ itself: --src {root.parent})"
                    if any((root / m).is_file() for m in MARKERS) else "")
            raise BadInput(f"--src {src}: no kernel/ directory in it{hint}")
        return _sources(root)
    found = find_project(start)
    return BUNDLED if found is None else _sources(found)
