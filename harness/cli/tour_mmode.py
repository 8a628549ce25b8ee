"""The tour's M-mode stop: the kernel's console write reaching the firmware.

After hello's ecall into S, the tour follows the kernel on: to print, the kernel's
`sbi_console_write` makes an SBI call (DBCN.WRITE), an ecall from S that traps into
M-mode, where the firmware's handler writes the bytes to the UART and returns by mret.
`follow` stops the run at that ecall and at the firmware's mret, stepping over each
to see the CSRs on both sides; `show` explains them (harness/cli/tour_run.py calls
both).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import capstone
from rich.console import Console

from ..abi.csr import Csr, Priv
from ..api import Session
from ..errors import GuestError
from ..inspect import CsrPanel, CsrSnapshot
from ..machine import Stop, load_elf
from ..machine.events import TrapEvent, XretEvent
from ..machine.until import AtAddress
from ..trace.sbi import SBI_EXTENSION_REG, SBI_FUNCTION_REG

__all__ = ["FirmwareVisit", "follow", "insn_in", "show"]

SBI_WRAPPER = "sbi_console_write"   # kernel/sbi.c: the kernel's side of DBCN.WRITE
VECTOR = "mtrap_vector"             # kernel/firmware/mtrap.S: mtvec, and the mret
HANDLER = ("mtrap() (kernel/firmware/fwmain.c)", "sbi_handle() (kernel/firmware/sbicalls.c)")


def insn_in(session: Session, image: str, symbol: str, mnemonic: str) -> int:
    """The address of the first `mnemonic` instruction inside `symbol` of `image`."""
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
    r = s.run(None, AtAddress(addr))
    if r.stop is not Stop.BREAKPOINT:
        raise GuestError(f"the run never reached {what} ({r.stop.value})")


def follow(s: Session) -> FirmwareVisit:
    """Run on from the hart's current point to the kernel's next DBCN write and the
    firmware's return from it, stepping over the ecall and over the mret."""
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

