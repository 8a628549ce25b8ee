"""Firmware that courses ship, written for a QEMU before 7.2, known by its bytes.

A course that moves from QEMU changes one variable of its Makefile
(`QEMU="privlab qemu"`), and its Makefile goes on passing the firmware the course
ships (`-bios bootloader/rustsbi-qemu.bin`). The uCore course's firmware was written for
QEMU 6 and 7.0, and QEMU 7.2, which privlab models, stops it: the 2022 handouts' RustSBI
0.1.1 enters the kernel with no PMP entry, an illegal `mret` since QEMU 7.0; the 2023
and 2024 handouts' RustSBI-QEMU looks the UART up by a device-tree node name QEMU 7.2
changed. privlab knows those two files by their SHA-256 and runs each as the QEMU it was
written for (the same options a user can give: --pmp-before-qemu7,
--dtb-before-qemu7.2), saying so in one line; `--no-known-firmware` runs them as
QEMU 7.2 does. Any other firmware runs as QEMU 7.2 runs it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..digest import sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["KNOWN", "NO_KNOWN_FIRMWARE", "OLDER_QEMU", "KnownFirmware", "known_firmware",
           "run_as_written_for"]

NO_KNOWN_FIRMWARE = "--no-known-firmware"

# The options for an earlier QEMU, and the names they have in a command's arguments.
PMP_BEFORE_QEMU7 = ("--pmp-before-qemu7", "pmp_before_qemu7")
DTB_BEFORE_QEMU72 = ("--dtb-before-qemu7.2", "dtb_before_qemu72")
OLDER_QEMU = (PMP_BEFORE_QEMU7, DTB_BEFORE_QEMU72)


@dataclass(frozen=True)
class KnownFirmware:
    """A firmware file a course ships: its size and SHA-256, what it is, the QEMU it
    was written for, and the options (flag, argument name) that model that QEMU."""

    size: int
    digest: str
    what: str
    written_for: str
    options: tuple[tuple[str, str], ...]


KNOWN: tuple[KnownFirmware, ...] = (
    KnownFirmware(
        103_288, "ece63b9213f13d362e9ab40f0b128d277daa1acbb039db1a343ba718e6ad402c",
        "the uCore course's 2022 RustSBI (0.1.1)", "QEMU 6", (PMP_BEFORE_QEMU7,)),
    KnownFirmware(
        38_592, "fe1079672c6a02496ac67ebafd3a73fb21cdb631fc8b8bb9215218ea04b1f8f5",
        "the uCore course's 2023 and 2024 RustSBI-QEMU (rustsbi 0.3.0-alpha.2)",
        "QEMU 7.0", (DTB_BEFORE_QEMU72,)),
)


def known_firmware(path: Path) -> KnownFirmware | None:
    """The entry of KNOWN that `path` holds, if any: only a file of a known size is
    read and hashed."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return None                    # the loader says what is wrong with the file
    candidates = [k for k in KNOWN if k.size == size]
    if not candidates:
        return None
    digest = sha256(path.read_bytes()).hexdigest()
    return next((k for k in candidates if k.digest == digest), None)


def run_as_written_for(path: Path, args: Any) -> str | None:
    """If `path` is a known firmware and `args` (a command's options) does not say
    --no-known-firmware, turn on in `args` the options that model the QEMU it was
    written for, and return the line that says so (None when it is not known, or
    asks for nothing the user has not given)."""
    if getattr(args, "no_known_firmware", False):
        return None
    known = known_firmware(path)
    if known is None:
        return None
    added = [flag for flag, dest in known.options if not getattr(args, dest, False)]
    if not added:
        return None
    for _, dest in known.options:
        setattr(args, dest, True)
    return (f"{path} is {known.what}, written for {known.written_for}: privlab runs it as "
            f"that QEMU would ({' '.join(added)}); {NO_KNOWN_FIRMWARE} runs it as QEMU 7.2 "
            "does")
