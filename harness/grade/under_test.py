"""The kernel under test as the graded tests see it: built images, and `boot()` for a
fresh machine per run.

The images are built once per grading session (harness/course/submission_build.py); every test
gets its own `KernelUnderTest` with a fresh random token, so a kernel that only prints
a success message scores nothing.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from ..abi.syscall_table import Syscall, load_syscall_table, syscall_by_number
from ..boot.initrd import pack_initrd
from ..devices.disk import Drive
from ..errors import BadInput
from ..fs.mkfs import make_image
from ..machine import load_elf
from ..machine.loader import ElfImage
from ..machine.schedule import DEFAULT_SMP_SEED, check_smp
from ..pace import DEFAULT_ICOUNT_SHIFT
from ..trace.syscalls import CallSpec, call_specs
from .errors import GradeFailure
from .graded_boot import DEFAULT_MAX_INSNS, BootSpec, KernelRun
from .seeds import check_smp_seed
from .tokens import new_token

__all__ = ["GRADER_RAM_MIB", "GRADER_TIMER_HZ", "KernelImages", "KernelUnderTest", "new_token"]

GRADER_TIMER_HZ = 1000  # 1 ms time slices: scheduling tests need 10x fewer instructions
GRADER_RAM_MIB = 32     # boot time grows with RAM (the allocator visits every page)


@dataclass(frozen=True)
class KernelImages:
    """A built submission: firmware, kernel, user programs (by name) and the syscall
    table the kernel was built from; `source`, the submission directory whose kernel/
    was built (None: not known), for the `privlab run --src` a failure suggests."""

    firmware_path: Path
    kernel_path: Path
    users: Mapping[str, Path]
    syscall_table: Path
    source: Path | None = None

    def to_json(self) -> dict[str, Any]:
        return {"firmware": str(self.firmware_path), "kernel": str(self.kernel_path),
                "users": {name: str(p) for name, p in self.users.items()},
                "syscall_table": str(self.syscall_table),
                "source": None if self.source is None else str(self.source)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> KernelImages:
        source = data.get("source")
        return cls(Path(data["firmware"]), Path(data["kernel"]),
                   {name: Path(p) for name, p in data["users"].items()},
                   Path(data["syscall_table"]), None if source is None else Path(source))

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=1))

    @classmethod
    def load(cls, path: Path) -> KernelImages:
        return cls.from_json(json.loads(path.read_text()))

    @cached_property
    def firmware(self) -> ElfImage:
        return load_elf(self.firmware_path)

    @cached_property
    def kernel(self) -> ElfImage:
        return load_elf(self.kernel_path)

    @cached_property
    def initrd(self) -> bytes:
        return pack_initrd({name: path.read_bytes() for name, path in self.users.items()})

    @cached_property
    def disk(self) -> bytes:
        """The disk a graded boot gets (as `privlab run`'s default): every user program
        as /NAME."""
        return make_image({name: path.read_bytes() for name, path in self.users.items()})

    @cached_property
    def syscalls(self) -> dict[int, Syscall]:
        return syscall_by_number(load_syscall_table(self.syscall_table))

    @cached_property
    def call_specs(self) -> dict[int, CallSpec]:
        """The syscall table as the trap flow decodes calls with it."""
        return call_specs(list(self.syscalls.values()))


@dataclass
class KernelUnderTest:
    """What a graded test receives as its `kernel` fixture."""

    images: KernelImages
    token: str = field(default_factory=new_token)
    runs: list[KernelRun] = field(default_factory=list)
    icount_shift: int = DEFAULT_ICOUNT_SHIFT  # lab.toml icount_shift, for every boot
    smp: int = 1              # the harts of every boot (lab.toml smp, a test's smp mark)
    smp_seed: int = DEFAULT_SMP_SEED  # their interleaving (the seed a test runs under)

    def boot(self, program: str, *args: str | int, flags: tuple[str, ...] = (),
             timer_hz: int | None = GRADER_TIMER_HZ, ram_mib: int = GRADER_RAM_MIB,
             input: bytes = b"", quiet: bool = True, icount_shift: int | None = None,
             smp: int | None = None, smp_seed: int | None = None) -> KernelRun:
        """A fresh machine running `program ARGS...` as the first process (as
        `privlab run --user`); nothing has run yet. `program` is a user program of the
        grader's userland, or a path to a user ELF (a hidden test's own program), which
        joins the initrd (and the disk) under its file name. Integers in args become
        decimal. The disk, a snapshot in memory, holds every program, as with
        `privlab run`.
        `token` (the attribute) is usually one of the arguments. `icount_shift`
        (default: the lab's) makes each instruction 2^N ns of guest time. `smp`
        harts (default: the `smp` attribute) take turns as `smp_seed` (default: the
        `smp_seed` attribute, which a test marked `smp` gets for each of its seeds)
        decides, as `privlab run --smp N --smp-seed S`."""
        words = (("quiet",) if quiet else ()) + tuple(flags)
        if timer_hz is not None:
            words += (f"timer_hz={timer_hz}",)
        initrd, disk = self.images.initrd, self.images.disk
        users = dict(self.images.users)
        if program not in self.images.users:
            path = Path(program)
            if not path.is_file():
                raise GradeFailure(f"grader error: no user program {program!r}")
            program = path.name.removesuffix(".elf")
            users[program] = path
            files = {name: p.read_bytes() for name, p in self.images.users.items()}
            files[program] = path.read_bytes()
            initrd = pack_initrd(files)
            try:
                disk = make_image(files)
            except BadInput as e:       # a name longer than a directory entry holds
                raise GradeFailure(f"grader error: {e}") from None
        shift = self.icount_shift if icount_shift is None else icount_shift
        harts = self.smp if smp is None else smp
        seed = self.smp_seed if smp_seed is None else smp_seed
        try:
            check_smp(harts)
            check_smp_seed(seed)
        except BadInput as e:
            raise GradeFailure(f"grader error: {e}") from None
        spec = BootSpec(program, tuple(str(a) for a in args), words, ram_mib, input, shift,
                        harts, seed)
        run = KernelRun(self.images.firmware, self.images.kernel, initrd, spec,
                        self.images.call_specs, self.token,
                        drive=Drive.in_memory(disk, "fs.img"), source=self.images.source,
                        users=users)
        self.runs.append(run)
        return run

    def run(self, program: str, *args: str | int, max_insns: int = DEFAULT_MAX_INSNS,
            **options: Any) -> KernelRun:
        """`boot(...)` and run to power-off (a hang is a GradeFailure)."""
        run = self.boot(program, *args, **options)
        run.run_to_exit(max_insns)
        return run

    def close(self) -> None:
        for run in self.runs:
            run.close()
        self.runs.clear()
