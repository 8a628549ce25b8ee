"""The file system's disk images, from the harness's side (the layout is
harness/abi/fs_layout.py's, the kernel's side kernel/fs.c's).

- `make_image(files)` (mkfs): a fresh consistent image holding `files`;
- `DiskImage` (image): read the superblock, inodes, files and directories of one;
- `check(image)` (fsck): what is inconsistent in one, as `Finding`s; `replay_log`
  installs a committed log transaction as the kernel's recovery would.
"""

from .fsck import Finding, check, replay_log
from .image import DiskImage, FileBlocks, TreeEntry
from .mkfs import make_image
from .records import DirEntry, Inode, LogHeader
from .superblock import Region, Superblock

__all__ = [
    "DirEntry",
    "DiskImage",
    "FileBlocks",
    "Finding",
    "Inode",
    "LogHeader",
    "Region",
    "Superblock",
    "TreeEntry",
    "check",
    "make_image",
    "replay_log",
]
