"""What `privlab tour` runs (its parser is in tour_cmd.py, which imports this
module only when the command runs)."""

from __future__ import annotations

import argparse
import time

from rich.console import Console
from rich.padding import Padding
from rich.rule import Rule
from rich.text import Text

from ..abi.csr import Csr, Priv
from ..api import Session
from ..errors import GuestError
from ..inspect import CsrPanel, CsrSnapshot, PageTableTree, TrapTimeline, WalkView
from ..kernelinfo.symbols import Location
from ..machine import Stop
from ..machine.until import AtAddress
from ..theme import make_console, priv_style
from ..trace.flow import FlowFilter, FlowRow
from ..trace.fold import TIMES, Fold
from .tour_mmode import follow, insn_in, show

__all__ = ["run", "tour"]

PROGRAM = "hello"
CALL = "write"



def _section(c: Console, n: int, title: str) -> None:
    c.print()
    c.print(Rule(Text(f"{n}  {title}", "heading"), align="left", style="muted"))


def _say(c: Console, *parts: str | Text) -> None:
    t = Text()
    for p in parts:
        t.append_text(p) if isinstance(p, Text) else t.append(p)
    c.print(Padding(t, (0, 0, 0, 2)))


def _lvl(p: Priv) -> Text:
    return Text(f"{p.letter}-mode", priv_style(p))


def tour(arch: str = "rv64", console: Console | None = None, unfold: bool = False) -> int:
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
