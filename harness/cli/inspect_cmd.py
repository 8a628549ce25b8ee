"""`privlab inspect --at POINT`: the whole machine at one moment of a run.

    privlab inspect --at trap:6               # event #6 of `privlab trace --user hello`
    privlab inspect --at syscall:write --user hello
    privlab inspect --at symbol:usertrap
    privlab inspect --at sbi:DBCN.WRITE       # the kernel's console write, in the firmware

Shows the event, the registers, every field of the trap CSRs, those of the level the
hart is in first (fields the event changed are highlighted: the run is replayed to
the instruction before it), the code where it trapped and where the hart is now, and
the kernel's process table and the current process's trap frame and open files
(--pid N: that process's), decoded from the kernel's DWARF.

Under --smp it shows the hart the run stopped on (the one that reached the point),
says which, and lists every hart's pc; --hart N shows hart N at that moment instead.
"""

# The parser is built on every run of `privlab` (harness/cli/main.py): this module
# imports only argparse-level helpers at its top, and the machine, rich and the views
# inside the functions that run the command (tests/cli/test_cli_startup.py).

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from .helplayout import HelpLayout
from .sessionargs import add_abi_argument, add_at_argument, add_machine_arguments

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

    from ..api import Session
    from ..inspect import CsrSnapshot, RegisterSnapshot, RoundTripView
    from ..kernelinfo.dwarf_types import StructValue
    from ..kernelinfo.mirrors import Process
    from ..kernelinfo.symbols import Location
    from ..machine.events import Event, TrapEvent

__all__ = ["register", "run"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("inspect", help="registers, CSRs, code, processes at one moment",
                       description=__doc__, formatter_class=HelpLayout)
    add_at_argument(p, "syscall:*")
    p.add_argument("--pid", type=int, metavar="N",
                   help="show this process's trap frame (default: the running process's)")
    p.add_argument("--hart", type=int, metavar="N",
                   help="under --smp: show hart N at that moment (default: the hart that "
                        "reached the point, which the first line names)")
    add_abi_argument(p)
    add_machine_arguments(p, default_user="hello")
    p.set_defaults(func=run)


REPLAY_MARGIN = 64     # replay at full speed to this many instructions before the event
REPLAY_HITS = 64       # then break at its address at most this often
RETURN_SEARCH = 20_000_000   # instructions to look for a trap's return to U in


def _before(args: argparse.Namespace, e: Event) -> tuple[CsrSnapshot, RegisterSnapshot] | None:
    """Replay the run (it is deterministic) to the instruction the event happened at,
    just before it: the state the event changed."""
    from ..inspect import CsrSnapshot, RegisterSnapshot
    from ..machine import Stop
    from ..machine.events import TrapEvent
    from ..machine.until import AtAddress
    from .console import interrupt_stops
    from .sessionargs import open_session, raise_for_stop

    addr = e.epc if isinstance(e, TrapEvent) else e.at
    s = open_session(args, notes=False)   # said at the first boot
    try:
        if s.machine.smp > 1:
            return _before_on_hart(s, e, addr, args.at)
        with interrupt_stops(s.machine):
            if e.instret > REPLAY_MARGIN:
                r = s.run_until_instret(e.instret - REPLAY_MARGIN)
                if r.stop is Stop.USER:
                    raise_for_stop(r, None, f"replaying the run to {args.at}",
                                   machine=s.machine, info=s.info)
            for _ in range(REPLAY_HITS):
                r = s.run(None, AtAddress(addr))
                raise_for_stop(r, None, f"replaying the run to {args.at}",
                               machine=s.machine, info=s.info)
                if r.stop is not Stop.BREAKPOINT or len(s.events) > e.seq \
                        or s.instret > e.instret:
                    return None
                if s.instret == e.instret and len(s.events) == e.seq:
                    return (CsrSnapshot.take(s.machine.hart),
                            RegisterSnapshot.take(s.machine.hart))
        return None
    finally:
        s.close()


def _before_on_hart(s: Session, e: Event, addr: int,
                    at: str) -> tuple[CsrSnapshot, RegisterSnapshot] | None:
    """_before on a machine of several harts, where an event's instret is its own
    hart's: replay to the event before it, then break at the address (on any hart)
    until the event's hart is there with the event's instret."""
    from ..inspect import CsrSnapshot, RegisterSnapshot
    from ..machine import Stop
    from ..machine.until import AtAddress
    from .console import interrupt_stops
    from .sessionargs import raise_for_stop

    with interrupt_stops(s.machine):
        if e.seq > 0:
            r = s.run_until_event(e.seq - 1)
            raise_for_stop(r, None, f"replaying the run to {at}",
                           machine=s.machine, info=s.info)
        for _ in range(REPLAY_HITS):
            r = s.run(None, AtAddress(addr))
            raise_for_stop(r, None, f"replaying the run to {at}",
                           machine=s.machine, info=s.info)
            h = s.machine.hart
            if r.stop is not Stop.BREAKPOINT or len(s.events) > e.seq:
                return None
            if h.state.hart_id == e.hart and h.state.instret == e.instret:
                return CsrSnapshot.take(h), RegisterSnapshot.take(h)
    return None


def _headline(s: Session, e: Event | None, at: str, stopped: int) -> Text:
    """What the point was, the hart shown (under --smp: which one reached the point,
    and every hart's pc), and the event. Under --smp, instret is the shown hart's own
    count and `all harts` the machine's, which `--at instret:N` counts."""
    from rich.text import Text

    from ..abi.csr import Csr, Priv
    from ..inspect.timeline import describe
    from ..theme import priv_style
    from .diagnose import Namer, hart_lines

    namer = Namer(s.info, s.machine)
    here = s.machine.hart.state.hart_id
    t = Text()
    t.append(f"At {at}: ", "heading")
    if s.machine.smp > 1:
        t.append(f"hart {here} of {s.machine.smp}  ", "heading")
    t.append(f"{s.priv.letter}-mode", priv_style(s.priv))
    satp = s.machine.hart.csr(Csr.SATP) if s.priv is not Priv.M else None
    t.append(f"  pc {namer(s.pc, satp)}  instret {s.instret}")
    if s.machine.smp > 1:
        t.append(f" (hart {here}'s own; all harts {s.machine.total_instret()}, "
                 f"as --at instret:N counts)\n")
        other = "--hart N shows another" if here == stopped else f"--hart {here} shows hart {here}"
        t.append(f"stopped on hart {stopped}, which reached the point; {other}\n", "muted")
        for line in hart_lines(s.machine, namer):
            t.append(line + "\n", "muted")
    else:
        t.append("\n")
    if e is not None:
        rows = [r for r in s.flow.rows() if r.seq == e.seq]
        if rows:
            t.append(f"event #{e.seq}: {e.priv_from.letter} → {e.priv_to.letter}  ")
            if s.machine.smp > 1 and e.hart != here:
                t.append(f"(on hart {e.hart})  ")
            t.append_text(describe(rows[0], s.machine.xlen))
    return t


def _code(s: Session, e: Event | None) -> RenderableType:
    from rich.console import Group

    from ..abi.csr import Csr
    from ..errors import GuestError
    from ..inspect import Disassembly, disassemble_around
    from ..machine.events import TrapEvent

    satp = s.machine.hart.csr(Csr.SATP)

    def sym(a: int) -> Location:
        return s.info.symbolize(a, satp, s.machine.memory)

    def read(addr: int, n: int) -> bytes | None:
        try:
            return s.read_virt(addr, n)
        except GuestError:      # not mapped, or not RAM: the view shows no bytes
            return None

    parts: list[RenderableType] = []
    if isinstance(e, TrapEvent) and not e.interrupt:
        # The trapping instruction lives in the address space the trap came from.
        def read_then(addr: int, n: int) -> bytes | None:
            try:
                return s.read_virt(addr, n, e.satp)
            except GuestError:
                return None
        where = s.info.symbolize(e.epc, e.satp, s.machine.memory)
        parts.append(Disassembly(disassemble_around(read_then, e.epc, s.machine.xlen,
                                                    lambda a: s.info.symbolize(
                                                        a, e.satp, s.machine.memory)),
                                 e.epc, f"where it trapped: epc {where.name}", where.source))
    here = s.info.symbolize(s.pc, satp, s.machine.memory)
    parts.append(Disassembly(disassemble_around(read, s.pc, s.machine.xlen, sym),
                             s.pc, f"where the hart is: pc {here.name}", here.source))
    return Group(*parts)


def _frame_locations(s: Session, tf: StructValue, pid: int) -> dict[str, Location]:
    """kernel_trap in the kernel; epc in the address space of the process `pid`."""
    from ..abi.csr import Csr

    spaces = [satp for satp, (p, _) in s.flow.named.items() if p == pid]
    here = s.machine.hart.csr(Csr.SATP)
    out: dict[str, Location] = {}
    for name, satp in (("kernel_trap", here), ("epc", spaces[-1] if spaces else None)):
        value = tf[name] if tf.type.has(name) else None
        if isinstance(value, int) and value and satp is not None:
            out[name] = s.info.symbolize(value, satp, s.machine.memory)
    return out


def _thread(p: Process) -> tuple[int, int]:
    """A thread of the kernel: its process and its own trap frame."""
    return p.pid, p.trapframe_addr


def _running(s: Session) -> tuple[int, int] | None:
    from ..errors import BadInput, GuestError

    try:
        table = s.processes()
    except (BadInput, GuestError, KeyError, TypeError):   # no table, or a student's struct
        return None
    p = next((p for p in table.processes if p.slot == table.current), None)
    return _thread(p) if p is not None else None


def _round_trip(s: Session, e: TrapEvent) -> RoundTripView | str:
    """Run on from the trap (the session is at it) to the sret that returns to the same
    thread (same process and trap frame; same address space without a process table):
    its registers then beside those at the trap. A string: why there is none."""
    from ..abi.csr import Priv
    from ..inspect import RegisterSnapshot, RoundTripView
    from ..machine import Stop
    from ..machine.events import XretEvent
    from ..machine.until import PrivilegeChange
    from .console import interrupt_stops

    at_trap = RegisterSnapshot.take(s.machine.hart)
    at_trap = RegisterSnapshot(at_trap.xlen, e.priv_from, e.epc, at_trap.x)
    who = _running(s)
    start = s.instret
    with interrupt_stops(s.machine):
        while (left := RETURN_SEARCH - (s.instret - start)) > 0:
            r = s.run(left, PrivilegeChange(to=Priv.U))
            x = r.event
            if r.stop is not Stop.EVENT or not isinstance(x, XretEvent):
                ended = (f"the guest halted with status {r.exit_status}" if r.stop is Stop.HALT
                         else f"the run stopped ({r.stop.value})")
                return f"{ended} before this thread returned to U-mode"
            if x.satp == e.satp and (who is None or _running(s) == who):
                return RoundTripView(at_trap, RegisterSnapshot.take(s.machine.hart),
                                     e.seq, x.seq, x.insn)
    return f"no return to this thread within {RETURN_SEARCH:,} instructions"


def _process_views(s: Session, args: argparse.Namespace, e: Event | None
                   ) -> tuple[RenderableType | None, RenderableType | None,
                              tuple[str, RenderableType] | None]:
    """The process table (wait channels named), the chosen process's trap frame and
    its open files, from the kernel's DWARF; None for what there is not."""
    from ..errors import BadInput, GuestError
    from ..inspect import OpenFilesView, ProcessTableView, TrapFrameView
    from .diagnose import Namer, channel_namer

    kernel = s.info.kernel_info
    table = None
    if kernel is not None:
        try:
            table = s.processes()
        # A kernel mid-boot (its table not yet mapped), or one whose struct proc lacks
        # a field the mirror reads (a student's edit): show what there is.
        except (GuestError, KeyError, TypeError):
            table = None
    if table is None or kernel is None:
        if args.pid is not None and kernel is None:
            raise BadInput("--pid reads the bundled kernel's process table (struct proc); "
                           "this machine runs another kernel or a bare-metal program")
        if args.pid is not None:
            raise BadInput(f"no process table at {args.at} (the kernel has not set one up)")
        return None, None, None
    procs = ProcessTableView(table, None,
                             channel_namer(kernel, s.machine, table.processes,
                                           Namer(s.info, s.machine)))
    if args.pid is None:
        chosen = next((p for p in table.processes if p.slot == table.current), None)
    else:
        chosen = next((p for p in table.processes if p.pid == args.pid), None)
        if chosen is None:
            pids = ", ".join(str(p.pid) for p in table.processes) or "none"
            raise BadInput(f"no process with pid {args.pid} at {args.at} (pids: {pids})")
    if chosen is None:
        return procs, None, None
    frame = files = None
    tf = kernel.trapframe(s.machine.memory, chosen)
    if tf is not None:
        frame = TrapFrameView(tf, f"pid {chosen.pid} ({chosen.name})",
                              _frame_locations(s, tf, chosen.pid))
    try:
        open_files = kernel.open_files(s.machine.memory, chosen)
    except (GuestError, KeyError, TypeError):   # a student's struct file
        open_files = None
    if open_files is not None:
        files = (f"Open files (pid {chosen.pid})", OpenFilesView(open_files))
    return procs, frame, files


def run(args: argparse.Namespace) -> int:
    from rich.rule import Rule
    from rich.text import Text

    from ..abi.csr import Csr, Priv
    from ..errors import BadInput
    from ..inspect import (
        CsrPanel,
        CsrSnapshot,
        RegisterSnapshot,
        RegisterView,
        RoundTripView,
        make_console,
    )
    from ..inspect.moment import MomentView
    from ..machine.events import TrapEvent
    from .sessionargs import session_at

    if args.hart is not None and args.hart < 0:
        raise BadInput(f"--hart {args.hart}: harts are numbered from 0")
    if args.hart is not None and args.hart >= args.smp:
        raise BadInput(f"--hart {args.hart}: the machine has "
                       + (f"harts 0 to {args.smp - 1}" if args.smp > 1 else
                          "one hart, 0 (--smp N for more)"))
    s, result = session_at(args, capture=True)
    e = result.event
    stopped = s.machine.hart.state.hart_id
    if args.hart is not None:
        s.machine.select_hart(args.hart)
    own = args.hart is None or args.hart == stopped   # the hart the event is about
    before = _before(args, e) if e is not None and own else None
    now = CsrSnapshot.take(s.machine.hart)
    satp = s.machine.hart.csr(Csr.SATP)
    procs, frame, files = _process_views(s, args, e)
    view = MomentView(_headline(s, e, args.at, stopped), [
        ("Registers", RegisterView(RegisterSnapshot.take(s.machine.hart),
                                   before[1] if before else None, None)),
        ("CSRs" + (" (* = changed by this event)" if before else ""),
         CsrPanel(now, before[0] if before else None,
                  lambda a: s.info.symbolize(a, satp, s.machine.memory))),
        ("Code", _code(s, e if own else None)),
        (f"Processes ({k.profile.processes if (k := s.info.kernel_info) else 'proc'}[])",
         procs),                     # the --abi profile's table: uCore's pool[]
        ("Trap frame (not yet written by uservec at a trap from U)"
         if isinstance(e, TrapEvent) and e.priv_from is Priv.U and own else "Trap frame",
         frame),
        *([files] if files is not None else []),
    ])
    console = make_console()
    console.print(view)
    if isinstance(e, TrapEvent) and e.priv_from is Priv.U and own:
        # Last: this runs the guest on, past the moment shown above.
        trip = _round_trip(s, e)
        console.print(Rule(Text("User registers: at the trap and at its return", "heading"),
                           align="left", style="muted"))
        console.print(trip if isinstance(trip, RoundTripView) else Text(trip, "muted"))
    return 0
