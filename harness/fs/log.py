"""The write-ahead log as recovery sees it (kernel/log.c does the same at boot).

The header block at `logstart` holds `n` and `block[0..n-1]`; log block
logstart + 1 + i holds the new contents of home block `block[i]`. n > 0 means a
transaction was committed but perhaps not yet installed: recovery copies each log
block home, then writes the header with n = 0. Installing twice changes nothing, so
recovery may itself be interrupted and run again.
"""

from __future__ import annotations

from ..abi.fs_layout import BSIZE, LOGBLOCKS
from ..errors import BadInput
from .image import DiskImage
from .records import LogHeader

__all__ = ["header_problems", "replay_log"]


def header_problems(img: DiskImage, header: LogHeader) -> list[str]:
    """Why recovery could not install this header's transaction ([]: it could)."""
    sb = img.superblock
    room = min(LOGBLOCKS, sb.nlog - 1)
    if header.n > room:
        return [f"the log header says n = {header.n}, more than the log holds ({room} blocks)"]
    return [f"log entry {i} sends its block home to block {home}, outside the disk "
            f"({sb.size} blocks)" for i, home in enumerate(header.homes) if not 0 <= home < sb.size]


def replay_log(image: bytes | DiskImage) -> bytes:
    """The image after recovery: the committed blocks at home and n = 0 (the image
    itself if nothing is committed). BadInput if the header cannot be installed."""
    img = image if isinstance(image, DiskImage) else DiskImage(image)
    header = img.log_header()
    problems = header_problems(img, header)
    if problems:
        raise BadInput(f"{img.name}: {problems[0]}")
    if header.n == 0:
        return img.data
    out = bytearray(img.data)
    start = img.superblock.logstart
    for i, home in enumerate(header.homes):
        out[home * BSIZE:(home + 1) * BSIZE] = img.block(start + 1 + i)
    cleared = LogHeader(0, header.block).pack()    # as the kernel writes it: n = 0
    out[start * BSIZE:start * BSIZE + len(cleared)] = cleared
    return bytes(out)
