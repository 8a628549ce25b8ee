"""QEMU 7.2's command line, the part course Makefiles write for the `virt` board, read
into a `QemuLine`: what to boot and how, with nothing of QEMU's left to interpret.

    qemu-system-riscv64 -machine virt -bios none -kernel kernel/kernel -m 128M -smp 3
        -nographic -global virtio-mmio.force-legacy=false
        -drive file=fs.img,if=none,format=raw,id=x0
        -device virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0 -S -gdb tcp::26000

Options are spelt `-name` or `--name`, their value in the next word (`-m 128M`) or
after `=` (`--m=128M`). What privlab does not model is refused in one line naming the
option (`Refused`, bad input), never silently dropped: a run that quietly differs from
QEMU's would mislead more than one that does not start.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BadInput

__all__ = ["BLK_BUS", "Loader", "QemuLine", "Refused", "parse_qemu_line"]

BLK_BUS = "virtio-mmio-bus.0"     # the one virtio-mmio slot privlab attaches a disk to
GDB_DEFAULT_PORT = 1234           # -s
MAX_HARTS = 8


class Refused(BadInput):
    """A QEMU option or value privlab does not model."""


@dataclass(frozen=True)
class Loader:
    """-device loader,file=F,addr=A: F's bytes at physical address A."""

    path: Path
    addr: int


@dataclass
class QemuLine:
    """A QEMU command line, as `privlab qemu` understood it."""
    bios: str = "default"             # "default", "none" or a file
    kernel: Path | None = None
    initrd: Path | None = None
    append: str = ""
    loaders: list[Loader] = field(default_factory=list)
    drive: Path | None = None         # the drive a virtio-blk-device uses
    snapshot: bool = False
    legacy: bool = True               # QEMU 7.2's default: force-legacy=true
    ram_mib: int = 128
    smp: int = 1
    icount_shift: int | None = None
    gdb: str | None = None            # [HOST:]PORT for harness/gdb
    freeze: bool = False              # -S: wait for gdb before the first instruction
    help: bool = False


def _size_mib(text: str) -> int:
    """-m 128M, 128 (MiB), 1G, size=256M."""
    value = text.removeprefix("size=")
    units = {"": 1, "M": 1, "G": 1024}
    suffix = value[-1:].upper() if value[-1:].isalpha() else ""
    digits = value[:-1] if suffix else value
    if suffix not in units or not digits.isdigit() or int(digits) == 0:
        raise Refused(f"-m {text}: expected a size in MiB such as 128M or 1G")
    return int(digits) * units[suffix]


def _props(option: str, text: str) -> tuple[str, dict[str, str]]:
    """`driver,key=value,...` as its first word and its properties."""
    head, *rest = text.split(",")
    props: dict[str, str] = {}
    for item in rest:
        key, eq, value = item.partition("=")
        if not eq:
            raise Refused(f"{option} {text}: expected key=value, not {item!r}")
        props[key] = value
    return head, props


def _items(option: str, text: str, bare: str, keys: set[str]) -> dict[str, str]:
    """`VALUE,key=value,...` where a word without `=` is the value of `bare`."""
    props: dict[str, str] = {}
    for item in text.split(","):
        key, eq, value = item.partition("=")
        key, value = (key, value) if eq else (bare, key)
        if key not in keys:
            raise Refused(f"{option} {text}: privlab does not model {key}=")
        props[key] = value
    return props


def _only(option: str, text: str, props: dict[str, str], allowed: dict[str, set[str] | None]
          ) -> None:
    for key, value in props.items():
        if key not in allowed:
            raise Refused(f"{option} {text}: privlab does not model {key}=")
        values = allowed[key]
        if values is not None and value not in values:
            raise Refused(f"{option} {text}: privlab models {key}={'|'.join(sorted(values))} "
                          "only")


def _number(option: str, text: str, low: int, high: int) -> int:
    if not text.isdigit() or not low <= int(text) <= high:
        raise Refused(f"{option} {text}: expected a number from {low} to {high}")
    return int(text)


class _Reader:
    def __init__(self) -> None:
        self.line = QemuLine()
        self.drives: dict[str, tuple[Path, bool]] = {}
        self.uses: list[str] = []          # drive ids the virtio-blk devices name
        self.snapshot_all = False          # -snapshot: every drive as snapshot=on

    def machine(self, v: str) -> None:
        name, props = _props("-machine", v)
        if name != "virt" or props:
            raise Refused(f"-machine {v}: privlab models the plain virt board only "
                          "(-machine virt)")

    def bios(self, v: str) -> None:
        self.line.bios = v

    def kernel(self, v: str) -> None:
        self.line.kernel = Path(v)

    def initrd(self, v: str) -> None:
        self.line.initrd = Path(v)

    def append(self, v: str) -> None:
        self.line.append = v

    def m(self, v: str) -> None:
        self.line.ram_mib = _size_mib(v)

    def smp(self, v: str) -> None:
        """-smp 3, -smp cpus=3, -smp 3,maxcpus=3."""
        props = _items("-smp", v, "cpus", {"cpus", "maxcpus"})
        count = props.get("cpus", "")
        if props.get("maxcpus", count) != count:
            raise Refused(f"-smp {v}: privlab has no hot-plugged harts (maxcpus = cpus)")
        self.line.smp = _number("-smp", count, 1, MAX_HARTS)

    def icount(self, v: str) -> None:
        """-icount shift=N, -icount N."""
        shift = _items("-icount", v, "shift", {"shift"}).get("shift", "")
        if shift == "auto":
            raise Refused(f"-icount {v}: privlab's clock is fixed per instruction "
                          "(shift=N, 0 to 10)")
        self.line.icount_shift = _number("-icount", shift, 0, 10)

    def gdb(self, v: str) -> None:
        if not v.startswith("tcp:"):
            raise Refused(f"-gdb {v}: privlab serves gdb on TCP only (-gdb tcp::PORT)")
        host, _, port = v.removeprefix("tcp:").rpartition(":")
        self.line.gdb = f"{host or '127.0.0.1'}:{port}"

    def s(self) -> None:
        self.line.gdb = f"127.0.0.1:{GDB_DEFAULT_PORT}"

    def S(self) -> None:
        self.line.freeze = True

    def snapshot(self) -> None:
        """-snapshot: every drive's writes kept in memory, the file left as it was."""
        self.snapshot_all = True

    def nographic(self) -> None:
        """The console on stdin/stdout: privlab's only console."""

    def serial(self, v: str) -> None:
        if v not in ("mon:stdio", "stdio"):
            raise Refused(f"-serial {v}: privlab's serial port is the terminal "
                          "(-serial mon:stdio)")

    def monitor(self, v: str) -> None:
        if v != "none":
            raise Refused(f"-monitor {v}: privlab has no QEMU monitor (-monitor none)")

    def global_(self, v: str) -> None:
        key, _, value = v.partition("=")
        if key != "virtio-mmio.force-legacy" or value not in ("true", "false", "on", "off"):
            raise Refused(f"-global {v}: privlab models virtio-mmio.force-legacy=true|false "
                          "only")
        self.line.legacy = value in ("true", "on")

    def drive(self, v: str) -> None:
        _, props = _props("-drive", "," + v)
        _only("-drive", v, props, {"file": None, "if": {"none"}, "format": {"raw"},
                                   "id": None, "snapshot": {"on", "off"}})
        if "file" not in props or "id" not in props:
            raise Refused(f"-drive {v}: privlab needs file=F,if=none,format=raw,id=X "
                          "(and -device virtio-blk-device,drive=X)")
        self.drives[props["id"]] = (Path(props["file"]), props.get("snapshot") == "on")

    def device(self, v: str) -> None:
        driver, props = _props("-device", v)
        if driver == "loader":
            _only("-device", v, props, {"file": None, "addr": None})
            if "file" not in props or "addr" not in props:
                raise Refused(f"-device {v}: privlab's loader takes file=F,addr=A")
            try:
                addr = int(props["addr"], 0)
            except ValueError:
                raise Refused(f"-device {v}: addr {props['addr']!r} is not a number") from None
            self.line.loaders.append(Loader(Path(props["file"]), addr))
        elif driver == "virtio-blk-device":
            _only("-device", v, props, {"drive": None, "bus": {BLK_BUS}})
            if "drive" not in props:
                raise Refused(f"-device {v}: needs drive=ID (a -drive ...,id=ID)")
            if "bus" not in props:
                raise Refused(f"-device {v}: privlab attaches the disk to {BLK_BUS} only: "
                              f"add bus={BLK_BUS}")
            self.uses.append(props["drive"])
        else:
            raise Refused(f"-device {driver}: not modelled (privlab has virtio-blk-device "
                          "and loader)")

    def finish(self) -> QemuLine:
        if len(self.uses) > 1:
            raise Refused("-device virtio-blk-device: privlab attaches one disk "
                          f"({BLK_BUS})")
        for use in self.uses:
            if use not in self.drives:
                raise Refused(f"-device virtio-blk-device,drive={use}: no -drive with "
                              f"id={use}")
            self.line.drive, self.line.snapshot = self.drives[use]
            self.line.snapshot |= self.snapshot_all
        return self.line


# option -> (takes a value, the reader's method name)
_OPTIONS: dict[str, tuple[bool, str]] = {
    "machine": (True, "machine"), "M": (True, "machine"), "bios": (True, "bios"),
    "kernel": (True, "kernel"), "initrd": (True, "initrd"), "append": (True, "append"),
    "m": (True, "m"), "smp": (True, "smp"), "icount": (True, "icount"),
    "gdb": (True, "gdb"), "s": (False, "s"), "S": (False, "S"),
    "nographic": (False, "nographic"), "snapshot": (False, "snapshot"), "serial": (True, "serial"),
    "monitor": (True, "monitor"), "global": (True, "global_"), "drive": (True, "drive"),
    "device": (True, "device"),
}
_HELP = {"help", "h"}


def parse_qemu_line(words: Sequence[str]) -> QemuLine:
    """The QEMU options in `words` (without the program's name), checked and read."""
    reader = _Reader()
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-") or word == "-":
            raise Refused(f"{word}: not a QEMU option (QEMU's options start with -)")
        name, eq, inline = word.lstrip("-").partition("=")
        if name in _HELP:
            reader.line.help = True
            i += 1
            continue
        if name not in _OPTIONS:
            raise Refused(f"-{name}: not modelled by privlab qemu (privlab qemu -help "
                          "lists what is)")
        takes, method = _OPTIONS[name]
        action: Callable[..., None] = getattr(reader, method)
        if not takes:
            if eq:
                raise Refused(f"-{name} takes no value")
            action()
            i += 1
            continue
        if eq:
            value, i = inline, i + 1
        elif i + 1 < len(words):
            value, i = words[i + 1], i + 2
        else:
            raise Refused(f"-{name} needs a value")
        action(value)
    return reader.finish()
