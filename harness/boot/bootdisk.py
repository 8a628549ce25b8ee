"""The disk a boot of the bundled system gets in virtio-mmio slot 0.

- `--drive IMAGE`: that image, as given (writes reach the file unless snapshot=on);
- otherwise the build's `fs.img` (every bundled program as /NAME, harness/build/
  images.py), as a snapshot: the guest's writes stay in memory and the file never
  changes, so every run starts from the same disk and stays deterministic;
- when `--add` (or `--user PATH`) brings programs the build's image lacks, an image of
  all the boot's programs, made for this run (harness/fs/mkfs.py), in memory;
- `--no-drive` (`attach=False`): none.

The default disk is mapped read-only into memory rather than opened: the build
replaces fs.img by renaming a new file over it, never by writing into it, so a
rebuild cannot change a running guest's disk; sessions that are never closed hold no
file descriptor; and only the sectors the guest reads take memory. Runs of one build
share the mapping (`_built`).
"""

from __future__ import annotations

import mmap
from functools import lru_cache
from pathlib import Path

from ..devices.disk import Drive
from ..errors import BadInput
from .programs import Programs

__all__ = ["RUN_IMAGE_NAME", "boot_drive"]

RUN_IMAGE_NAME = "fs.img (made for this run)"
_CACHED_IMAGES = 4


@lru_cache(maxsize=_CACHED_IMAGES)
def _read(path: Path, mtime_ns: int, size: int) -> bytes | mmap.mmap:
    del mtime_ns               # the cache key: a rebuilt file is mapped again
    if size == 0:
        return b""             # (mmap cannot map nothing)
    with path.open("rb") as f:
        return mmap.mmap(f.fileno(), size, access=mmap.ACCESS_READ)


def _built(path: Path) -> bytes | mmap.mmap:
    try:
        st = path.stat()
        return _read(path, st.st_mtime_ns, st.st_size)
    except OSError as e:
        raise BadInput(f"{path}: cannot read the built disk image: {e.strerror} "
                       "(privlab build makes it)") from None


def boot_drive(built: Path, programs: Programs, drive: Drive | None = None, *,
               attach: bool = True) -> Drive | None:
    """The Drive for a boot whose initrd holds `programs` (UserBoot.programs); `built`
    is the build's fs.img (Images.disk). `drive` (from --drive) wins over the rest."""
    if drive is not None:
        return drive
    if not attach:
        return None
    if not programs.added:
        return Drive.in_memory(_built(built), str(built))
    from ..fs.mkfs import make_image  # only for a run with added programs

    try:
        image = make_image(programs.files)
    except BadInput as e:
        raise BadInput(f"cannot make this run's disk image: {e} (--no-drive boots "
                       "without one)") from None
    return Drive.in_memory(image, RUN_IMAGE_NAME)
