"""Lab 6 hidden tests."""

import pytest

from privlab.abi.csr import Priv
from privlab.grade import KernelUnderTest
from privlab.trace import TrapEvent, XretEvent


@pytest.mark.points(2)
def test_interrupted_code_resumes_at_the_interrupted_instruction(
        privlab_kernel: KernelUnderTest) -> None:
    """After each timer interrupt from U, the sret back into that address space goes
    to the interrupted pc (sepc), not past it."""
    run = privlab_kernel.run("lab_trap", "timer", privlab_kernel.token, 7, 20000)
    run.expect_pass()
    pending: dict[int, int] = {}
    checked = 0
    for e in run.trace.events:
        if isinstance(e, TrapEvent) and e.priv_from == Priv.U:
            pending[e.satp] = e.epc if e.interrupt else -1
        elif isinstance(e, XretEvent) and e.insn == "sret" and e.priv_to == Priv.U:
            epc = pending.pop(e.satp, -1)
            if epc >= 0:
                assert e.pc == epc, f"interrupted at {epc:#x}, resumed at {e.pc:#x}"
                checked += 1
    assert checked >= 5
