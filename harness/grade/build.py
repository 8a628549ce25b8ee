"""Building a submission for grading.

The submission's `kernel/` is built with the grader's own `userland/` (the lab test
programs must be the trusted ones: a student cannot edit them to print the token).

Builds happen in a *staging slot*: a fixed directory under the build cache that the
sources are copied into. The object cache keys on compiler flags, which include the
include directories' paths, so building every submission at the same path lets
unchanged files hit the cache: a class of submissions that differ in a few files
compiles only those files. A slot is held with an exclusive file lock, so parallel
graders (threads or processes) each take their own.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.build.cache import cache_root
from harness.build.images import build_images
from harness.errors import BuildError, PrivlabError
from harness.grade.kernel import KernelImages
from harness.paths import USERLAND_DIR

__all__ = ["BuildResult", "build_submission", "staging_slot"]

MAX_SLOTS = 64


@dataclass(frozen=True)
class BuildResult:
    """Images, or the compiler's output when the build failed."""

    images: KernelImages | None
    output: str
    seconds: float
    out_dir: Path

    @property
    def ok(self) -> bool:
        return self.images is not None


@contextmanager
def staging_slot() -> Iterator[Path]:
    """An exclusive staging directory, `<cache>/grade-stage/<n>`, held until exit."""
    root = cache_root() / "grade-stage"
    root.mkdir(parents=True, exist_ok=True)
    for n in range(MAX_SLOTS):
        lock_path = root / f"{n}.lock"
        fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            yield root / str(n)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        return
    raise PrivlabError(f"all {MAX_SLOTS} grading slots under {root} are busy")


def _replace_tree(src: Path, dst: Path) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, symlinks=False,
                    ignore=shutil.ignore_patterns(".git", "__pycache__", "*.o", "*.elf"))


def build_submission(submission: Path, slot: Path, *, arch: str = "rv64",
                     userland: Path = USERLAND_DIR) -> BuildResult:
    """Build `submission/kernel` with `userland` in `slot`; never raises for a
    compile error (the result carries the output, with paths pointing back into the
    submission)."""
    start = time.perf_counter()
    kernel_src = submission / "kernel"
    out = slot / "out"
    if not kernel_src.is_dir():
        return BuildResult(None, f"{submission}: no kernel/ directory to build",
                           time.perf_counter() - start, out)
    _replace_tree(kernel_src, slot / "kernel")
    _replace_tree(userland, slot / "userland")
    try:
        images = build_images(arch, kernel_dir=slot / "kernel", userland_dir=slot / "userland",
                              out_dir=out, listings=False)
    except BuildError as e:
        text = (e.output or e.message).replace(str(slot / "kernel"), str(kernel_src))
        text = text.replace(str(slot / "userland"), str(userland))
        return BuildResult(None, text.rstrip() or e.message, time.perf_counter() - start, out)
    except PrivlabError as e:
        return BuildResult(None, str(e), time.perf_counter() - start, out)
    built = KernelImages(images.firmware, images.kernel, dict(images.users),
                         slot / "kernel" / "syscall.tbl")
    return BuildResult(built, "", time.perf_counter() - start, out)
