"""The bare-metal programs under benchmarks/programs/ build and run to a clean power-off
on privlab, with few iterations (their speed is the benchmarks' business, not this
file's), and clock_pace measures the guest work one span of guest time holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from privlab.build import RV64
from privlab.build.baremetal import build_baremetal
from privlab.devices import Console
from privlab.machine import Machine, Stop, load_elf
from privlab.paths import REPO_ROOT

PROGRAMS = REPO_ROOT / "benchmarks" / "programs"
BATCH = 64   # clock_pace.S: round trips between two reads of mtime


def build(tmp_path: Path, name: str, **defines: int) -> Path:
    return build_baremetal([PROGRAMS / f"{name}.S"], RV64, tmp_path / f"{name}.elf",
                           include_dirs=[PROGRAMS], defines=defines)


def run(elf: Path, shift: int = 0) -> tuple[Machine, Console]:
    image = load_elf(elf)
    console = Console()
    m = Machine(image.xlen, console=console, keep_events=False, icount_shift=shift)
    m.load(image)
    r = m.run(max_insns=50_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), r.message
    return m, console


@pytest.mark.parametrize("name", ["alu_loop", "csr_loop", "ecall_loop", "store_loop"])
def test_a_benchmark_program_runs_to_power_off(tmp_path: Path, name: str) -> None:
    few, none = (run(build(tmp_path / str(n), name, ITERATIONS=n))[0].hart.state.instret
                 for n in (8192, 0))
    assert few > none + 8192   # the loop ran: at least one instruction per iteration


def pace(tmp_path: Path, ticks: int, shift: int) -> int:
    _, console = run(build(tmp_path / f"{ticks}-{shift}", "clock_pace", ITERATIONS=0,
                           TICKS=ticks), shift)
    text = console.text()
    assert text.endswith("\n") and text.strip().isdigit(), text
    return int(text)


def test_clock_pace_counts_round_trips_in_a_span_of_guest_time(tmp_path: Path) -> None:
    # 2,000 ticks of 10 MHz: 200 us, 200,000 instructions at 1 ns each. A round trip
    # retires 7 (the ecall does not retire), 7.06 with the batch's own.
    fine = pace(tmp_path, 2_000, 0)
    assert fine % BATCH == 0 and abs(fine - 200_000 / 7.06) <= BATCH
    # 4 ns per instruction: a quarter of the work in the same span of guest time.
    assert abs(pace(tmp_path, 2_000, 2) - fine / 4) <= BATCH
    assert pace(tmp_path, 2_000, 0) == fine   # the same count, run after run
