"""The PLIC (harness/devices/plic.py): priorities, thresholds, claim/complete, contexts,
and the MEIP/SEIP lines it drives into the hart."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from privlab.abi.csr import Irq
from privlab.abi.platform import PLATFORM as P
from privlab.devices import DeviceError, Plic
from privlab.machine import Machine

M, S = P.plic_context_m, P.plic_context_s
MEIP, SEIP = 1 << Irq.M_EXTERNAL, 1 << Irq.S_EXTERNAL
UART = P.uart0_irq


def priority(source: int) -> int:
    return P.plic_priority + 4 * source


def enable(context: int, word: int = 0) -> int:
    return P.plic_enable + context * P.plic_enable_stride + 4 * word


def threshold(context: int) -> int:
    return P.plic_context + context * P.plic_context_stride + P.plic_threshold


def claim(context: int) -> int:
    return P.plic_context + context * P.plic_context_stride + P.plic_claim


@pytest.fixture
def machine() -> Iterator[Machine]:
    m = Machine(64)
    yield m
    m.close()


def plic_with(sources: dict[int, int], context: int = M, thresh: int = 0) -> Plic:
    """A PLIC with each source at its priority, enabled in `context`, and pending."""
    plic = Plic()
    bits = 0
    for source, prio in sources.items():
        plic.write(priority(source), 4, prio)
        bits |= 1 << source
    for word in range((P.plic_num_sources + 31) // 32):
        plic.write(enable(context, word), 4, bits >> (32 * word) & 0xFFFFFFFF)
    plic.write(threshold(context), 4, thresh)
    for source in sources:
        plic.set_level(source, True)
    return plic


def test_reset_state_is_all_zero() -> None:
    plic = Plic()
    assert plic.read(priority(UART), 4) == 0
    assert plic.read(P.plic_pending, 4) == 0
    assert plic.read(enable(M), 4) == plic.read(enable(S), 4) == 0
    assert plic.read(threshold(M), 4) == plic.read(threshold(S), 4) == 0
    assert plic.read(claim(M), 4) == 0


def test_priority_and_threshold_keep_their_value_modulo_eight() -> None:
    plic = Plic()
    plic.write(priority(3), 4, 9)
    plic.write(threshold(S), 4, 15)
    assert (plic.read(priority(3), 4), plic.read(threshold(S), 4)) == (1, 7)


def test_a_line_sets_its_pending_bit_and_software_cannot() -> None:
    plic = Plic()
    plic.set_level(33, True)
    plic.write(P.plic_pending, 4, 0xFFFFFFFF)
    assert plic.read(P.plic_pending, 4) == 0
    assert plic.read(P.plic_pending + 4, 4) == 1 << 1
    plic.set_level(33, False)
    assert plic.read(P.plic_pending + 4, 4) == 0


def test_claim_returns_the_highest_priority_and_clears_its_pending_bit() -> None:
    plic = plic_with({3: 2, 7: 5, 40: 4})
    assert plic.read(claim(M), 4) == 7
    assert plic.read(P.plic_pending, 4) == 1 << 3
    assert plic.read(claim(M), 4) == 40
    assert plic.read(claim(M), 4) == 3
    assert plic.read(claim(M), 4) == 0


def test_equal_priorities_go_to_the_lowest_id() -> None:
    plic = plic_with({12: 3, 5: 3, 64: 3})
    assert [plic.read(claim(M), 4) for _ in range(4)] == [5, 12, 64, 0]


def test_the_threshold_masks_priorities_at_or_below_it() -> None:
    plic = plic_with({4: 2, 6: 3}, thresh=2)
    assert plic.outputs == MEIP
    assert plic.read(claim(M), 4) == 6
    assert plic.outputs == 0
    assert plic.read(claim(M), 4) == 0
    assert plic.read(P.plic_pending, 4) == 1 << 4       # masked, still pending


def test_priority_zero_never_interrupts() -> None:
    plic = plic_with({9: 0})
    assert plic.outputs == 0 and plic.read(claim(M), 4) == 0


def test_enables_are_per_context() -> None:
    plic = plic_with({UART: 1}, context=S)
    assert plic.outputs == SEIP
    assert plic.read(claim(M), 4) == 0
    assert plic.read(claim(S), 4) == UART


def test_a_claimed_source_is_not_claimable_until_completed() -> None:
    plic = plic_with({UART: 1})
    assert plic.read(claim(M), 4) == UART
    plic.set_level(UART, True)                     # the device still asserts its line
    assert plic.read(P.plic_pending, 4) == 1 << UART
    assert plic.outputs == 0 and plic.read(claim(M), 4) == 0
    plic.write(claim(M), 4, UART)                  # complete
    assert plic.outputs == MEIP
    assert plic.read(claim(M), 4) == UART


def test_a_line_lowered_before_completion_stays_quiet() -> None:
    plic = plic_with({UART: 1})
    assert plic.read(claim(M), 4) == UART
    plic.set_level(UART, False)
    plic.write(claim(M), 4, UART)
    assert plic.outputs == 0 and plic.read(claim(M), 4) == 0


def test_enable_words_past_the_sources_read_zero() -> None:
    plic = Plic()
    past = (P.plic_num_sources + 31) // 32
    plic.write(enable(M, past), 4, 0xFFFFFFFF)
    assert plic.read(enable(M, past), 4) == 0


def test_offsets_without_a_register_read_zero_and_ignore_writes_as_qemu() -> None:
    plic = Plic()
    past_contexts = P.plic_context + P.plic_num_contexts * P.plic_context_stride
    plic.write(past_contexts, 4, 7)
    plic.write(P.plic_context + 8, 4, 7)
    assert (plic.read(past_contexts, 4), plic.read(P.plic_context + 8, 4)) == (0, 0)
    # OpenSBI sets the priority of sources 1..riscv,ndev: the last is one past them.
    plic.write(priority(P.plic_num_sources), 4, 1)
    assert plic.read(priority(P.plic_num_sources), 4) == 0
    assert plic.priority == [0] * P.plic_num_sources


def test_an_access_that_is_not_aligned_32_bits_fails() -> None:
    with pytest.raises(DeviceError):
        Plic().read(priority(UART), 1)


def test_source_0_has_no_priority_register() -> None:
    plic = Plic()
    plic.write(priority(0), 4, 5)
    assert plic.read(priority(0), 4) == 0 and plic.priority[0] == 0


def test_source_numbers_outside_the_plic_are_rejected() -> None:
    plic = Plic()
    for source in (0, P.plic_num_sources):
        with pytest.raises(ValueError):
            plic.line(source)


def test_context_0_drives_meip_and_context_1_seip(machine: Machine) -> None:
    plic = machine.plic
    plic.write(priority(UART), 4, 1)
    plic.write(enable(M), 4, 1 << UART)
    plic.line(UART).set(True)
    assert machine.hart.mip() & (MEIP | SEIP) == MEIP
    plic.write(enable(M), 4, 0)
    plic.write(enable(S), 4, 1 << UART)
    assert machine.hart.mip() & (MEIP | SEIP) == SEIP
    plic.line(UART).set(False)
    assert machine.hart.mip() & (MEIP | SEIP) == 0


def test_the_uart_is_wired_to_its_source(machine: Machine) -> None:
    machine.plic.write(priority(UART), 4, 1)
    machine.plic.write(enable(S), 4, 1 << UART)
    machine.uart.write(1, 1, 0x02)                 # IER.ETBEI: THR is empty
    assert machine.plic.read(P.plic_pending, 4) == 1 << UART
    assert machine.hart.mip() & SEIP == SEIP
