"""The conformance suite on privlab, and trap for trap against QEMU 7.2.

Every program in tests/conformance checks its own traps (cause, epc, tval, target
level, xPP, xIE, vector) and must exit 0 on privlab as it does on QEMU. The
differential test then runs the same ELF under `qemu-system-riscvXX -machine virt
-bios none -d int` and requires the sequence of (interrupt, code, epc, tval) to be
identical. The hart privlab emulates has no hypervisor extension, so QEMU runs with
h=false; it has Sstc, as QEMU 7.2 enables it by default on virt.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conformance.programs import DRIVES, LEGACY, PROGRAMS, build_program, scratch_drive

from privlab import qemu
from privlab.build import ARCHES
from privlab.devices import Drive
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_bare
from privlab.trace import TrapEvent

QEMU_CPU = {"rv64": "rv64,h=false", "rv32": "rv32,h=false"}

def params() -> list[object]:
    return [pytest.param(name, arch, id=f"{arch}-{name}")
            for arch in ("rv64", "rv32") for name in PROGRAMS]


def run_privlab(name: str, arch: str, tmp: Path) -> tuple[Machine,
                                                         list[tuple[bool, int, int, int]]]:
    image = load_elf(build_program(name, arch))
    drive = scratch_drive(name, tmp)
    m = Machine(image.xlen, drive=Drive(drive) if drive else None,
                virtio_legacy=name in LEGACY)
    boot_bare(m, image)
    result = m.run(max_insns=50_000_000)
    assert result.stop is Stop.HALT, f"{name}: {result.stop} {result.message}"
    assert result.exit_status == 0, f"{name} failed check {result.exit_status}: " \
        f"{m.console.text()[-500:]}"
    traps = [(e.interrupt, e.code, e.epc, e.tval) for e in m.events
             if isinstance(e, TrapEvent)]
    return m, traps


@pytest.mark.parametrize(("name", "arch"), params())
def test_program_passes_on_privlab(name: str, arch: str, tmp_path: Path) -> None:
    _, traps = run_privlab(name, arch, tmp_path)
    assert traps or name in DRIVES, "every trap conformance program takes traps"


QEMU_TRIES = 3


@pytest.mark.skipif(qemu.qemu_binary(ARCHES["rv64"]) is None, reason="QEMU 7.2 not installed")
@pytest.mark.parametrize(("name", "arch"), params())
def test_trap_sequence_equals_qemu(name: str, arch: str, tmp_path: Path) -> None:
    (tmp_path / "privlab").mkdir()
    # QEMU completes virtio requests on its I/O threads, so the moment its guest sees a
    # completion varies from run to run (once in a loaded CI run, virtio_blk_irq's own
    # check failed on QEMU): the reference gets up to three tries, each on a fresh disk.
    for attempt in range(QEMU_TRIES):
        (tmp_path / f"qemu{attempt}").mkdir()
        qemu_drive = scratch_drive(name, tmp_path / f"qemu{attempt}")
        reference = qemu.run_qemu(build_program(name, arch), ARCHES[arch], timeout_s=30,
                                  extra_args=("-cpu", QEMU_CPU[arch]), drive=qemu_drive,
                                  virtio_legacy=name in LEGACY)
        if reference.exit_status == 0 or name not in DRIVES:
            break
    assert reference.exit_status == 0, f"QEMU itself fails {name}"
    expected = [(t.interrupt, t.code, t.epc, t.tval) for t in reference.traps]
    m, traps = run_privlab(name, arch, tmp_path / "privlab")
    m.close()
    if qemu_drive is not None:   # the same bytes reached the disk
        privlab_drive = tmp_path / "privlab" / qemu_drive.name
        assert privlab_drive.read_bytes() == qemu_drive.read_bytes()
    for i, (ours, theirs) in enumerate(zip(traps, expected, strict=False)):
        assert ours == theirs, (f"trap #{i}: privlab (int, code, epc, tval) = "
                                f"{_fmt(ours)}, QEMU = {_fmt(theirs)}")
    assert len(traps) == len(expected)


def _fmt(t: tuple[bool, int, int, int]) -> str:
    return f"({int(t[0])}, {t[1]}, {t[2]:#x}, {t[3]:#x})"
