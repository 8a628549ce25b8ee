"""The GDB remote protocol, one method per packet type.

`Stub.dispatch(payload)` answers one packet: it returns the reply payload, or None
when the protocol wants no reply (``k``). Resuming packets (``c``, ``s``, ``vCont``)
run the machine to its next stop before they return; `interrupt()`, the only method
another thread may call, stops such a run (Ctrl-C). Console output (monitor output,
diagnostics) is queued in `notes`: the server sends it to gdb as ``O`` packets before
the reply to a resume or ``monitor`` packet, and prints it in privlab's terminal
otherwise (gdb reads no ``O`` packet in reply to anything else).
When a packet ends the session (kill, detach, the guest powering off) `end` says how.

Errors: a packet that does not parse gets ``E01``, a memory access that cannot be
done ``E14`` (EFAULT, as QEMU answers), an unknown packet the empty reply. Nothing a
client sends can raise out of `dispatch`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from ..abi.csr import Csr, Priv
from ..api.timetravel import History
from ..errors import ExitStatus, PrivlabError
from ..machine import Machine, RunResult, Stop
from .access import DebugMemory, MemoryMode
from .codec import PacketError, from_hex, parse_hex, to_hex
from .halt import Halter, StopCause
from .monitor import Monitor
from .target import Register, RegKind, TargetDescription
from .watch import WatchKind, Watchpoints

__all__ = ["SessionEnd", "Stub"]

PACKET_SIZE = 0x4000        # what we accept; gdb sizes M/X packets by it
MAX_READ = 0x10000          # bytes per m packet
NO_ADDRESS = (1 << 64) - 1  # never a pc: "skip no breakpoint"
THREAD_ID = 1           # hart 0's thread; hart k is thread k + 1
SIGINT = 2
SIGTRAP = 5
SIGABRT = 6
OK = b"OK"
E_ARGS = b"E01"
E_FAULT = b"E14"
FEATURES = (f"PacketSize={PACKET_SIZE:x};qXfer:features:read+;QStartNoAckMode+;"
            "swbreak+;hwbreak+;vContSupported+").encode()
REVERSE_FEATURES = b";ReverseStep+;ReverseContinue+"


class SessionEnd(Enum):
    KILLED = "killed"       # gdb's kill: end the run
    DETACHED = "detached"   # gdb let go: the guest runs on
    EXITED = "exited"       # the guest powered off (or ran out of budget)


@dataclass(frozen=True)
class _Action:
    """What a resume packet asks of the machine: one step or a run, optionally from `addr`."""
    step: bool
    addr: int | None = None


Handler = Callable[[bytes], bytes | None]


class Stub:
    def __init__(self, machine: Machine, *, max_insns: int | None = None,
                 reverse: bool = True, history_budget: int | None = None) -> None:
        """With `reverse`, the run is recorded (harness/api/timetravel.py) so that
        gdb's reverse-stepi and reverse-continue (bs, bc) can go back in it, in at most
        `history_budget` bytes of host memory (None: PRIVLAB_HISTORY_BUDGET or the
        default, timetravel.DEFAULT_BUDGET)."""
        self.m = machine
        self.memory = DebugMemory(machine)
        self.halter = Halter(machine)
        self.watchpoints = Watchpoints(machine, self.memory)
        self.target = TargetDescription(machine.xlen, self._has_csr)
        self.monitor = Monitor(machine, self.memory, self.status_lines)
        self.breakpoints: dict[int, set[str]] = {}
        # gdb inserts its breakpoints when it resumes the guest and lifts them at each
        # stop (unless `set breakpoint always-inserted on`): what was in place for the
        # last resume is what `monitor status` reports while stopped.
        self.last_resume_breakpoints: dict[int, set[str]] = {}
        self.gdb_features: set[str] = set()
        self.no_ack = False
        self.notes: list[str] = []
        self.end: SessionEnd | None = None
        self.result: RunResult | None = None     # how the guest ended, once it has
        self._budget_end = (self._instret() + max_insns if max_insns is not None else None)
        self._last_stop = b"T%02xthread:%x;" % (SIGTRAP, self._tid())
        self._watch_pc = NO_ADDRESS     # where the last stop was a watchpoint's
        self._handlers: dict[bytes, Handler] = {
            b"?": self.stop_reason, b"g": self.read_registers, b"G": self.write_registers,
            b"p": self.read_register, b"P": self.write_register,
            b"m": self.read_memory, b"M": self.write_memory, b"X": self.write_memory_binary,
            b"c": self.continue_, b"C": self.continue_with_signal,
            b"s": self.step, b"S": self.step_with_signal,
            b"H": self.set_thread, b"T": self.thread_alive,
            b"k": self.kill, b"D": self.detach,
            b"Z0": self.insert_sw_breakpoint, b"z0": self.remove_sw_breakpoint,
            b"Z1": self.insert_hw_breakpoint, b"z1": self.remove_hw_breakpoint,
            b"Z2": self.insert_write_watchpoint, b"z2": self.remove_write_watchpoint,
            b"Z3": self.insert_read_watchpoint, b"z3": self.remove_read_watchpoint,
            b"Z4": self.insert_access_watchpoint, b"z4": self.remove_access_watchpoint,
            b"qSupported": self.supported, b"qXfer": self.xfer,
            b"qAttached": self.attached, b"qC": self.current_thread,
            b"qfThreadInfo": self.first_thread_info, b"qsThreadInfo": self.next_thread_info,
            b"qThreadExtraInfo": self.thread_extra_info,
            b"qRcmd": self.monitor_command, b"qSymbol": self.symbol_lookup,
            b"QStartNoAckMode": self.start_no_ack_mode,
            b"vCont?": self.vcont_actions, b"vCont": self.vcont, b"vKill": self.vkill,
            b"bs": self.reverse_step, b"bc": self.reverse_continue,
        }
        self.history: History | None = None
        if reverse:
            try:
                self.history = (History(machine) if history_budget is None else
                                History(machine, budget=history_budget))
            except PrivlabError as e:     # a read-write disk: no going back
                self.notes.append(f"privlab: no reverse execution: {e}\n")

    # -- dispatch ------------------------------------------------------------------
    def _handler(self, payload: bytes) -> tuple[Handler | None, bytes]:
        if payload[:1] in (b"q", b"Q", b"v"):
            if payload.startswith(b"vCont?"):
                return self._handlers[b"vCont?"], payload[6:]
            cut = min((i for i in (payload.find(c) for c in b":,;") if i >= 0),
                      default=len(payload))
            return self._handlers.get(payload[:cut]), payload[cut + 1:]
        if payload in (b"bs", b"bc"):
            return self._handlers[payload], b""
        if payload[:1] in (b"Z", b"z"):
            if payload[2:3] != b",":
                return self._malformed, b""
            return self._handlers.get(payload[:2]), payload[3:]
        return self._handlers.get(payload[:1]), payload[1:]

    def dispatch(self, payload: bytes) -> bytes | None:
        handler, args = self._handler(payload)
        if handler is None:
            return b""
        try:
            return handler(args)
        except PacketError:
            return E_ARGS
        except (PrivlabError, ValueError, KeyError, IndexError, OverflowError) as e:
            self.notes.append(f"privlab: {payload[:1].decode(errors='replace')} packet: {e}\n")
            return E_ARGS
        except Exception as e:  # a stub bug must not take the guest down with it
            self.notes.append(f"privlab: internal error on a {payload[:12]!r} packet: "
                              f"{type(e).__name__}: {e}\n")
            return E_ARGS

    def _malformed(self, args: bytes) -> bytes:
        return E_ARGS

    def interrupt(self) -> None:
        """Stop a resume in progress at the next block boundary (any thread)."""
        self.halter.request(StopCause.INTERRUPT)

    # -- stop state ----------------------------------------------------------------
    def stop_reason(self, args: bytes) -> bytes:
        return self._last_stop

    # -- registers -----------------------------------------------------------------
    def _has_csr(self, number: int) -> bool:
        try:
            self.m.hart.csr(number)
        except KeyError:
            return False
        return True

    def _get(self, r: Register) -> int:
        h = self.m.hart
        if r.kind is RegKind.GPR:
            return h.x(r.index)
        if r.kind is RegKind.PC:
            return h.pc
        if r.kind is RegKind.CSR:
            return h.csr(r.index)
        return int(h.priv)

    def _changed(self) -> None:
        """gdb changed the machine: the recorded future is no longer its future."""
        if self.history is not None:
            self.history.forget_future()

    def _set(self, r: Register, value: int) -> None:
        self._changed()
        h = self.m.hart
        if r.kind is RegKind.GPR:
            h.set_x(r.index, value)
        elif r.kind is RegKind.PC:
            h.pc = value
        elif r.kind is RegKind.CSR:
            h.set_csr(r.index, value)
        else:
            if value not in (Priv.U, Priv.S, Priv.M):
                raise PacketError(f"no privilege level {value}")
            h.priv = Priv(value)

    def _encode(self, value: int) -> bytes:
        return to_hex(value.to_bytes(self.target.bytes, "little"))

    def _decode(self, text: bytes) -> int:
        raw = from_hex(text)
        if len(raw) != self.target.bytes:
            raise PacketError(f"a register is {self.target.bytes} bytes, not {len(raw)}")
        return int.from_bytes(raw, "little")

    def read_registers(self, args: bytes) -> bytes:
        return b"".join(self._encode(self._get(r)) for r in self.target.g_registers)

    def write_registers(self, args: bytes) -> bytes:
        width = 2 * self.target.bytes
        regs = self.target.g_registers
        if len(args) % width or len(args) // width > len(regs):
            raise PacketError("G packet of the wrong length")
        values = [self._decode(args[i:i + width]) for i in range(0, len(args), width)]
        for r, v in zip(regs, values, strict=False):
            self._set(r, v)
        return OK

    def _register(self, text: bytes) -> Register:
        r = self.target.by_number.get(parse_hex(text, "register number"))
        if r is None:
            raise PacketError(f"no register {text!r}")
        return r

    def read_register(self, args: bytes) -> bytes:
        return self._encode(self._get(self._register(args)))

    def write_register(self, args: bytes) -> bytes:
        num, sep, value = args.partition(b"=")
        if not sep:
            raise PacketError("P packet without '='")
        self._set(self._register(num), self._decode(value))
        return OK

    # -- memory --------------------------------------------------------------------
    def _addr_len(self, text: bytes) -> tuple[int, int]:
        addr, sep, length = text.partition(b",")
        if not sep:
            raise PacketError("expected ADDR,LENGTH")
        address = parse_hex(addr, "address")
        if address >> 64:       # no hart has such an address: never wrap it round
            raise PacketError(f"address {addr[:40]!r} is longer than 64 bits")
        return address, parse_hex(length, "length")

    def read_memory(self, args: bytes) -> bytes:
        addr, length = self._addr_len(args)
        try:
            return to_hex(self.memory.read_prefix(addr, min(length, MAX_READ)))
        except PrivlabError:
            return E_FAULT

    def _write(self, addr: int, data: bytes) -> bytes:
        self._changed()
        try:
            self.memory.write(addr, data)
        except PrivlabError:
            return E_FAULT
        return OK

    def write_memory(self, args: bytes) -> bytes:
        head, sep, data = args.partition(b":")
        addr, length = self._addr_len(head)
        raw = from_hex(data) if sep else b""
        if len(raw) != length:
            raise PacketError("M packet length does not match its data")
        return self._write(addr, raw)

    def write_memory_binary(self, args: bytes) -> bytes:
        head, sep, data = args.partition(b":")
        addr, length = self._addr_len(head)
        if not sep or len(data) != length:
            raise PacketError("X packet length does not match its data")
        return self._write(addr, data) if length else OK

    # -- breakpoints and watchpoints -------------------------------------------------
    def _break_args(self, args: bytes) -> int:
        addr, _kind = self._addr_len(args.split(b";", 1)[0])
        if addr & 1:
            raise PacketError(f"breakpoint at odd address {addr:#x}")
        return addr

    def _insert_break(self, args: bytes, kind: str) -> bytes:
        addr = self._break_args(args)
        self.breakpoints.setdefault(addr, set()).add(kind)
        self.m.set_breakpoint(addr)
        return OK

    def _remove_break(self, args: bytes, kind: str) -> bytes:
        addr = self._break_args(args)
        kinds = self.breakpoints.get(addr, set())
        kinds.discard(kind)
        if not kinds:
            self.breakpoints.pop(addr, None)
            self.m.clear_breakpoint(addr)
        return OK

    def insert_sw_breakpoint(self, args: bytes) -> bytes:
        return self._insert_break(args, "sw")

    def remove_sw_breakpoint(self, args: bytes) -> bytes:
        return self._remove_break(args, "sw")

    def insert_hw_breakpoint(self, args: bytes) -> bytes:
        return self._insert_break(args, "hw")

    def remove_hw_breakpoint(self, args: bytes) -> bytes:
        return self._remove_break(args, "hw")

    def _insert_watch(self, args: bytes, kind: WatchKind) -> bytes:
        addr, length = self._addr_len(args)
        why = self.watchpoints.insert(kind, addr, length)
        if why is None:
            return OK
        h = self.m.hart
        self.notes.append(f"privlab: {why} ({h.priv.letter}-mode, satp "
                          f"{h.csr(Csr.SATP):#x})\n")
        return E_ARGS

    def _remove_watch(self, args: bytes, kind: WatchKind) -> bytes:
        addr, length = self._addr_len(args)
        self.watchpoints.remove(kind, addr, length)
        return OK

    def insert_write_watchpoint(self, args: bytes) -> bytes:
        return self._insert_watch(args, WatchKind.WRITE)

    def remove_write_watchpoint(self, args: bytes) -> bytes:
        return self._remove_watch(args, WatchKind.WRITE)

    def insert_read_watchpoint(self, args: bytes) -> bytes:
        return self._insert_watch(args, WatchKind.READ)

    def remove_read_watchpoint(self, args: bytes) -> bytes:
        return self._remove_watch(args, WatchKind.READ)

    def insert_access_watchpoint(self, args: bytes) -> bytes:
        return self._insert_watch(args, WatchKind.ACCESS)

    def remove_access_watchpoint(self, args: bytes) -> bytes:
        return self._remove_watch(args, WatchKind.ACCESS)

    # -- running -------------------------------------------------------------------
    def _optional_addr(self, args: bytes) -> int | None:
        return parse_hex(args, "address") if args else None

    def continue_(self, args: bytes) -> bytes:
        return self._resume(_Action(False, self._optional_addr(args)))

    def continue_with_signal(self, args: bytes) -> bytes:
        _sig, _, addr = args.partition(b";")
        return self._resume(_Action(False, self._optional_addr(addr)))

    def step(self, args: bytes) -> bytes:
        return self._resume(_Action(True, self._optional_addr(args)))

    def step_with_signal(self, args: bytes) -> bytes:
        _sig, _, addr = args.partition(b";")
        return self._resume(_Action(True, self._optional_addr(addr)))

    def vcont_actions(self, args: bytes) -> bytes:
        return b"vCont;c;C;s;S"

    def vcont(self, args: bytes) -> bytes:
        """All-stop: a step action (for one thread, or for all) steps one hart, the
        thread named or else the selected one, and no other hart moves meanwhile,
        whatever gdb asks of the rest; a continue runs every hart, in turns."""
        actions: list[tuple[bytes, int | None]] = []
        for part in args.split(b";"):
            action, _, thread = part.partition(b":")
            if action[:1] not in (b"c", b"C", b"s", b"S", b"t"):
                raise PacketError(f"vCont action {action!r}")
            actions.append((action[:1], self._thread_hart(thread) if thread else None))
        for kind, hart in actions:
            if kind in (b"s", b"S"):
                if hart is not None:
                    self.m.select_hart(hart)
                return self._resume(_Action(True))
        for kind, _hart in actions:
            if kind in (b"c", b"C"):
                return self._resume(_Action(False))
        return OK if actions else E_ARGS

    def remaining(self) -> int | None:
        """Instructions left of the --max-insns budget (None: no budget)."""
        if self._budget_end is None:
            return None
        return max(0, self._budget_end - self._instret())

    def _instret(self) -> int:
        """Instructions all harts have run (the budget counts them together)."""
        return sum(h.state.instret for h in self.m.harts)

    def _resume(self, action: _Action) -> bytes:
        h = self.m.hart
        self.last_resume_breakpoints = {a: set(k) for a, k in self.breakpoints.items()}
        if action.addr is not None:
            h.pc = action.addr
        # Resuming from a breakpoint's address runs that instruction; the core keeps a
        # "skip once" address, set here every time so an old one never lingers.
        h.skip_breakpoint_once(h.pc if h.pc in self.m.breakpoints else NO_ADDRESS)
        if self._watch_pc == h.pc:
            h.skip_watch_once(h.pc)     # the access a watchpoint stopped before goes on
        self._watch_pc = NO_ADDRESS
        remaining = self.remaining()
        if remaining == 0:
            return self._budget_exhausted()
        several = self.history if self.m.smp > 1 else None
        if action.step:
            self.halter.take()
            before = several.position() if several is not None else None
            result = self.m.step()          # this hart only: the others stay
            if several is not None and before is not None:
                several.branch(int(h.state.hart_id), before)
            causes: set[StopCause] = set()
        else:
            self.watchpoints.forget_deleted()
            if several is not None:
                several.leave_branches()
            result = self.halter.run(remaining)
            causes = self.halter.take()
        return self._stop_reply(result, causes)

    # -- reverse execution (bs, bc) ------------------------------------------------------
    def reverse_step(self, args: bytes) -> bytes:
        if self.history is None:
            return b""
        with self.watchpoints.suspended():
            r = self.history.step_back()
        return self._reverse_reply(r.begin)

    def reverse_continue(self, args: bytes) -> bytes:
        """Back to the latest moment before now at a breakpoint (gdb's watchpoints are
        not looked for going back), or to the start of the recording."""
        if self.history is None:
            return b""
        with self.watchpoints.suspended():
            r = self.history.back_to_breakpoint(self.breakpoints)
        return self._reverse_reply(r.begin)

    def _reverse_reply(self, begin: bool) -> bytes:
        self._watch_pc = NO_ADDRESS
        self.halter.take()
        if self.m.smp > 1 and self.history is not None:
            # the hart whose instruction comes next, as recorded
            self.m.select_hart(self.history.hart_ahead())
        thread = b"thread:%x;" % self._tid()
        if begin:
            if self.history is not None and self.history.dropped:
                self.notes.append(f"privlab: {self.history.window()}\n")
            reply = b"T%02xreplaylog:begin;" % SIGTRAP + thread
        elif self.m.hart.pc in self.breakpoints:
            kinds = self.breakpoints[self.m.hart.pc]
            key = b"swbreak" if "sw" in kinds else b"hwbreak"
            extra = key + b":;" if key.decode() + "+" in self.gdb_features else b""
            reply = b"T%02x" % SIGTRAP + thread + extra
        else:
            reply = b"T%02x" % SIGTRAP + thread
        self._last_stop = reply
        return reply

    def budget_result(self) -> RunResult:
        h = self.m.hart
        return RunResult(Stop.BUDGET, message="instruction budget exhausted", pc=h.pc,
                         priv=h.priv, instret=h.state.instret)

    def _budget_exhausted(self) -> bytes:
        self.result = self.budget_result()
        self.notes.append(f"privlab: instruction budget exhausted at pc {self.result.pc:#x} "
                          f"in {self.result.priv.letter}-mode\n")
        self.end = SessionEnd.EXITED
        return b"W%02x" % ExitStatus.BUDGET

    def _stop_reply(self, r: RunResult, causes: set[StopCause]) -> bytes:
        hit = self.watchpoints.hit(r.access, r.pc) if r.access is not None else None
        thread = b"thread:%x;" % self._tid()   # the hart the run stopped on
        if r.stop is Stop.HALT:
            self.result = r
            self.end = SessionEnd.EXITED
            return b"W%02x" % (r.status & 0xFF)
        if hit is not None:
            self._watch_pc = hit.pc
            what = "store" if hit.write else "load"
            self.notes.append(f"privlab: {hit.kind.stop_key} hit at {hit.addr:#x}: the {what} "
                              f"by the instruction at {hit.pc:#x} (physical {hit.paddr:#x}), "
                              "stopped before it\n")
            reply = b"T%02x%s:%x;" % (SIGTRAP, hit.kind.stop_key.encode(), hit.addr) + thread
        elif r.stop is Stop.BREAKPOINT:
            kinds = self.breakpoints.get(r.pc, {"sw"})
            key = b"swbreak" if "sw" in kinds else b"hwbreak"
            extra = key + b":;" if key.decode() + "+" in self.gdb_features else b""
            reply = b"T%02x" % SIGTRAP + thread + extra
        elif r.stop is Stop.BUDGET and not causes:
            return self._budget_exhausted()
        elif r.stop in (Stop.USER, Stop.BUDGET):
            reply = b"T%02x" % SIGINT + thread
        elif r.stop is Stop.ERROR:
            self.notes.append(f"privlab: {r.message}\n")
            reply = b"T%02x" % SIGABRT + thread
        else:
            reply = b"T%02x" % SIGTRAP + thread
        self._last_stop = reply
        return reply

    # -- threads (one per hart: hart k is thread k + 1) ---------------------------------
    def _tid(self) -> int:
        return self.m.hart.state.hart_id + THREAD_ID

    def _thread_hart(self, text: bytes) -> int | None:
        """The hart a thread id names (None: -1 or 0, any or all); PacketError when
        there is no such thread."""
        if text.startswith(b"p"):   # multiprocess form p<pid>.<tid>
            text = text.split(b".")[-1]
        if text in (b"-1", b"0"):
            return None
        k = parse_hex(text, "thread id") - THREAD_ID
        if not 0 <= k < self.m.smp:
            raise PacketError(f"no thread {text!r}")
        return k

    def set_thread(self, args: bytes) -> bytes:
        """Hg selects the hart registers and memory are read from, Hc the one a step
        runs: both select it (Machine.select_hart), so the two are always one hart."""
        if args[:1] not in (b"g", b"c"):
            return E_ARGS
        k = self._thread_hart(args[1:])
        if k is not None:
            self.m.select_hart(k)
        return OK

    def thread_alive(self, args: bytes) -> bytes:
        try:
            self._thread_hart(args)
        except PacketError:
            return E_ARGS
        return OK

    def current_thread(self, args: bytes) -> bytes:
        return b"QC%x" % self._tid()

    def first_thread_info(self, args: bytes) -> bytes:
        return b"m" + b",".join(b"%x" % (k + THREAD_ID) for k in range(self.m.smp))

    def next_thread_info(self, args: bytes) -> bytes:
        return b"l"

    def thread_extra_info(self, args: bytes) -> bytes:
        """`info threads` shows "hart K" beside each thread."""
        k = self._thread_hart(args)
        return to_hex(f"hart {k if k is not None else self.m.hart.state.hart_id}".encode())

    def attached(self, args: bytes) -> bytes:
        return b"1"

    # -- session ---------------------------------------------------------------------
    def supported(self, args: bytes) -> bytes:
        self.gdb_features = {f.decode(errors="replace") for f in args.split(b";") if f}
        return FEATURES + (REVERSE_FEATURES if self.history is not None else b"")

    def start_no_ack_mode(self, args: bytes) -> bytes:
        self.no_ack = True
        return OK

    def xfer(self, args: bytes) -> bytes:
        parts = args.split(b":")
        if len(parts) != 4 or parts[0] != b"features" or parts[1] != b"read":
            return b""
        if parts[2] != b"target.xml":
            return b"E00"
        offset, length = self._addr_len(parts[3])
        data = self.target.xml().encode()
        chunk = data[offset:offset + length]
        return (b"m" if offset + length < len(data) else b"l") + chunk

    def symbol_lookup(self, args: bytes) -> bytes:
        return OK

    def monitor_command(self, args: bytes) -> bytes:
        command = from_hex(args).decode(errors="replace")
        output, _ok = self.monitor.run(command)
        if output:
            self.notes.append(output)
        # A failed command's output is its one-line reason. An error reply would add
        # gdb's "Protocol error with Rcmd" (E NN) or garbage (E.text), never the reason.
        return OK

    def kill(self, args: bytes) -> None:
        self.end = SessionEnd.KILLED
        return None

    def vkill(self, args: bytes) -> bytes:
        self.end = SessionEnd.KILLED
        return OK

    def detach(self, args: bytes) -> bytes:
        self.release()
        self.end = SessionEnd.DETACHED
        return OK

    def begin_session(self) -> None:
        """A new client: nothing of the last one's settings carries over."""
        self.no_ack = False
        self.end = None
        self.gdb_features = set()
        self.memory.mode = MemoryMode.VIRTUAL
        self.halter.take()

    def release(self) -> None:
        """Remove every breakpoint and watchpoint gdb set (on detach or disconnect)."""
        for addr in list(self.breakpoints):
            self.m.clear_breakpoint(addr)
        self.breakpoints.clear()
        self.last_resume_breakpoints.clear()
        self.watchpoints.clear()

    def status_lines(self) -> list[str]:
        history = ([self.history.window()] if self.history is not None else
                   ["history: none (no reverse execution)"])
        return [self._breakpoint_line(), f"watchpoints: {len(self.watchpoints)}",
                f"memory: {self.memory.mode.value} addresses", *history]

    def _breakpoint_line(self) -> str:
        if self.breakpoints:
            return f"breakpoints: {_listed(self.breakpoints)}"
        if self.last_resume_breakpoints:
            return (f"breakpoints: {_listed(self.last_resume_breakpoints)} (inserted by gdb "
                    "for the last resume; it lifts them while the guest is stopped)")
        return "breakpoints: none (gdb inserts its breakpoints when the guest resumes)"


def _listed(breakpoints: dict[int, set[str]]) -> str:
    """`0x80207660 sw, 0x10000 hw`: each address with how gdb set it (break, hbreak)."""
    return ", ".join(f"{a:#x} {'/'.join(sorted(k))}" for a, k in sorted(breakpoints.items()))
