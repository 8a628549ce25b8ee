"""Helpers for the GDB stub tests: boot the bundled system for a user program, serve
it with a GdbServer in a thread on a free port, find addresses in the ELF files."""

from __future__ import annotations

import io
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from elftools.elf.elffile import ELFFile

from privlab.boot import make_bootargs, pack_initrd
from privlab.build.images import Images
from privlab.devices.disk import Drive
from privlab.gdb import Address, GdbServer
from privlab.machine import ElfImage, Machine, RunResult, load_elf
from privlab.machine.assemble import boot_bare, boot_system

GDB = shutil.which("gdb-multiarch")
GDB_TIMEOUT = 30.0
JOIN_TIMEOUT = 30.0
SRET = 0x10200073
ECALL = 0x00000073


def boot(images: Images, prog: str = "hello", args: Sequence[str] = (),
         flags: Sequence[str] = ("quiet",), disk: bool = False, smp: int = 1) -> Machine:
    """The bundled firmware and kernel running `prog` as the first process (with
    `disk`, the bundled file system attached as virtio-blk, as `privlab run` has it;
    with `smp`, that many harts, the others waiting in the firmware)."""
    files = {name: path.read_bytes() for name, path in sorted(images.users.items())}
    m = Machine(64, drive=Drive.in_memory(images.disk.read_bytes(), images.disk.name)
                if disk else None, smp=smp)
    boot_system(m, load_elf(images.firmware), load_elf(images.kernel), pack_initrd(files),
                make_bootargs(prog, list(args), flags=list(flags)))
    return m


@dataclass
class Served:
    """A machine behind a GdbServer running in a thread."""

    machine: Machine
    server: GdbServer
    thread: threading.Thread
    result: list[RunResult] = field(default_factory=list)
    error: list[BaseException] = field(default_factory=list)
    log: io.StringIO = field(default_factory=io.StringIO)   # what privlab printed

    @property
    def port(self) -> int:
        return self.server.address.port

    def finish(self, timeout: float = JOIN_TIMEOUT) -> RunResult:
        """Wait for serve() to return (the guest ended, or gdb killed it)."""
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the server did not finish"
        assert not self.error, self.error
        return self.result[0]


def serve(machine: Machine, *, wait: bool = True, max_insns: int | None = None) -> Served:
    log = io.StringIO()
    server = GdbServer(machine, Address("127.0.0.1", 0), wait=wait, max_insns=max_insns,
                       log=log)
    served = Served(machine, server, threading.Thread(daemon=True, target=lambda: None),
                    log=log)

    def target() -> None:
        try:
            served.result.append(server.serve())
        except BaseException as e:  # surfaced by finish()
            served.error.append(e)

    served.thread = threading.Thread(target=target, name="gdb-server", daemon=True)
    served.thread.start()
    return served


@contextmanager
def serving_bare() -> Iterator[Callable[[ElfImage, int], Served]]:
    """Within the block, `make(image, harts)` boots a bare-metal image on a machine of
    that many harts and serves it; every server is stopped and its machine closed at
    the end."""
    started: list[Served] = []

    def make(image: ElfImage, harts: int = 1) -> Served:
        m = Machine(image.xlen, smp=harts)
        boot_bare(m, image)
        s = serve(m)
        started.append(s)
        return s

    try:
        yield make
    finally:
        for s in started:
            s.server.quit()
            s.thread.join(JOIN_TIMEOUT)
            s.machine.close()


def symbol(elf: Path, name: str) -> int:
    addr = load_elf(elf).symbol(name)
    assert addr is not None, f"{elf.name} has no symbol {name}"
    return addr


def symbol_range(elf: Path, name: str) -> tuple[int, int]:
    """(address, size) of a function or object in the ELF's symbol table."""
    with elf.open("rb") as f:
        table = ELFFile(f).get_section_by_name(".symtab")
        assert table is not None, f"{elf.name} has no symbol table"
        for sym in table.iter_symbols():
            if sym.name == name:
                return int(sym["st_value"]), int(sym["st_size"])
    raise AssertionError(f"{elf.name} has no symbol {name}")


def find_insn(elf: Path, start: str, word: int, limit: int = 0x400) -> int:
    """The address of the first 32-bit instruction `word` at or after symbol `start`
    (walking instruction lengths, so compressed code is handled)."""
    image = load_elf(elf)
    at = symbol(elf, start)
    seg = next(s for s in image.segments if s.vaddr <= at < s.vaddr + len(s.data))
    off = at - seg.vaddr
    end = min(len(seg.data), off + limit)
    while off + 2 <= end:
        half = int.from_bytes(seg.data[off:off + 2], "little")
        if half & 3 != 3:
            off += 2
            continue
        if int.from_bytes(seg.data[off:off + 4], "little") == word:
            return seg.vaddr + off
        off += 4
    raise AssertionError(f"no instruction {word:#010x} after {start}")


def gdb_argv(images: Images, port: int, commands: Sequence[str],
             user: str | None = "hello") -> list[str]:
    assert GDB is not None
    argv = [GDB, "-batch", "-nx", "-ex", "set architecture riscv:rv64",
            "-ex", "set confirm off", "-ex", f"file {images.kernel}"]
    if user is not None:
        argv += ["-ex", f"add-symbol-file {images.users[user]}"]
    argv += ["-ex", f"target remote 127.0.0.1:{port}"]
    for c in commands:
        argv += ["-ex", c]
    return argv
