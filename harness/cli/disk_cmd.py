"""`privlab disk IMAGE`: look inside a file-system disk image (the build's fs.img, or
one a run wrote through --drive).

    privlab disk build/rv64/fs.img            # geometry, then every file: ls -lR
    privlab disk fs.img --check               # fsck: one line per finding
    privlab disk fs.img --inode 7             # one inode's fields and blocks
    privlab disk fs.img --cat /hello > hello  # a file's bytes

--check exits 0 when the image is consistent and 1 with one line per finding
(docs/disk.md lists what it checks); a committed transaction in the log is reported,
and the rest is checked as the kernel's recovery would leave the disk (--no-replay:
as it is). An image that cannot be read, or is not a file system, is one line and
exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..errors import BadInput
from .helplayout import HelpLayout

if TYPE_CHECKING:
    from ..fs import DiskImage

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("disk", help="look inside a file-system disk image (ls, fsck, cat)",
                       description=__doc__, formatter_class=HelpLayout)
    p.add_argument("image", metavar="IMAGE", help="a raw disk image (e.g. build/rv64/fs.img)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--check", action="store_true",
                      help="check the image's consistency (fsck); exit 1 if anything is wrong")
    what.add_argument("--inode", type=int, metavar="N", help="show inode N")
    what.add_argument("--cat", metavar="PATH", help="write the file PATH's bytes to stdout")
    p.add_argument("--no-replay", action="store_true",
                   help="with --check: check the image as it is, not as log recovery "
                        "would leave it")
    p.set_defaults(func=run)


def _path_of(img: DiskImage, inum: int) -> str | None:
    return next((e.path for e in img.walk() if e.inode.inum == inum), None)


def _check(img: DiskImage, replay: bool) -> int:
    from ..fs import check

    findings = check(img, replay=replay)
    for f in findings:
        print(f.message)
    if findings:
        return 1
    used = sum(1 for ino in img.inodes() if not ino.is_free)
    print(f"{img.name}: consistent ({used} inodes in use)")
    return 0


def run(args: argparse.Namespace) -> int:
    # Imported here: every command's parser is built on each run (harness/cli/main.py).
    from ..fs import DiskImage
    from ..inspect.diskview import DiskSummary, DiskTree, InodeView
    from ..theme import make_console

    if args.no_replay and not args.check:
        raise BadInput("--no-replay goes with --check")
    img = DiskImage.open(args.image, strict=not args.check)
    if args.check:
        return _check(img, not args.no_replay)
    if args.cat is not None:
        data = img.read_path(args.cat)
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return 0
    console = make_console()
    if args.inode is not None:
        console.print(InodeView(img, img.inode(args.inode), _path_of(img, args.inode)))
        return 0
    console.print(DiskSummary(img), soft_wrap=True)     # a long image path stays one line
    console.print()
    console.print(DiskTree(img.walk()))
    return 0
