"""What to boot: the one grammar and the one set of machine options of every command
that boots a machine (run, trace, inspect, pagetable, translate).

    privlab COMMAND [OPTIONS] [--user PROG [ARG ...]]
    privlab COMMAND [OPTIONS] -- PROG [ARG ...]

Everything after `--user PROG` is PROG's arguments, whatever they look like (`-v`,
`--at`); `--` ends privlab's options the same way, the word after it being PROG.
harness/cli/main.py splits the command line there before argparse sees it
(`split_program`), so no command can read one of PROG's arguments as its own.

The machine options (`add_machine_arguments`) and the boot (`boot_machine`) are the
same for all: the bundled firmware and kernel built from the project around the
working directory (harness/project.py; `--src DIR` names another), with `--user PROG
ARGS` as the first process and `--add PATH` programs beside the bundled ones; another
S-mode kernel (`--kernel`) or firmware (`--bios FILE`); or a bare-metal ELF (`--bios
none --kernel X.elf`). The bundled firmware boots with the build's disk image unless
`--drive` gives another or `--no-drive` none (harness/boot/bootdisk.py).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cached_property, partial

from ..abi.csr import Exc
from ..budget import INSPECT_MAX_INSNS
from ..errors import BadInput, ExitStatus, PrivlabError
from ..pace import DEFAULT_ICOUNT_SHIFT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..api import Session
    from ..devices import Console
    from ..devices.disk import Drive
    from ..devices.uart import InputSource
    from ..kernelinfo.symbols import Location
    from ..kernelinfo.system import SystemInfo
    from ..machine import Machine, RunResult
    from ..machine.loader import ElfImage
    from ..project import Sources

# Every command's parser is built on each run (harness/cli/main.py): what follows imports
# the machine, the API and the inspectors only inside the functions that use them.

__all__ = ["Booted", "RunStopped", "add_abi_argument", "add_at_argument",
           "add_machine_arguments", "boot_machine", "budget_of", "input_bytes",
           "older_qemu_options", "open_session", "positive_int", "raise_for_stop",
           "scripted_input", "session_at", "set_program", "split_program", "stray_options",
           "symbolize_now"]

MIB = 1 << 20
USER = "--user"


# -- the grammar ----------------------------------------------------------------------
def _is_user(word: str, options: Collection[str]) -> bool:
    """`--user`, `--user=PROG`, or a prefix of it argparse would take for it."""
    name = word.split("=", 1)[0]
    if name == USER:
        return True
    return (len(name) >= 3 and USER.startswith(name)
            and not any(o != USER and o.startswith(name) for o in options))


def split_program(words: Sequence[str],
                  options: Collection[str] = ()) -> tuple[list[str], list[str] | None]:
    """Split a command's words into privlab's and the program's: at the first `--user`
    (the program is what follows it, `--user=PROG` included) or `--` (the same). The
    program's words are None when neither is given. `options` are the command's
    option strings (for `--us`, an abbreviation argparse would accept)."""
    for i, word in enumerate(words):
        if word == "--":
            return list(words[:i]), list(words[i + 1:])
        if word.startswith("--") and _is_user(word, options):
            _, eq, value = word.partition("=")
            return list(words[:i]), ([value] if eq else []) + list(words[i + 1:])
    return list(words), None


def set_program(args: argparse.Namespace, program: list[str] | None,
                options: Collection[str] = ()) -> None:
    """Put `split_program`'s words into args.user (PROG or None) and args.args. A
    word of PROG's that is one of `options` (the command's own) stays PROG's, with one
    line on stderr (`stray_options`)."""
    if program is not None and not program:
        raise BadInput("--user (or --) needs PROG: --user PROG [ARG ...]")
    args.user = program[0] if program else None
    args.args = program[1:] if program else []
    stray = stray_options(args.args, options)
    if stray:
        print(f"privlab: note: {', '.join(stray)} came after the program and went to "
              f"{args.user} as {'its arguments' if len(stray) > 1 else 'an argument'}; "
              f"privlab's options go before --user {args.user}", file=sys.stderr)


def stray_options(words: Sequence[str], options: Collection[str]) -> list[str]:
    """The words among a program's arguments that are privlab options of the command
    (`--trace-out`, `--smp=3`), in order, each once: long options only, since a
    program's own `-v` or `-q` are common and privlab's short ones are few."""
    found: list[str] = []
    for word in words:
        name = word.split("=", 1)[0]
        if name.startswith("--") and name in options and name not in found:
            found.append(name)
    return found


# -- the options ------------------------------------------------------------------------
def positive_int(text: str) -> int:
    try:
        value = int(text.replace("_", ""), 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def smp_harts(text: str) -> int:
    from ..machine.schedule import MAX_HARTS

    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 1 <= value <= MAX_HARTS:
        raise argparse.ArgumentTypeError(f"must be 1 to {MAX_HARTS} harts: {text!r}")
    return value


def smp_seed(text: str) -> int:
    try:
        value = int(text.replace("_", ""), 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value < 1 << 64:
        raise argparse.ArgumentTypeError(f"must be 0 to 2^64-1: {text!r}")
    return value


def icount_shift(text: str) -> int:
    from ..pace import MAX_ICOUNT_SHIFT

    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 0 <= value <= MAX_ICOUNT_SHIFT:
        raise argparse.ArgumentTypeError(f"must be 0 to {MAX_ICOUNT_SHIFT}: {text!r}")
    return value


def add_machine_arguments(p: argparse.ArgumentParser, *, default_user: str | None = None,
                          interactive: bool = False, positionals: str = "") -> None:
    """The options of every command that boots a machine, and a usage line that shows
    the grammar (`positionals` are the command's own, such as translate's VA: they
    come before `--user`). `default_user` runs when --user is not given; an
    `interactive` command (run) reads the terminal and has no default instruction
    budget."""
    own = f" {positionals}" if positionals else ""
    p.usage = (f"%(prog)s{own} [OPTIONS] [--user PROG [ARG ...]]\n"
               f"       %(prog)s{own} [OPTIONS] -- PROG [ARG ...]")
    g = p.add_argument_group("what to boot (the same for run, trace, inspect, pagetable "
                             "and translate)")
    g.add_argument(USER, nargs="+", metavar=("PROG", "ARG"),
                   help="run PROG (a bundled program or a user ELF) as the first process; "
                        "everything after PROG is its arguments (`-- PROG ARG...` too)"
                        + (f"; default: {default_user}" if default_user else ""))
    g.add_argument("--src", metavar="DIR",
                   help="build and boot DIR's kernel/ and userland/ (default: the "
                        "project around the working directory, a directory with a "
                        "kernel/ like privlab's; else privlab's bundled ones)")
    g.add_argument("--kernel", metavar="ELF", help="S-mode kernel (default: the built one)")
    g.add_argument("--bios", metavar="none|FILE",
                   help="'none': run --kernel bare-metal from M-mode; FILE: M-mode firmware "
                        "ELF (default: the built firmware)")
    g.add_argument("--arch", choices=("rv64", "rv32"), default=None,
                   help="architecture of the build (default: --kernel's, else rv64)")
    g.add_argument("--ram", type=positive_int, metavar="MiB", default=128,
                   help="RAM size (default 128)")
    g.add_argument("--boot-flag", action="append", default=[], metavar="WORD",
                   help="a kernel boot argument before init= (vmprint, backtrace, "
                        "timer_hz=N, ...); repeat for more")
    g.add_argument("--add", action="append", default=[], metavar="PATH",
                   help="a user ELF, or a directory of them, to join the bundled programs "
                        "(in the initrd and the disk) under its file name; repeat for more")
    which = g.add_mutually_exclusive_group()
    which.add_argument("--input", metavar="TEXT",
                       help="console input (\\n for newline)" + (
                           " instead of the terminal" if interactive else
                           ", for programs that read"))
    which.add_argument("--input-file", metavar="FILE", help="console input from a file")
    g.add_argument("--max-insns", type=positive_int, metavar="N",
                   help="stop after N instructions (exit 124)" + (
                       "" if interactive else f"; default {INSPECT_MAX_INSNS:_}"))
    disk = g.add_mutually_exclusive_group()
    disk.add_argument("--drive", metavar="IMAGE[,snapshot=on]",
                      help="a raw disk image for virtio-blk in virtio-mmio slot 0 (QEMU: "
                           "-drive file=IMAGE,format=raw,if=none,id=x0 -device "
                           "virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0); writes reach "
                           "the file unless snapshot=on. Default with the built firmware: "
                           "the build's fs.img (with any --add programs), writes kept in "
                           "memory")
    disk.add_argument("--no-drive", action="store_true",
                      help="no disk, not even the build's fs.img")
    g.add_argument("--virtio-legacy", action="store_true",
                   help="version 1 (legacy) virtio-mmio transports, as QEMU's "
                        "-global virtio-mmio.force-legacy=true")
    g.add_argument("--pmp-before-qemu7", action="store_true",
                   help="QEMU before 7.0's PMP rule: with no PMP entry, S and U access all "
                        "memory and mret may return to them (QEMU 7.2, the default, makes "
                        "that mret illegal); for firmware of that time, such as the uCore "
                        "course's RustSBI 0.1.1")
    g.add_argument("--dtb-before-qemu7.2", dest="dtb_before_qemu72", action="store_true",
                   help="QEMU before 7.2's device tree: the UART's node is uart@10000000 "
                        "(7.2 renamed it serial@10000000); for firmware of that time that "
                        "finds the UART by its node's name, such as the RustSBI-QEMU of the "
                        "uCore course's 2023 handouts, which without it polls address 0x5")
    g.add_argument("--no-known-firmware", action="store_true",
                   help="run a course's firmware that privlab knows by its bytes (the uCore "
                        "course's RustSBI of 2022 and RustSBI-QEMU of 2023 and 2024) as "
                        "QEMU 7.2 does; by default privlab runs it as the earlier QEMU it "
                        "was written for, with the options above, and says so")
    g.add_argument("--icount-shift", type=icount_shift, metavar="N",
                   default=DEFAULT_ICOUNT_SHIFT,
                   help="guest time per instruction: 2^N ns, 0 to 10 (default "
                        f"{DEFAULT_ICOUNT_SHIFT}: {1 << DEFAULT_ICOUNT_SHIFT} ns), "
                        "as QEMU's -icount shift=N; a larger N makes timer-paced guests "
                        "(sleeps, time slices) reach their deadlines in fewer instructions")
    g.add_argument("--smp", type=smp_harts, metavar="N", default=1,
                   help="N harts (1 to 8, default 1) sharing RAM and devices, as QEMU's "
                        "-smp N on virt; they take turns of a few thousand instructions")
    g.add_argument("--smp-seed", type=smp_seed, metavar="S", default=0,
                   help="the seed of the harts' interleaving (default 0): the same seed "
                        "gives the same interleaving, and trace, every run")
    p.set_defaults(takes_program=True, default_user=default_user, interactive=interactive)


def add_abi_argument(p: argparse.ArgumentParser) -> None:
    from ..abi.syscall_table import ABIS  # the inspectors' alone: `run` reads no calls

    p.add_argument("--abi", choices=tuple(ABIS), default="rcore",
                   help="the kernel the calls are decoded for and its process table read "
                        "from: rcore (the booted kernel's, rCore numbering; default), xv6 "
                        "(proc[], cpus[]) or ucore (uCore-Tutorial's C kernels: pool[], "
                        "current_proc)")


def add_at_argument(p: argparse.ArgumentParser, default: str) -> None:
    from ..api.points import POINT_HELP  # the inspectors' alone, as --abi

    p.add_argument("--at", metavar="POINT", default=default,
                   help=f"where to stop: {POINT_HELP} (default: {default})")


def budget_of(args: Any) -> int | None:
    """--max-insns, else the default budget (none for the interactive `run`)."""
    if args.max_insns is not None:
        return int(args.max_insns)
    return None if args.interactive else INSPECT_MAX_INSNS


# -- the boot ---------------------------------------------------------------------------
def input_bytes(text: str) -> bytes:
    """--input TEXT as the guest reads it: backslash escapes (\\n) decoded."""
    return text.encode().decode("unicode_escape").encode("latin-1")


def scripted_input(args: Any) -> bytes | None:
    """--input or --input-file, as bytes; None when neither is given."""
    from pathlib import Path

    if args.input is not None:
        return input_bytes(args.input)
    if args.input_file is not None:
        path = Path(args.input_file)
        if not path.is_file():
            raise BadInput(f"{path}: no such file")
        return path.read_bytes()
    return None


def drive_of(args: Any) -> Drive | None:
    if args.drive is None:
        return None
    from ..devices.disk import parse_drive

    return parse_drive(args.drive)


def say_notes(notes: Sequence[str]) -> None:
    for note in notes:
        print(f"privlab: note: {note}", file=sys.stderr)


@dataclass
class Booted:
    """A machine at reset, what it runs (for the inspectors), and the sources built."""

    machine: Machine
    make_info: Callable[[], SystemInfo]
    sources: Sources | None          # None: a bare-metal ELF, nothing built

    @cached_property
    def info(self) -> SystemInfo:
        """What the machine runs, made when first asked for: `privlab run` never asks."""
        return self.make_info()


def _system_info(*args: Any, **kwargs: Any) -> SystemInfo:
    """SystemInfo(*args, **kwargs), its module imported only when an inspector asks
    (Booted.info)."""
    from ..kernelinfo.system import SystemInfo

    return SystemInfo(*args, **kwargs)


def _refuse_bare(args: Any) -> None:
    """--bios none runs one ELF: nothing is built, so nothing to add or boot it with."""
    if args.kernel is None:
        raise BadInput("--bios none needs --kernel ELF (the program to run from M-mode)")
    for flag, given in (("--user", args.user is not None), ("--add", bool(args.add)),
                        ("--boot-flag", bool(args.boot_flag)), ("--src", args.src is not None)):
        if given:
            raise BadInput(f"{flag} needs the bundled firmware and kernel, not --bios none")
    if getattr(args, "dtb_before_qemu72", False):
        raise BadInput("--dtb-before-qemu7.2 names a node of the device tree, which "
                       "--bios none does not pass")


def _firmware(path: str) -> ElfImage:
    """--bios FILE: an ELF, or a raw binary at the RAM base as QEMU loads one."""
    from pathlib import Path

    from ..abi.platform import PLATFORM
    from ..qemucmd.boot import image_at

    return image_at(Path(path), PLATFORM.ram_base, "--bios")


def older_qemu_options(args: Any) -> list[str]:
    """The options for firmware of an earlier QEMU that `args` does not already give."""
    from ..boot.knownfirmware import OLDER_QEMU

    return [flag for flag, dest in OLDER_QEMU if not getattr(args, dest, False)]


def _pmp_rule(args: Any, m: Machine) -> None:
    if getattr(args, "pmp_before_qemu7", False):
        from ..qemucmd.boot import open_pmp_when_empty

        open_pmp_when_empty(m)


def boot_machine(args: Any, console: Console, uart_input: InputSource) -> Booted:
    """Build (if need be) and boot what the arguments ask for. Says on stderr which
    sources it built when they are not the bundled ones, and the boot's notes (an
    --add that replaces a bundled program)."""
    from pathlib import Path

    from ..machine.assemble import new_bare
    from ..machine.loader import load_elf

    ram = args.ram * MIB
    if args.bios == "none":
        _refuse_bare(args)
        image = load_elf(args.kernel)
        m = new_bare(image, ram=ram, console=console, uart_input=uart_input,
                     drive=drive_of(args), virtio_legacy=args.virtio_legacy,
                     icount_shift=args.icount_shift, smp=args.smp, smp_seed=args.smp_seed)
        _pmp_rule(args, m)
        return Booted(m, partial(_system_info, image.xlen, bare=Path(args.kernel)), None)

    from ..boot import boot_drive, user_boot
    from ..build.images import build_images
    from ..machine.assemble import new_system
    from ..project import sources_for

    sources = sources_for(args.src)
    if args.bios:
        from ..boot.knownfirmware import run_as_written_for

        said_firmware = run_as_written_for(Path(args.bios), args)
        if said_firmware:
            say_notes([said_firmware])
    kernel = load_elf(args.kernel) if args.kernel else None
    firmware = _firmware(args.bios) if args.bios else None
    arch = args.arch or (f"rv{kernel.xlen}" if kernel else "rv64")
    said = sources.announcement()
    if said:
        print(said, file=sys.stderr, flush=True)
    images = build_images(arch, kernel_dir=sources.kernel, userland_dir=sources.userland,
                          out_dir=sources.out_dir(arch), listings=False)
    ub = user_boot(images.users, args.user or args.default_user, args.args,
                   flags=args.boot_flag, add=args.add, initrd=images.initrd)
    say_notes(ub.programs.notes)
    drive = boot_drive(images.disk, ub.programs, drive_of(args), attach=not args.no_drive)
    kern = kernel or load_elf(images.kernel)
    m = new_system(firmware or load_elf(images.firmware), kern, ub.initrd_image(), ub.bootargs,
                   ram=ram, console=console, uart_input=uart_input, drive=drive,
                   virtio_legacy=args.virtio_legacy, icount_shift=args.icount_shift,
                   smp=args.smp, smp_seed=args.smp_seed,
                   dtb_before_qemu72=getattr(args, "dtb_before_qemu72", False))
    _pmp_rule(args, m)
    return Booted(m, partial(_system_info, kern.xlen, Path(args.bios or images.firmware),
                             Path(args.kernel or images.kernel), dict(ub.programs.paths),
                             program=ub.program), sources)


def open_session(args: Any, capture: bool = False, capture_limit: int | None = None,
                 notes: bool = True) -> Session:
    """Boot as the arguments say, for the inspectors: console input scripted (none
    unless --input or --input-file), its end the end of the run. Without `notes` the
    boot says nothing on stderr (a replay of a run already announced)."""
    import contextlib
    import io

    from ..api import Session
    from ..devices import Console, ScriptedInput

    text = scripted_input(args) or b""
    quiet: contextlib.AbstractContextManager[Any] = (
        contextlib.nullcontext() if notes else contextlib.redirect_stderr(io.StringIO()))
    with quiet:
        booted = boot_machine(args, Console(), ScriptedInput(text, final=True))
    table = None
    if args.abi == "rcore" and booted.sources is not None and not booted.sources.bundled:
        table = booted.sources.kernel / "syscall.tbl"   # what the booted kernel was built with
    return Session(booted.machine, booted.info, capture=capture, capture_limit=capture_limit,
                   abi=args.abi, table=table if table is not None and table.is_file() else None)


def session_at(args: Any, capture: bool = False) -> tuple[Session, RunResult]:
    """Boot as the arguments say and run to --at, within the budget (`budget_of`).
    Ctrl-C stopping the guest, or the budget running out first, is RunStopped (exit
    130 or 124) with the diagnosis `privlab run` prints; a run that ends before the
    point is BadInput (naming the program's first fault when it made no call)."""
    from ..api.points import NotReached, run_to
    from .console import interrupt_stops

    s = open_session(args, capture=capture)
    budget = budget_of(args)
    try:
        with interrupt_stops(s.machine):
            return s, run_to(s, args.at, budget)
    except NotReached as e:
        raise_for_stop(e.result, budget, f"never reached {args.at}",
                       default=args.max_insns is None, machine=s.machine, info=s.info)
        hint = _trap_hint(s, args.at)
        if hint:
            raise BadInput(f"{e}; {hint}") from None
        raise


def _trap_hint(s: Session, at: str) -> str:
    """For a run that ended before the system call asked for: the program's first
    exception (what killed it, likely), as the point to ask for instead."""
    from ..abi.csr import Priv
    from ..machine.events import TrapEvent

    if not at.startswith("syscall:"):
        return ""
    traps = [e for e in s.events if isinstance(e, TrapEvent) and e.priv_from is Priv.U]
    if any(e.code == Exc.USER_ECALL and not e.interrupt for e in traps):  # it made calls
        return ""
    fault = next((e for e in traps if not e.interrupt), None)
    if fault is None:
        return ""
    return (f"the program made no system call; its first exception is event "
            f"#{fault.seq} ({fault.name}): try --at trap:{fault.seq}")


class RunStopped(PrivlabError):
    """The guest was stopped before the command had what it needed: the budget ran
    out (124) or Ctrl-C (130). The message is the whole diagnosis."""

    exit_status: int

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.exit_status = status


def raise_for_stop(result: RunResult, budget: int | None, what: str,
                   default: bool = False, machine: Machine | None = None,
                   info: SystemInfo | None = None) -> None:
    """RunStopped for a run the budget or Ctrl-C ended, with `privlab run`'s diagnosis:
    with the `machine` (and `info`, what it runs: a session's names user programs too),
    every code address named and every hart and the process table shown
    (harness/cli/diagnose.py)."""
    import io

    from ..machine import Stop
    from .console import report_run

    if result.stop not in (Stop.BUDGET, Stop.USER):
        return
    text = io.StringIO()
    status = report_run(result, budget, text, default, machine=machine, info=info)
    body = text.getvalue().strip("\n").removeprefix("privlab: ")
    raise RunStopped(f"{what}: {body}", status if result.stop is Stop.BUDGET
                     else ExitStatus.INTERRUPTED)


def symbolize_now(s: Session) -> Callable[[int], Location]:
    """Symbolize through the current satp (for the trampoline's alias)."""
    from ..abi.csr import Csr

    satp = s.machine.hart.csr(Csr.SATP)
    return lambda addr: s.info.symbolize(addr, satp, s.machine.memory)
