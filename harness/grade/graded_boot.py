"""One graded boot: a fresh machine running the kernel under test, and expectations
on what it prints, how it ends and what it traps.

Every limit is in instructions, never seconds, so a slow host grades exactly like a
fast one. Whatever goes wrong (the budget runs out, the kernel panics, a trap storm,
megabytes of output), the failure carries a diagnosis: how the run ended, the last
console lines and the last traps.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..abi.csr import Csr, Priv
from ..boot import make_bootargs
from ..budget import DEFAULT_MAX_INSNS
from ..devices import Console, ScriptedInput
from ..errors import BadInput
from ..machine import RunResult, Stop
from ..machine.assemble import new_system
from ..machine.loader import load_elf
from ..machine.schedule import DEFAULT_SMP_SEED
from ..machine.until import AfterSyscall, AfterTrap, AfterXret, PrivilegeChange, Until
from ..pace import DEFAULT_ICOUNT_SHIFT
from ..paths import REPO_ROOT
from ..trace import Event, TrapEvent
from ..trace.flow import Flow
from ..trace.syscalls import CallSpec, to_signed
from .errors import GradeFailure
from .naming import Namer, backtrace_after, system_info
from .resumes import CallRules, check_resumes
from .trace_view import RecentTraps, SyscallRecord, TraceView
from .user_registers import RegisterWatch

if TYPE_CHECKING:
    from ..devices.disk import Drive
    from ..machine.loader import ElfImage

__all__ = ["DEFAULT_MAX_INSNS", "OUTPUT_LIMIT", "AfterSyscall", "AfterTrap", "AfterXret",
           "KernelRun", "LimitedConsole", "PrivilegeChange", "diagnose"]

OUTPUT_LIMIT = 256 << 10         # bytes of console output before a run is stopped
SLICE = 2_000_000                # instructions between console checks while waiting
RUN_SLICE = 10_000_000           # instructions between checks of the event count
EVENT_LIMIT = 250_000            # traps and xRETs kept per run (RECORD.size bytes each)
TAIL_LINES = 15


STUB_BYTES = 12                  # a system-call stub: li a7, N; ecall; ret (usys.S)


@cache
def _symbol(path: Path, name: str) -> int | None:
    """A user ELF's symbol, or None (also for a file that is not a valid ELF)."""
    try:
        return load_elf(path).symbol(name)
    except BadInput:
        return None


@cache
def _entry(path: Path) -> int:
    """A user ELF's entry point (each file read once per process)."""
    return load_elf(path).entry


class LimitedConsole(Console):
    """A console that stops the machine once the guest has printed `limit` bytes."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        super().__init__(echo=False, limit=limit)
        self.on_full: Callable[[], None] | None = None

    def put(self, byte: int) -> None:
        super().put(byte)
        if self.truncated and self.on_full is not None:
            self.on_full()


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(line: str) -> str:
    """`line` with control characters (escape sequences, NULs, bells) written as
    `\\xNN`: the guest's output goes into reports, XML and terminals."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", line)


def _tail(text: str, n: int = TAIL_LINES) -> list[str]:
    lines = text.splitlines()
    return [printable(line) for line in lines[-n:]]


def _describe_trap(t: TrapEvent, namer: Namer | None) -> str:
    epc = namer.where(t.epc, t.satp) if namer is not None else f"{t.epc:#x}"
    return f"#{t.seq} {t.name} {t.priv_from.letter}->{t.priv_to.letter} epc={epc} tval={t.tval:#x}"


# A test program's own verdict of failure: "FAIL" as a word, to the end of its line.
PROGRAM_FAIL = re.compile(r"\bFAIL\b[^\n]*")

def _headline(result: RunResult | None, console: LimitedConsole, budget: int | None,
              panic: str | None, flood: bool, ran: int | None = None,
              where: str | None = None) -> str:
    """How the run ended, in one line: the first of these that holds. The console
    limit and the event limit are the grader's own stops; a panic is the kernel's
    own account and comes before whatever it did next. A run stopped for its events
    (`flood`) ended inside an instruction slice (Stop.BUDGET, at far fewer
    instructions than its budget): "hang: still running after N instructions" would
    say the budget ran out, and it did not; the guest was trapping without end, so
    the event limit wins over the budget. `ran`: the instructions of every hart, which
    the budget counts (default: the run's hart's own). `where`: the pc it hung at,
    named, for a hang's line (the scoreboard's "why" says where)."""
    if result is None:
        return "the kernel was not run"
    if console.truncated:
        return (f"stopped: the guest printed more than {console.limit // 1024} KiB "
                "(runaway output)")
    if panic is not None:
        return f"kernel panic: {panic.removeprefix('panic:').strip()}"
    if flood:
        return (f"stopped: more than {EVENT_LIMIT:,} traps and xRETs (a trap loop that "
                "makes progress)")
    if result.stop is Stop.BUDGET:
        ran = result.instret if ran is None else ran
        at = f" at {where}" if where else ""
        return (f"hang: still running after {ran:,} instructions (limit {budget:,}){at}"
                if budget else f"hang: instruction budget exhausted{at}")
    if result.stop is Stop.ERROR:
        return f"the machine stopped: {result.message}"
    if result.stop is Stop.HALT:
        return f"powered off with exit status {result.exit_status}"
    return f"stopped ({result.stop.value}) at pc {result.pc:#x}"


def _named_addresses(lines: list[str], panic_at: int | None, namer: Namer) -> list[str]:
    """The `sepc=` values of the panic line and of the last console lines (a kernel
    trap's panic, a killed process), and the panic's backtrace, named."""
    shown = lines[-TAIL_LINES:]
    if panic_at is not None and panic_at < len(lines) - TAIL_LINES:
        shown = [lines[panic_at], *shown]
    parts = namer.sepc_lines(shown)
    addresses = backtrace_after(lines, panic_at) if panic_at is not None else None
    if addresses:
        bt = namer.backtrace(addresses)
        parts.append("backtrace, each return address named by its call:")
        parts += [f"  {frame}" for frame in bt.frames]
        if bt.left_out:
            parts.append("  left out, not return addresses (no call instruction before "
                         f"them): {', '.join(hex(a) for a in bt.left_out)}")
    return parts


def diagnose(result: RunResult | None, console: LimitedConsole, budget: int | None, *,
             flood: bool = False, traps: RecentTraps | None = None,
             namer: Namer | None = None, satp: int | None = None,
             harts: tuple[int, int, int] | None = None) -> str:
    """How the run ended, in words a student can act on, plus the evidence: where the
    hart was, the addresses the kernel's last words print (named by `namer`, from the
    graded images), the last console lines and the last traps (`traps`, else the
    machine's own short list). `satp` is the hart's, for naming its pc. `harts`, on a
    machine of several: (the hart the result is of, the number of harts, the
    instructions all of them ran)."""
    text = console.text()
    lines = text.splitlines()
    panic_at = next((i for i, line in enumerate(lines) if line.startswith("panic:")), None)
    panic = printable(lines[panic_at]) if panic_at is not None else None
    pc = None
    if result is not None:
        pc = namer.where(result.pc, satp) if namer is not None else f"{result.pc:#x}"
    parts = [_headline(result, console, budget, panic, flood,
                       None if harts is None else harts[2], pc)]
    if result is not None:
        who = "" if harts is None else f"hart {harts[0]} of {harts[1]}: "
        its = "" if harts is None else "its "
        parts.append(f"{who}pc {pc} in {result.priv.letter}-mode after "
                     f"{its}{result.instret:,} instructions")
    if namer is not None:
        parts += [printable(line) for line in _named_addresses(lines, panic_at, namer)]
    tail = _tail(text)
    parts.append("last console lines:" if tail else "the console is empty")
    parts += [f"  | {line}" for line in tail]
    if traps is None and result is not None:
        traps = RecentTraps(result.last_traps)
    if traps is not None and (traps.last or traps.cause):
        parts.append("last traps:")
        if traps.cause is not None:
            parts.append(f"  {_describe_trap(traps.cause, namer)} (the last trap into S-mode)")
            if traps.between:
                parts.append(f"  ... {traps.between:,} trap{'s' * (traps.between != 1)} "
                             "left out")
        parts += [f"  {_describe_trap(t, namer)}" for t in traps.last]
    return "\n".join(parts)


def _shown_dir(path: Path) -> str:
    """`path` as a student types it from the working directory: `.` for it, relative
    below it, else absolute."""
    path = path.resolve()
    try:
        here = Path.cwd().resolve()
    except OSError:
        return str(path)
    if path == here:
        return "."
    return str(path.relative_to(here)) if path.is_relative_to(here) else str(path)


@dataclass(frozen=True)
class BootSpec:
    """What to boot: the program that runs as the first process, its arguments,
    extra kernel flags, the RAM size, console input, the clock, and the harts with
    the seed of their interleaving (harness/machine/schedule.py)."""

    program: str
    args: tuple[str, ...] = ()
    flags: tuple[str, ...] = ("quiet",)
    ram_mib: int = 32
    input: bytes = b""
    icount_shift: int = DEFAULT_ICOUNT_SHIFT
    smp: int = 1
    smp_seed: int = DEFAULT_SMP_SEED


class KernelRun:
    """A machine booted with the kernel under test. Use `run_to_exit`, `expect_*`."""

    def __init__(self, firmware: ElfImage, kernel: ElfImage, initrd: bytes, spec: BootSpec,
                 specs: Mapping[int, CallSpec], token: str, drive: Drive | None = None,
                 source: Path | None = None, users: Mapping[str, Path] | None = None) -> None:
        """`source` is the directory whose kernel/ was built (the submission), named
        in the rerun command (`--src`) so that it boots this kernel, not privlab's;
        `users`, the user programs' ELF files by name, to name user addresses in a
        diagnosis."""
        self.spec = spec
        self.source = source
        self.token = token
        self.console = LimitedConsole()
        self.bootargs = make_bootargs(spec.program, spec.args, flags=spec.flags)
        self.machine = new_system(firmware, kernel, initrd, self.bootargs,
                                  ram=spec.ram_mib << 20, console=self.console,
                                  uart_input=ScriptedInput(spec.input),
                                  icount_shift=spec.icount_shift, drive=drive,
                                  smp=spec.smp, smp_seed=spec.smp_seed)
        self.console.on_full = self.machine.request_stop
        self.kernel_image = kernel
        self.firmware_image = firmware
        self.users = dict(users or {})
        # The run's one trap flow: it pairs the system calls of every event, fed as the
        # trace is read (harness/grade/trace_view.py).
        self.flow = Flow(self.machine.events, dict(specs), kernel.xlen,
                         initial=self.machine.hart.priv, start=0)
        self.rules = CallRules.from_specs(specs)
        # Every trap from U and return to U, checked as they happen (user_registers.py).
        self.registers_watch = RegisterWatch(self.machine.harts, self.rules,
                                             self._entries())
        self.result: RunResult | None = None
        self.budget: int | None = None
        self.event_flood = False

    # -- running -----------------------------------------------------------------
    def run(self, max_insns: int, until: Sequence[Until] = ()) -> RunResult:
        """Run at most `max_insns` more instructions (or to an `until` condition).
        A finished run (powered off, stuck, flooding the console) stays finished."""
        if self.finished and self.result is not None:
            return self.result
        self.budget = (self.budget or 0) + max_insns
        left = max_insns
        while True:
            step = min(left, RUN_SLICE)
            watch = self.registers_watch.conditions
            before = self.machine.hart.state.instret
            self.result = self.machine.run(max_insns=step, until=[*watch, *until])
            if self.result.stop is Stop.EVENT and self.result.condition in watch:
                left -= max(0, min(step, self.result.instret - before))
                continue                  # the watch stepped aside: run on without it
            left -= step
            if self.result.stop is not Stop.BUDGET or left <= 0:
                return self.result
            if len(self.machine.events) > EVENT_LIMIT:
                self.event_flood = True
                return self.result

    def run_until(self, *conditions: AfterTrap | AfterXret | AfterSyscall | PrivilegeChange,
                  within: int = DEFAULT_MAX_INSNS) -> Event | None:
        """Run until the next event that one of `conditions` matches (`AfterTrap(code=,
        interrupt=)`, `AfterXret("sret")`, `AfterSyscall(number)`, `PrivilegeChange(to=)`),
        at most `within` more instructions. Returns that event, the hart sitting right
        after it: after a trap at the vector, before the handler's first instruction
        (so `registers()` are still the trapped code's); after an xRET at the pc it
        returned to. None if the run ended or the instructions ran out first."""
        if self.finished:
            return None
        before = self.machine.hart.state.instret
        budget = self.budget or 0
        result = self.run(within, until=list(conditions))
        if result.stop is not Stop.EVENT:
            return None
        self.budget = budget + (result.instret - before)  # only what it used
        return result.event

    def registers(self) -> tuple[int, ...]:
        """x0..x31 of the hart as they are now, unsigned (x0 is 0); `machine.hart.pc`
        is the pc."""
        hart = self.machine.hart
        return tuple(hart.x(n) for n in range(32))

    @property
    def finished(self) -> bool:
        """The guest powered off, got stuck, or flooded the console: nothing more to run."""
        r = self.result
        return r is not None and (r.stop in (Stop.HALT, Stop.ERROR) or self.console.truncated
                                  or self.event_flood)

    def run_to_exit(self, max_insns: int = DEFAULT_MAX_INSNS) -> RunResult:
        """Run until the guest powers off; a hang, a trap storm or runaway output is
        a GradeFailure with the diagnosis."""
        result = self.run(max_insns) if not self.finished else self.result
        assert result is not None
        if result.stop is not Stop.HALT or self.console.truncated or self.event_flood:
            self.fail("the kernel did not finish the program", ending=True)
        return result

    def diagnosis(self) -> str:
        satp = self.machine.hart.csr(Csr.SATP) if self.result is not None else None
        machine = self.machine
        harts = (machine.hart.state.hart_id, machine.smp,
                 sum(h.state.instret for h in machine.harts)) if machine.smp > 1 else None
        text = diagnose(self.result, self.console, self.budget, flood=self.event_flood,
                        traps=self.trace.recent_traps(), namer=self.namer(), satp=satp,
                        harts=harts)
        on = (f" on {self.spec.smp} harts under scheduling seed {self.spec.smp_seed}"
              if self.spec.smp > 1 else "")
        text += (f"\nbooted with {self.spec.ram_mib} MiB of RAM{on} and bootargs "
                 f"'{self.bootargs}'; to run it yourself:\n  {self.rerun_command()}")
        return text

    def namer(self) -> Namer:
        """Names this run's addresses from the graded firmware, kernel and user
        programs. User addresses are named from the first program's symbols until a
        process runs another program (exec, spawn): after that, which one an address
        belongs to is not known here, and they stay bare."""
        other = any(c.name in ("exec", "spawn") for c in self.trace.syscalls())
        info = system_info(self.machine.xlen, self.firmware_image.path,
                           self.kernel_image.path, self.users)
        return Namer(info, self.machine.memory, None if other else self.spec.program)

    def rerun_command(self) -> str:
        """The `privlab run` command line that boots this machine the same way: the
        same kernel (`--src` the submission, unless it is privlab's own checkout),
        RAM, clock, harts and their scheduling seed (`--smp N --smp-seed S`, which
        give the same interleaving), boot flags, console input, program and
        arguments."""
        words = ["privlab", "run"]
        if self.source is not None and self.source.resolve() != REPO_ROOT.resolve():
            words += ["--src", _shown_dir(self.source)]
        words += ["--ram", str(self.spec.ram_mib)]
        # The clock always: the same command boots the same run even where the
        # default pace is another.
        words += ["--icount-shift", str(self.spec.icount_shift)]
        if self.spec.smp > 1:
            words += ["--smp", str(self.spec.smp), "--smp-seed", str(self.spec.smp_seed)]
        if self.machine.xlen == 32:
            words += ["--arch", "rv32"]
        for flag in self.spec.flags:
            if flag != "quiet":              # privlab run --user adds it itself
                words += ["--boot-flag", flag]
        if self.spec.input:
            text = self.spec.input.decode("latin-1").encode("unicode_escape").decode()
            words += ["--input", text]
        words += ["--user", self.spec.program, *self.spec.args]
        return shlex.join(words)

    def fail(self, message: str, *, ending: bool = False) -> None:
        """A GradeFailure with the diagnosis. Its headline (the scoreboard's "why") is
        the first thing that went wrong: a FAIL line the test program printed comes
        before what the grader expected later (a call it never made, a budget a
        powered-off run never used). `ending`: add how the run ended (a hang, a
        panic...) to `message`."""
        diagnosis = self.diagnosis()
        if ending:
            message = f"{message}: {diagnosis.split(chr(10), 1)[0]}"
        own = self.program_failure()
        if own is not None and own not in message:
            message = f"{own}\n(the test program's own check failed first; then {message})"
        raise GradeFailure(message, diagnosis)

    def program_failure(self) -> str | None:
        """The first FAIL line on the console, printable, also when it follows output
        that did not end its line (None if there is none)."""
        found = PROGRAM_FAIL.search(self.output)
        return None if found is None else printable(found[0])

    def disk_contents(self) -> bytes:
        """The run's disk as it is now, writes included (they stay in memory): for a
        grader to read with privlab.fs (DiskImage, check)."""
        if self.machine.disk is None:
            self.fail("the run has no disk")
        assert self.machine.disk is not None
        return self.machine.disk.contents()

    # -- what it printed -----------------------------------------------------------
    @property
    def output(self) -> str:
        return self.console.text()

    def lines(self) -> list[str]:
        return self.output.splitlines()

    def expect_output(self, pattern: str | re.Pattern[str], *,
                      within: int = DEFAULT_MAX_INSNS) -> re.Match[str]:
        """Run until the console matches `pattern` (a regex; use re.escape for plain
        text), at most `within` instructions from now."""
        regex = re.compile(pattern, re.M) if isinstance(pattern, str) else pattern
        spent = 0
        while True:
            found = regex.search(self.output)
            if found is not None:
                return found
            if self.finished or spent >= within:
                self.fail(f"expected console output matching {regex.pattern!r} "
                          f"within {within:,} instructions")
            step = min(SLICE, within - spent)
            self.run(step)
            spent += step

    def expect_text(self, text: str, *, within: int = DEFAULT_MAX_INSNS) -> re.Match[str]:
        """Run until the console shows `text` (plain text), at most `within` more
        instructions."""
        return self.expect_output(re.compile(re.escape(text)), within=within)

    def expect_exit(self, status: int = 0, *, within: int = DEFAULT_MAX_INSNS) -> None:
        if not self.finished:
            self.run(within)
        r = self.result
        if r is None or r.stop is not Stop.HALT or self.console.truncated or self.event_flood:
            self.fail(f"expected the program to exit with status {status}")
        elif r.exit_status != status:
            self.fail(f"expected exit status {status}, got {r.exit_status}")
        self.expect_honest_resumes()

    def expect_honest_resumes(self) -> None:
        """Every return to U so far was one the ABI allows (harness/grade/resumes.py):
        after the ecall, at an exec's entry, at a registered handler; never after exit;
        and gave the program back its registers (harness/grade/user_registers.py)."""
        violation = check_resumes(self.trace.events, self._entries(), self.rules)
        if violation is not None:
            self.fail(str(violation))
        if self.registers_watch.violation is not None:
            self.fail(str(self.registers_watch.violation))

    def _entries(self) -> set[int]:
        """The ELF entries of the user programs this run may start."""
        entries = set()
        for path in self.users.values():
            with suppress(BadInput):
                entries.add(_entry(path))
        return entries

    def expect_pass(self, *, within: int = DEFAULT_MAX_INSNS) -> None:
        """The lab-program protocol: the program prints `PASS <token>` and exits 0.
        The token is fresh for every run, so printing "PASS" alone scores nothing; and
        the line must be the program's own: one write(1, buf, len) from U-mode that
        returned len, as the trusted test program's printf makes it. A kernel that
        echoes the token it finds in its boot arguments scores nothing either."""
        self.run_to_exit(within)
        line = f"PASS {self.token}"
        # At the end of a line, not necessarily at its start: output before it that did
        # not end its line (a check's message without "\n", the kernel's own) runs into
        # it. That the line is the program's own write is checked below.
        if re.search(rf"{re.escape(line)}$", self.output, re.M) is None:
            self.fail(self.program_failure() or "the test program did not report success")
        size = len(line) + 1
        writes = [c for c in self.trace.syscalls("write")
                  if c.args[0] == 1 and c.args[2] == size and c.ret == size]
        if not writes:
            self.fail(f"{line!r} is on the console, but the test program never wrote it "
                      f"(no write(1, buf, {size}) from U-mode returned {size})")
        self.expect_exit(0)
        writes = self._from_the_program(line, writes)
        # The verdict is the program's own: the process that wrote the line then asked
        # to exit with status 0 (a0 of its exit ecall, read by the harness), and
        # every return to U was one the ABI allows (expect_exit checked).
        writers = {c.satp for c in writes}
        exits = [c for c in self.trace.syscalls("exit") if c.satp in writers]
        if not any(to_signed(c.args[0], self.machine.xlen) == 0 for c in exits):
            statuses = ", ".join(str(to_signed(c.args[0], self.machine.xlen)) for c in exits)
            seen = f"its exit calls: {statuses}" if exits else "it made no exit call"
            self.fail(f"{line!r} was written, but the process that wrote it never called "
                      f"exit(0) itself ({seen}); the kernel's power-off status is not the "
                      "program's verdict")

    def _from_the_program(self, line: str, writes: list[SyscallRecord]) -> list[SyscallRecord]:
        """The writes of `line` made from the booted program's own `write` stub (its
        ELF's symbol): a kernel that runs another program in the test's place (`echo
        PASS <token>`) makes an honest write, from the wrong code. A program without
        the symbol (a hidden test's own, not linked with the user library) is not
        asked."""
        path = self.users.get(self.spec.program)
        stub = None if path is None else _symbol(path, "write")
        if stub is None:
            return writes
        mine = [c for c in writes if stub <= c.epc < stub + STUB_BYTES]
        if not mine:
            self.fail(f"{line!r} was written, but not by {self.spec.program}: the write's "
                      f"ecall at {writes[0].epc:#x} is not in {self.spec.program}'s write "
                      f"({stub:#x})")
        return mine

    # -- what it trapped -----------------------------------------------------------
    @property
    def trace(self) -> TraceView:
        """The events and system calls so far (the run's flow, brought up to date)."""
        return TraceView(self.flow)

    def expect_syscall(self, name: str, *, count: int | None = None,
                       args: tuple[int, ...] | None = None,
                       ret: int | None = None) -> list[SyscallRecord]:
        """The calls of `name` the machine saw; fail unless there are `count` of them
        (at least one if None) and, if given, one starts with `args` and returns
        `ret`."""
        calls = self.trace.syscalls(name)
        shown = "\n".join(f"  {c}" for c in calls[:20]) or "  (none)"
        if (count is None and not calls) or (count is not None and len(calls) != count):
            want = "at least one" if count is None else str(count)
            self.fail(f"expected {want} {name} system call(s), saw {len(calls)}:\n{shown}")
        matching = [c for c in calls if (args is None or c.args[:len(args)] == args)
                    and (ret is None or c.ret == ret)]
        if not matching:
            what = f"{name}({', '.join(hex(a) for a in args or ())}...) -> {ret}"
            self.fail(f"expected a call {what}; saw:\n{shown}")
        return calls

    def expect_trap(self, code: int, *, interrupt: bool = False, tval: int | None = None,
                    from_priv: Priv | None = None) -> list[TrapEvent]:
        """At least one trap with this cause code (and tval, and origin, if given)."""
        traps = [t for t in self.trace.traps(code=code, interrupt=interrupt,
                                             from_priv=from_priv)
                 if tval is None or t.tval == tval]
        if not traps:
            what = f"{'interrupt' if interrupt else 'exception'} {code}"
            where = f" with tval {tval:#x}" if tval is not None else ""
            self.fail(f"expected a trap ({what}{where}); none was taken")
        return traps

    def close(self) -> None:
        self.machine.close()
