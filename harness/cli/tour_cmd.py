"""`privlab tour`: a guided walk through one system call, start to finish.

Boots the bundled firmware and kernel, runs `hello`, and shows, from the run itself:
the boot (M to S to U), the trap flow of hello's write() through U, S and M, the CSRs
the ecall changed, and hello's page table with the walk that finds its buffer.
Non-interactive; takes a fraction of a second (a checkout's first run builds the
kernel first).
"""

# The parser is built on every run of `privlab` (harness/cli/main.py): this module
# imports only argparse-level helpers at its top, and the machine, rich and the views
# inside the functions that run the command (tests/cli/test_cli_startup.py).

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import GuestError
from .helplayout import HelpLayout

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from ..abi.csr import Priv
    from ..api import Session
    from ..inspect import CsrSnapshot
    from ..kernelinfo.symbols import Location
    from ..machine.events import TrapEvent, XretEvent
    from ..trace.flow import FlowRow

__all__ = ["register", "run", "tour"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tour", help="a guided walk through one system call (start here)",
                       description=__doc__, formatter_class=HelpLayout)
    p.add_argument("--arch", choices=("rv64", "rv32"), default="rv64")
    p.add_argument("--unfold", action="store_true",
                   help="show every row of the boot, runs of identical rows included")
    p.set_defaults(func=run)


# The tour's M-mode stop: the kernel's console write reaching the firmware.
#
# After hello's ecall into S, the tour follows the kernel on: to print, the kernel's
# `sbi_console_write` makes an SBI call (DBCN.WRITE), an ecall from S that traps into
# M-mode, where the firmware's handler writes the bytes to the UART and returns by mret.
# `follow` stops the run at that ecall and at the firmware's mret, stepping over each
# to see the CSRs on both sides; `show` explains them (tour() below calls both).

SBI_WRAPPER = "sbi_console_write"   # kernel/sbi.c: the kernel's side of DBCN.WRITE
VECTOR = "mtrap_vector"             # kernel/firmware/mtrap.S: mtvec, and the mret
HANDLER = ("mtrap() (kernel/firmware/fwmain.c)", "sbi_handle() (kernel/firmware/sbicalls.c)")


def insn_in(session: Session, image: str, symbol: str, mnemonic: str) -> int:
    """The address of the first `mnemonic` instruction inside `symbol` of `image`."""
    import capstone

    from ..machine import load_elf

    img = session.info.symbolizer.image(image)
    if img is None or symbol not in img.by_name:
        raise GuestError(f"{image} has no {symbol}")
    start, size = img.by_name[symbol]
    elf = load_elf(img.path)
    seg = next(s for s in elf.segments if s.vaddr <= start < s.vaddr + len(s.data))
    code = seg.data[start - seg.vaddr:start - seg.vaddr + (size or 512)]
    mode = capstone.CS_MODE_RISCV64 if elf.xlen == 64 else capstone.CS_MODE_RISCV32
    cs = capstone.Cs(capstone.CS_ARCH_RISCV, mode | capstone.CS_MODE_RISCVC)
    for insn in cs.disasm(code, start):
        if insn.mnemonic == mnemonic:
            return int(insn.address)
    raise GuestError(f"no {mnemonic} in {image}'s {symbol}")


@dataclass(frozen=True)
class FirmwareVisit:
    """The hart around the kernel's ecall into M and around the firmware's mret."""

    trap: TrapEvent          # the ecall from S, taken into M
    before: CsrSnapshot      # at the kernel's ecall, about to run it
    entered: CsrSnapshot     # at the firmware's trap vector, right after
    leaving: CsrSnapshot     # at the firmware's mret, about to run it
    back: CsrSnapshot        # in the kernel, right after the mret
    mret: XretEvent
    args: tuple[int, ...]    # a0..a7 at the ecall
    result: tuple[int, int]  # a0, a1 after the mret: SBI's error and value


def _stop_at(s: Session, addr: int, what: str) -> None:
    from ..machine import Stop
    from ..machine.until import AtAddress

    r = s.run(None, AtAddress(addr))
    if r.stop is not Stop.BREAKPOINT:
        raise GuestError(f"the run never reached {what} ({r.stop.value})")


def follow(s: Session) -> FirmwareVisit:
    """Run on from the hart's current point to the kernel's next DBCN write and the
    firmware's return from it, stepping over the ecall and over the mret."""
    from ..inspect import CsrSnapshot
    from ..machine.events import TrapEvent, XretEvent

    _stop_at(s, insn_in(s, "kernel", SBI_WRAPPER, "ecall"), f"the ecall in {SBI_WRAPPER}")
    args = tuple(s.reg(f"a{i}") for i in range(8))
    before = CsrSnapshot.take(s.machine.hart)
    s.step()
    entered = CsrSnapshot.take(s.machine.hart)
    trap = s.events[-1]
    _stop_at(s, insn_in(s, "firmware", VECTOR, "mret"), f"the mret in {VECTOR}")
    leaving = CsrSnapshot.take(s.machine.hart)
    s.step()
    back = CsrSnapshot.take(s.machine.hart)
    result = (s.reg("a0"), s.reg("a1"))
    mret = s.events[-1]
    if not isinstance(trap, TrapEvent) or not isinstance(mret, XretEvent):
        raise GuestError("the kernel's ecall into the firmware was not a trap and an mret")
    return FirmwareVisit(trap, before, entered, leaving, back, mret, args, result)


def show(c: Console, v: FirmwareVisit, s: Session, say: Callable[[str], None]) -> None:
    """The M-mode CSRs at the trap, then at the mret, each explained for a student."""
    from ..abi.csr import Csr, Priv
    from ..inspect import CsrPanel
    from ..trace.sbi import SBI_EXTENSION_REG, SBI_FUNCTION_REG

    satp = v.before[Csr.SATP].value

    def sym(a: int) -> str:
        return s.info.symbolize(a, satp, s.machine.memory).name

    a = v.args
    name = s.sbi.name(a[SBI_EXTENSION_REG], a[SBI_FUNCTION_REG])
    eid = a[SBI_EXTENSION_REG]
    text = eid.to_bytes(4, "big").decode("ascii", "replace")
    ascii_name = f' ("{text}" in ASCII)' if eid >= 1 << 24 and text.isalnum() else ""
    say(f"#{v.trap.seq}: to print, the kernel's {SBI_WRAPPER} runs ecall in S-mode with "
        f"a7 = {eid:#x}{ascii_name} and a6 = {a[SBI_FUNCTION_REG]} ({name}), "
        f"a0 = {a[0]} bytes at physical address a1 = {a[1]:#x} (the firmware works with "
        "physical addresses). medeleg does not delegate supervisor_ecall, so the hart "
        f"enters M-mode at mtvec = {sym(v.entered[Csr.MTVEC].value)}.")
    c.print(CsrPanel(v.entered, v.before, lambda x: s.info.symbolize(x, satp, s.machine.memory),
                     supervisor=False))
    st, was = v.entered[Csr.MSTATUS], v.before[Csr.MSTATUS]
    mpp = Priv(st.field("MPP")).letter
    cause = v.entered[Csr.MCAUSE]
    same = cause.value == v.before[Csr.MCAUSE].value
    say(f"mcause = {cause.value}, {cause.cause}: an exception (the top bit is clear), raised "
        "by ecall in S-mode" + ("; not marked, as the last trap into M was an SBI call too."
                                if same else "."))
    say(f"mepc = {sym(v.entered[Csr.MEPC].value)}: the kernel's own ecall instruction, in "
        f"S-mode code. The handler is the firmware's: {sym(v.entered.pc)} saves the "
        f"registers and calls {HANDLER[0]}, which passes the call to {HANDLER[1]}; it "
        "writes the bytes to the UART.")
    say(f"mstatus: MPP = {mpp}, the level the trap came from, kept for mret; MPIE = "
        f"{st.field('MPIE')}, the MIE before the trap (the firmware leaves MIE = "
        f"{was.field('MIE')} while the kernel runs: M-mode interrupts reach M from S "
        f"anyway); MIE = {st.field('MIE')}: no M-mode interrupt inside the handler.")
    say(f"mtval = {v.entered[Csr.MTVAL].value}: an ecall has no address or instruction "
        "to report.")
    say(f"#{v.mret.seq}: the firmware returns by mret. Before it, mtrap() added 4 to mepc, "
        "so the kernel resumes after its ecall instead of running it again:")
    c.print(CsrPanel(v.back, v.leaving, lambda x: s.info.symbolize(x, satp, s.machine.memory),
                     supervisor=False, only=(Csr.MSTATUS, Csr.MEPC)))
    back = v.back[Csr.MSTATUS]
    say(f"mret took the hart from {v.mret.priv_from.letter}-mode to "
        f"{v.mret.priv_to.letter}-mode (the MPP it found) at pc = mepc = "
        f"{sym(v.back.pc)}, the ecall + {v.back.pc - v.trap.epc}; MIE took MPIE's value "
        f"({back.field('MIE')}), MPIE became {back.field('MPIE')} and MPP "
        f"{Priv(back.field('MPP')).letter}. a0 = {v.result[0]} "
        f"({'SBI_SUCCESS' if v.result[0] == 0 else 'an SBI error'}), a1 = {v.result[1]}: "
        "the bytes written.")




PROGRAM = "hello"
CALL = "write"



def _section(c: Console, n: int, title: str) -> None:
    from rich.rule import Rule
    from rich.text import Text

    c.print()
    c.print(Rule(Text(f"{n}  {title}", "heading"), align="left", style="muted"))


def _say(c: Console, *parts: str | Text) -> None:
    from rich.padding import Padding
    from rich.text import Text

    t = Text()
    for p in parts:
        t.append_text(p) if isinstance(p, Text) else t.append(p)
    c.print(Padding(t, (0, 0, 0, 2)))


def _lvl(p: Priv) -> Text:
    from rich.text import Text

    from ..theme import priv_style

    return Text(f"{p.letter}-mode", priv_style(p))


def tour(arch: str = "rv64", console: Console | None = None, unfold: bool = False) -> int:
    from rich.rule import Rule
    from rich.text import Text

    from ..abi.csr import Csr, Priv
    from ..api import Session
    from ..inspect import CsrPanel, CsrSnapshot, PageTableTree, TrapTimeline, WalkView
    from ..machine import Stop
    from ..machine.until import AtAddress
    from ..theme import make_console
    from ..trace.flow import FlowFilter
    from ..trace.fold import TIMES, Fold

    c = console or make_console()
    started = time.perf_counter()
    s = Session.boot(PROGRAM, arch=arch, capture=True)
    ecall = insn_in(s, PROGRAM, CALL, "ecall")
    r = s.run(None, AtAddress(ecall))
    if r.stop is not Stop.BREAKPOINT:
        raise GuestError(f"{PROGRAM} never reached its {CALL}() ecall ({r.stop.value})")
    before = CsrSnapshot.take(s.machine.hart)
    s.step()                                    # the ecall: the hart takes the trap
    after = CsrSnapshot.take(s.machine.hart)
    satp = after[Csr.SATP].value
    a = [s.reg(f"a{i}") for i in range(8)]
    table = s.page_table(satp)
    walk = s.translate(a[1], "r", satp, Priv.U)
    firmware = follow(s)                        # the kernel's write into M, and back
    result = s.run()
    flow = s.flow
    sym = s.symbolize

    def locate(row: FlowRow) -> Location | None:
        return s.info.symbolize(row.pc if row.is_trap else row.target, row.satp,
                                s.machine.memory)

    rows = list(flow.rows())
    first_u = next((r for r in rows if not r.is_trap and r.priv_to == Priv.U), None)
    call_rows = list(flow.rows(FlowFilter(syscalls=frozenset({CALL}))))
    call = next((x for x in flow.syscalls if x.name == CALL), None)

    c.print(Text("privlab tour: the life of one system call", "heading"))
    _say(c, f"{PROGRAM} prints one line. We boot the teaching kernel, run {PROGRAM}, and follow "
         f"its {CALL}() through the hart's three privilege levels: ", _lvl(Priv.U),
         " (programs), ", _lvl(Priv.S), " (the kernel), ", _lvl(Priv.M), " (the firmware).")
    _say(c, Text("console: ", "muted"), repr(s.console))

    _section(c, 1, "Boot: M-mode to S-mode to U-mode")
    boot = [x for x in rows if first_u is None or x.seq <= first_u.seq]
    boot_view = TrapTimeline(boot, s.machine.xlen, locate, fold=not unfold)
    c.print(boot_view)
    if boot:
        _say(c, f"#{boot[0].seq}: the firmware ran first, in M-mode; its mret dropped to "
             "S-mode at ", Text(sym(boot[0].target).name, "symbol"), ", the kernel's entry.")
    sbi = [x for x in boot if x.is_trap and x.note.startswith("sbi")]
    if sbi:
        _say(c, f"{', '.join('#' + str(x.seq) for x in sbi)}: the kernel asked the firmware for "
             f"services ({', '.join(x.note[4:] for x in sbi)}): an ecall from S traps into M.")
    folds = [x for x in boot_view.items() if isinstance(x, Fold)]
    if folds:
        f = folds[0]
        _say(c, f"#{f.first.seq} {TIMES}{f.count}: ", Text(" / ".join(r.name for r in f.unit),
                                                           "note"),
             f" {f.count} times in a row, folded into one row with a count: the disk's "
             "interrupts while the kernel reads it (privlab tour --unfold shows each).")
    if first_u is not None:
        _say(c, f"#{first_u.seq}: sret into U-mode at ", Text(sym(first_u.target, satp).name,
                                                                 "symbol"),
             f": {PROGRAM} starts, in its own address space (satp {first_u.satp:#x}).")

    _section(c, 2, f"{PROGRAM}'s {CALL}(), across U, S and M")
    c.print(TrapTimeline(call_rows, s.machine.xlen, locate))
    for x in call_rows:
        if x.is_trap and x.priv_from == Priv.U:
            _say(c, f"#{x.seq}: ecall in U-mode. user_ecall is delegated to S (medeleg), so the "
                 "hart enters the kernel at stvec = ", Text(sym(after[Csr.STVEC].value, satp)
                                                             .name, "symbol"), ".")
        elif x.is_trap:
            _say(c, f"#{x.seq}: to print, the kernel makes an SBI call ({x.note[4:]}): "
                 "an ecall from S-mode, which traps into M-mode.")
        elif x.priv_to == Priv.S:
            err = x.args[0]
            _say(c, f"#{x.seq}: the firmware's mret returns to the kernel with a0 = {err} "
                 f"({'SBI_SUCCESS' if err == 0 else 'an SBI error'}).")
        else:
            ret = call.ret if call is not None else None
            _say(c, f"#{x.seq}: sret back to {PROGRAM} after its ecall, with a0 = {ret}: "
                 "the bytes written.")

    _section(c, 3, "What the ecall did to the CSRs")
    _say(c, "Below: the hart right after the ecall (at the trap vector), compared with the "
         "instant before it. Changed fields are marked; everything else stayed put.")
    c.print(CsrPanel(after, before, lambda x: s.info.symbolize(x, satp, s.machine.memory),
                     machine=False))
    _say(c, f"The arguments are still in the registers: a7 = {a[7]} ({CALL}), a0 = {a[0]}, "
         f"a1 = {a[1]:#x} (the buffer), a2 = {a[2]}.")

    _section(c, 4, "The kernel's write reaches the firmware, in M-mode")
    _say(c, "The same ecall-and-return once more, one level down: the kernel calls the "
         "firmware. We stop at the kernel's ecall and at the firmware's mret and step over "
         "each; only the machine CSRs are shown (the supervisor ones did not change).")
    show(c, firmware, s, lambda text: _say(c, text))
    sret = next((x for x in call_rows if not x.is_trap and x.priv_to == Priv.U), None)
    if sret is not None:
        _say(c, f"#{sret.seq}: the kernel finishes write() and returns to {PROGRAM} by sret: "
             f"{sret.priv_from.letter}-mode to {sret.priv_to.letter}-mode at pc = sepc = ",
             Text(sym(sret.target, satp).name, "symbol"),
             f", the instruction after {PROGRAM}'s ecall (the kernel added 4 to the saved "
             "epc, as the firmware did).")

    _section(c, 5, f"{PROGRAM}'s page table, and the walk to its buffer")
    c.print(PageTableTree(table, None))
    c.print(WalkView(walk))
    if walk.pa is not None and call is not None and call.inputs:
        _say(c, f"The kernel copies {call.inputs[1].text} from physical address "
             f"{int(walk.pa):#x}. Pages without u (the trap frame, the trampoline) are the "
             "kernel's: U-mode cannot touch them.")

    took = time.perf_counter() - started
    c.print()
    c.print(Rule(Text("Next", "heading"), align="left", style="muted"))
    on = "" if arch == "rv64" else f" --arch {arch}"   # the same machine as this tour's
    nexts = (
            (f"privlab trace{on} --user {PROGRAM}", "every trap and return of the run"),
            (f"privlab inspect{on} --at trap:{call.entry_seq if call else 0}",
             "the whole machine at that event"),
            (f"privlab inspect{on} --at sbi:DBCN.WRITE",
             "the same in the firmware, M CSRs first"),
            (f"privlab pagetable{on} --kernel-table", "the kernel's own page table"),
            (f"privlab translate{on} {a[1]:#x} --priv U", "one walk, level by level"),
            (f"privlab trace{on} --format html -o {PROGRAM}.html --user {PROGRAM}",
             "a sequence diagram for the browser"))
    width = max(len(cmd) for cmd, _ in nexts) + 2
    for cmd, what in nexts:
        _say(c, Text(f"{cmd:<{width}}", "syscall"), Text(what, "muted"))
    _say(c, Text(f"({len(flow)} events, {s.instret:,} instructions, {took:.1f} s; "
                 f"{PROGRAM} exited with status {result.status})", "muted"))
    s.close()
    return 0


def run(args: argparse.Namespace) -> int:
    return tour(args.arch, unfold=args.unfold)

