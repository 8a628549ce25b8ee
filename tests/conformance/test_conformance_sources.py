"""Static checks of the conformance sources: no QEMU needed.

conformance.h takes the spec's numbers from the generated riscv_gen.h
(harness/abi/spec_header.py); they must be the ones privlab.abi.csr defines. Check
numbers must be unique within a program and fit an exit status, or a failure would not
say which check it was.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from privlab.abi.csr import Csr, Exc, Irq, Priv, csr_fields
from privlab.abi.platform import parse_define_lines, parse_defines
from privlab.abi.spec_header import render

from .programs import INCLUDE_DIR, PROGRAMS, program_source

HEADER = {**parse_define_lines(render(64)), **parse_defines(INCLUDE_DIR / "conformance.h")}

_EXCEPTIONS = {
    "CAUSE_MISALIGNED_FETCH": Exc.MISALIGNED_FETCH,
    "CAUSE_FAULT_FETCH": Exc.FAULT_FETCH,
    "CAUSE_ILLEGAL_INSTRUCTION": Exc.ILLEGAL_INSTRUCTION,
    "CAUSE_BREAKPOINT": Exc.BREAKPOINT,
    "CAUSE_MISALIGNED_LOAD": Exc.MISALIGNED_LOAD,
    "CAUSE_FAULT_LOAD": Exc.FAULT_LOAD,
    "CAUSE_MISALIGNED_STORE": Exc.MISALIGNED_STORE,
    "CAUSE_FAULT_STORE": Exc.FAULT_STORE,
    "CAUSE_USER_ECALL": Exc.USER_ECALL,
    "CAUSE_SUPERVISOR_ECALL": Exc.SUPERVISOR_ECALL,
    "CAUSE_MACHINE_ECALL": Exc.MACHINE_ECALL,
    "CAUSE_EXEC_PAGE_FAULT": Exc.EXEC_PAGE_FAULT,
    "CAUSE_LOAD_PAGE_FAULT": Exc.LOAD_PAGE_FAULT,
    "CAUSE_STORE_PAGE_FAULT": Exc.STORE_PAGE_FAULT,
}
_INTERRUPTS = {
    "IRQ_S_SOFTWARE": Irq.S_SOFTWARE, "IRQ_M_SOFTWARE": Irq.M_SOFTWARE, "IRQ_S_TIMER": Irq.S_TIMER,
    "IRQ_M_TIMER": Irq.M_TIMER, "IRQ_S_EXTERNAL": Irq.S_EXTERNAL, "IRQ_M_EXTERNAL": Irq.M_EXTERNAL,
}


def _mask(csr: Csr, field: str) -> int:
    return next(f.mask(64) for f in csr_fields(csr, 64) if f.name == field)


@pytest.mark.parametrize(("name", "code"), sorted(_EXCEPTIONS.items()))
def test_exception_codes_match_harness_csr(name: str, code: Exc) -> None:
    assert HEADER[name] == code


@pytest.mark.parametrize(("name", "code"), sorted(_INTERRUPTS.items()))
def test_interrupt_codes_and_mip_bits_match_harness_csr(name: str, code: Irq) -> None:
    assert HEADER[name] == code
    mip_name = {1: "SSI", 3: "MSI", 5: "STI", 7: "MTI", 9: "SEI", 11: "MEI"}[code]
    assert HEADER[f"MIP_{mip_name}P"] == _mask(Csr.MIP, mip_name)


@pytest.mark.parametrize("field", ["SIE", "MIE", "SPIE", "MPIE", "SPP", "MPP", "FS", "MPRV",
                                   "SUM", "MXR", "TVM", "TW", "TSR"])
def test_mstatus_bits_match_harness_csr(field: str) -> None:
    assert HEADER[f"MSTATUS_{field}"] == _mask(Csr.MSTATUS, field)


def test_privilege_and_counteren_encodings_match_harness_csr() -> None:
    assert (HEADER["PRV_U"], HEADER["PRV_S"], HEADER["PRV_M"]) == (Priv.U, Priv.S, Priv.M)
    for bit in ("CY", "TM", "IR"):
        assert HEADER[f"COUNTEREN_{bit}"] == _mask(Csr.MCOUNTEREN, bit)


# A numbered step: `EXPECT 12, ...`, `CHECK_REG 3, a0, 1`, `FAIL 2`, `ILLEGAL 5, ...`.
_STEP = re.compile(r"^\s*(?:[\w.]+:\s*)?([A-Z][A-Z0-9_]*)\s+(\d+)\s*(?:,|$)")
# Not checks: repeat the number of the step they belong to, or take a number that is
# not a check number (a timer delay).
_NOT_A_CHECK = {"FAIL_NO_TRAP", "TIMER_IN"}
# Program-local macros that use several numbers from the one given.
_NUMBERS_USED = {"SIX_EXCEPTIONS": 6, "ATOMICS_LOAD": 3, "ATOMICS_STORE": 5}


def _check_numbers(name: str) -> Counter[int]:
    numbers: Counter[int] = Counter()
    for line in program_source(name).read_text().splitlines():
        step = _STEP.match(line.split("//")[0])
        if step is None or step[1] in _NOT_A_CHECK:
            continue
        first = int(step[2])
        numbers.update(range(first, first + _NUMBERS_USED.get(step[1], 1)))
    return numbers


@pytest.mark.parametrize("name", PROGRAMS)
def test_check_numbers_are_unique_and_fit_an_exit_status(name: str) -> None:
    numbers = _check_numbers(name)
    assert numbers, f"{name} has no numbered checks"
    assert [n for n, count in numbers.items() if count > 1] == []
    assert all(1 <= n <= 250 for n in numbers), sorted(numbers)


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_opens_with_its_contract_and_ends_through_the_finisher(name: str) -> None:
    text = program_source(name).read_text()
    assert text.startswith(f"// {name}.S: ")
    assert "Expected traps" in text.split("#include")[0]
    assert f"TEST_MAIN {name}\n" in text
    assert text.count("TEST_PASS") == 1

