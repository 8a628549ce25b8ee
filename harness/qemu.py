"""The reference oracle: run a bare-metal ELF on QEMU 7.2 and read back what it did.

privlab's trap delivery must equal QEMU's for the same program. This module runs
`qemu-system-riscv{64,32} -machine virt -bios none -nographic -kernel ELF -d int`, and
returns the exit status the guest chose through the sifive_test finisher, the bytes it
wrote to the UART, and every trap QEMU logged (`riscv_cpu_do_interrupt` lines).

QEMU 7.2 logs one line per trap entry, printing `cause` as the exception or interrupt
code *without* the interrupt bit (that is the separate `async` flag) and the registers
at the target's XLEN (16 hex digits on riscv64, 8 on riscv32):

    riscv_cpu_do_interrupt: hart:0, async:1, cause:0000000000000007, \
epc:0x0000000080000042, tval:0x0000000000000000, desc=m_timer

xRETs are not logged.

With `drive`, a raw image becomes virtio-blk on the first virtio-mmio transport
(0x1000_1000, where privlab's `--drive` puts it) behind a modern (version 2) transport.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .abi.platform import PLATFORM
from .build.toolchain import Arch
from .errors import ExitStatus, PrivlabError
from .pace import DEFAULT_ICOUNT_SHIFT

__all__ = [
    "QemuNotFound",
    "QemuResult",
    "TrapRecord",
    "drive_args",
    "finisher_exit_status",
    "parse_int_log",
    "qemu_binary",
    "qemu_command",
    "run_qemu",
]

TIMEOUT_EXIT_STATUS = ExitStatus.BUDGET  # as `timeout` and privlab's own budget
"""`QemuResult.exit_status` of a run killed at its timeout (as `privlab run --max-insns`)."""



class QemuNotFound(PrivlabError):
    """qemu-system-riscv64/32 is not installed (or not on PATH)."""


@dataclass(frozen=True)
class TrapRecord:
    """One trap entry as QEMU's `-d int` reports it."""

    interrupt: bool
    code: int
    epc: int
    tval: int
    name: str

    def __str__(self) -> str:
        kind = "irq" if self.interrupt else "exc"
        return f"{kind} {self.code} ({self.name}) epc={self.epc:#x} tval={self.tval:#x}"


@dataclass(frozen=True)
class QemuResult:
    """What one QEMU run did. `exit_status` is the finisher code (0 for a pass),
    or TIMEOUT_EXIT_STATUS when QEMU had to be killed (`timed_out`)."""

    exit_status: int
    console: bytes
    traps: list[TrapRecord] = field(default_factory=list)
    timed_out: bool = False
    stderr: str = ""
    log: str = ""


_INT_LINE = re.compile(
    r"riscv_cpu_do_interrupt: hart:(?P<hart>\d+), async:(?P<async>[01]), "
    r"cause:(?P<cause>[0-9a-fA-F]+), epc:0x(?P<epc>[0-9a-fA-F]+), "
    r"tval:0x(?P<tval>[0-9a-fA-F]+), desc=(?P<desc>\S+)"
)
_INT_PREFIX = "riscv_cpu_do_interrupt:"


def parse_int_log(text: str) -> list[TrapRecord]:
    """Every trap in a QEMU 7.2 `-d int` log, in order.

    Lines that are not trap reports are skipped; a trap report in an unknown format
    raises ValueError, so a changed QEMU log format cannot pass silently.
    """
    traps = []
    for line in text.splitlines():
        if not line.startswith(_INT_PREFIX):
            continue
        m = _INT_LINE.fullmatch(line.strip())
        if m is None:
            raise ValueError(f"unrecognised QEMU trap line: {line!r}")
        traps.append(
            TrapRecord(
                interrupt=m["async"] == "1",
                code=int(m["cause"], 16),
                epc=int(m["epc"], 16),
                tval=int(m["tval"], 16),
                name=m["desc"],
            )
        )
    return traps


def finisher_exit_status(value: int) -> int | None:
    """The exit status QEMU's sifive_test device gives for a 32-bit write of `value`:
    0x5555 -> 0, 0x3333 | code << 16 -> code; None when the write does not power off
    (0x7777 resets, anything else is ignored). The host process status is that & 0xff."""
    status, code = value & 0xFFFF, (value >> 16) & 0xFFFF
    if status == PLATFORM.finisher_pass:
        return 0
    if status == PLATFORM.finisher_fail:
        return code
    return None


def qemu_binary(arch: Arch) -> Path | None:
    """Path of qemu-system-riscv64 or -riscv32 for `arch`, or None if not installed."""
    found = shutil.which(f"qemu-system-riscv{arch.xlen}")
    return Path(found) if found else None


def drive_args(image: Path, legacy: bool = False, snapshot: bool = False) -> list[str]:
    """QEMU's arguments for privlab's `--drive IMAGE`: virtio-blk on virtio-mmio slot 0
    (QEMU fills the highest slot first unless told), version 2 (QEMU 7.2 defaults to
    legacy virtio-mmio), or version 1 with `legacy` (privlab's `--virtio-legacy`);
    `snapshot` keeps the guest's writes out of the file (`--drive IMAGE,snapshot=on`,
    and the bundled system's default disk). cache=unsafe: a guest's FLUSH does not
    wait for the host's disk (an fdatasync on a busy host outlasted a conformance
    program's bounded wait); what the guest sees is the same."""
    return ["-global", f"virtio-mmio.force-legacy={'true' if legacy else 'false'}",
            "-drive", f"file={image},format=raw,if=none,id=x0,cache=unsafe"
            + (",snapshot=on" if snapshot else ""),
            "-device", "virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0"]


def qemu_command(elf: Path, arch: Arch, log: Path, extra_args: Sequence[str] = (),
                 icount: bool = False, drive: Path | None = None,
                 icount_shift: int = DEFAULT_ICOUNT_SHIFT,
                 virtio_legacy: bool = False) -> list[str]:
    """The QEMU command line that runs `elf` bare-metal and logs traps to `log`; with
    `icount`, time follows the instruction count (2^icount_shift ns each)."""
    binary = qemu_binary(arch)
    if binary is None:
        raise QemuNotFound(
            f"qemu-system-riscv{arch.xlen} not found on PATH (install QEMU 7.2, "
            "e.g. `apt-get install qemu-system-misc`)"
        )
    cmd = [str(binary), "-machine", "virt", "-bios", "none", "-nographic",
           "-kernel", str(elf), "-d", "int", "-D", str(log)]
    if icount:
        cmd += ["-icount", f"shift={icount_shift}"]
    if drive is not None:
        cmd += drive_args(drive, virtio_legacy)
    return [*cmd, *extra_args]


def run_qemu(elf: Path, arch: Arch, timeout_s: float, extra_args: Sequence[str] = (),
             icount: bool = False, drive: Path | None = None,
             icount_shift: int = DEFAULT_ICOUNT_SHIFT, virtio_legacy: bool = False) -> QemuResult:
    """Run `elf` on QEMU's virt board with no firmware (and `drive` as virtio-blk);
    kill it after `timeout_s`."""
    with tempfile.TemporaryDirectory(prefix="privlab-qemu-") as tmp:
        log = Path(tmp) / "int.log"
        cmd = qemu_command(elf, arch, log, extra_args, icount, drive, icount_shift,
                           virtio_legacy)
        timed_out = False
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=timeout_s, check=False)
            stdout, stderr, status = proc.stdout, proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:  # subprocess.run has killed QEMU
            timed_out = True
            stdout, stderr, status = e.stdout or b"", e.stderr or b"", TIMEOUT_EXIT_STATUS
        text = log.read_text(errors="replace") if log.exists() else ""
    return QemuResult(
        exit_status=status,
        console=stdout,
        traps=parse_int_log(text),
        timed_out=timed_out,
        stderr=stderr.decode(errors="replace"),
        log=text,
    )
