"""Boot the kernel on QEMU's virt board for the end-to-end tests. Tests using it skip
cleanly when qemu-system-riscv64 is not installed (`needs_qemu`)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from privlab.build.images import Images
from privlab.qemu import drive_args

QEMU = "qemu-system-riscv64"
QEMU32 = "qemu-system-riscv32"


@dataclass(frozen=True)
class Boot:
    output: str
    status: int


def boot_qemu(images: Images, *, bios: str | Path | None = None, bootargs: str | None = None,
              stdin: str = "", dtb: Path | None = None, timeout: float = 60,
              icount: bool = False, disk: bool = True) -> Boot:
    """Boot kernel + initrd on QEMU's virt board; `bios` defaults to our firmware
    ("default" is QEMU's OpenSBI). With `disk`, the build's fs.img is attached as a
    snapshot, as `privlab run` attaches it. With `icount`, time follows instructions
    (1 ns each) rather than the host clock, so timer interrupts land where they would
    on any host; sleep=off makes an idle hart (wfi) jump to its next timer deadline, as
    privlab's does, instead of waiting for the host's clock to get there (under load the
    host overshoots, and a 30 ms sleep measured 45). Returns the console output and
    QEMU's exit status."""
    qemu = QEMU if images.arch.xlen == 64 else QEMU32
    cmd = [qemu, "-machine", "virt", "-nographic", "-monitor", "none", "-serial", "stdio",
           "-bios", str(bios or images.firmware), "-kernel", str(images.kernel),
           "-initrd", str(images.initrd)]
    if bootargs is not None:
        cmd += ["-append", bootargs]
    if dtb is not None:
        cmd += ["-dtb", str(dtb)]
    if icount:
        cmd += ["-icount", "shift=0,sleep=off"]
    if disk:
        cmd += drive_args(images.disk, snapshot=True)
    proc = subprocess.run(cmd, input=stdin.encode(), capture_output=True, timeout=timeout,
                          check=False)
    return Boot(proc.stdout.decode(errors="replace").replace("\r\n", "\n"), proc.returncode)


needs_qemu = pytest.mark.skipif(shutil.which(QEMU) is None, reason=f"{QEMU} is not installed")
needs_qemu32 = pytest.mark.skipif(shutil.which(QEMU32) is None,
                                  reason=f"{QEMU32} is not installed")
