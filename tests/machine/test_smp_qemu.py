"""Several harts against QEMU 7.2 `-machine virt -smp 2`, where timing does not matter:
the atomic counters' totals, hart ids, per-hart CSRs and an IPI through msip (bare
metal), and SBI HSM/IPI/RFENCE (privlab's firmware against OpenSBI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from machine.test_smp import AMO, ITER, LRSC, hsm_words, program
from privlab.build.toolchain import ARCHES
from privlab.qemu import qemu_binary, run_qemu

RV64 = ARCHES["rv64"]
pytestmark = pytest.mark.skipif(qemu_binary(RV64) is None,
                                reason="qemu-system-riscv64 is not installed")
SMP2 = ["-smp", "2", "-cpu", "rv64,h=false"]


def privlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "privlab", "run", "--smp", "2", *args],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize("variant", [AMO, LRSC])
def test_atomic_counter_totals_match_qemu(variant: int) -> None:
    elf = program("race", "rv64", variant)
    q = run_qemu(elf, RV64, 30, SMP2)
    p = privlab("--bios", "none", "--kernel", str(elf))
    assert q.exit_status == p.returncode == 0, (q.stderr, p.stderr)
    qemu_count = int(q.console.decode().split()[0], 16)
    assert qemu_count == int(p.stdout.split()[0], 16) == 2 * ITER


def test_hart_ids_csrs_and_msip_ipi_match_qemu() -> None:
    elf = program("ipi")
    q = run_qemu(elf, RV64, 30, SMP2)
    p = privlab("--bios", "none", "--kernel", str(elf))
    assert q.exit_status == p.returncode == 0, (q.stderr, p.stderr)
    assert q.console.decode().split() == p.stdout.split()
    assert [(t.interrupt, t.code) for t in q.traps] == [(True, 3)]   # hart 1's MSI


def test_sbi_hsm_ipi_rfence_match_opensbi() -> None:
    """hsm.S on privlab's firmware and on QEMU's default firmware (OpenSBI 1.1). OpenSBI
    enters the program on whichever hart wins its cold-boot lottery (now and then hart
    1 on a loaded host), which hsm.S prints first; the rest follows from it."""
    elf = program("hsm")
    qemu = subprocess.run([str(qemu_binary(RV64)), "-machine", "virt", *SMP2, "-nographic",
                           "-kernel", str(elf)], stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=60, check=False)
    p = privlab("--kernel", str(elf), "--max-insns", "400000000")
    assert qemu.returncode == p.returncode == 0, (qemu.stderr, p.stderr)
    ours = [int(w, 16) for w in p.stdout.split()]
    words = len(hsm_words())
    theirs = [int(w, 16) for w in qemu.stdout.decode(errors="replace").split()[-words:]]
    assert ours == hsm_words(0)
    assert theirs[0] in (0, 1) and theirs == hsm_words(theirs[0])


def test_privlab_firmware_on_qemu_runs_hsm_the_same(tmp_path: Path) -> None:
    """Our firmware's HSM, IPI and RFENCE on QEMU's two harts (running truly at once)."""
    from privlab.build.images import build_images

    firmware = build_images("rv64", listings=False).firmware
    serial = tmp_path / "serial.out"
    qemu = subprocess.run([str(qemu_binary(RV64)), "-machine", "virt", *SMP2,
                           "-display", "none", "-serial", f"file:{serial}",
                           "-bios", str(firmware), "-kernel", str(program("hsm"))],
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
                          check=False)
    assert qemu.returncode == 0, qemu.stderr
    assert [int(w, 16) for w in serial.read_text().split()] == hsm_words()
