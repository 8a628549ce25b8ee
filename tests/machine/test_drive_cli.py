"""`privlab run --drive IMAGE[,snapshot=on]` and `--virtio-legacy`: bad images are one
line and exit 2; a guest sees the drive in virtio-mmio slot 0."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from machine.asm import build_asm
from machine.test_bad_input import assert_one_line_error, run

# Reads slot 0's DeviceID and Version; exits with 100 + DeviceID * 16 + Version.
PROBE = """
    li t0, PLATFORM_VIRTIO0_BASE
    lw t1, VIRTIO_MMIO_DEVICE_ID(t0)
    lw t2, VIRTIO_MMIO_VERSION(t0)
    slli t1, t1, 4
    or t1, t1, t2
    addi t1, t1, 100
    slli t1, t1, 16
    li t5, FINISHER_FAIL
    or t5, t5, t1
    li t6, PLATFORM_FINISHER_BASE
    sw t5, 0(t6)
99: j 99b
"""


def probe(*args: str) -> int:
    return run("--bios", "none", "--kernel", str(build_asm(PROBE)), *args).returncode - 100


@pytest.fixture
def image(tmp_path: Path) -> Path:
    path = tmp_path / "disk.img"
    path.write_bytes(bytes(4096))
    return path


def test_a_drive_is_a_modern_block_device_in_slot_0(image: Path) -> None:
    assert probe("--drive", str(image)) == 2 * 16 + 2


def test_virtio_legacy_makes_version_1(image: Path) -> None:
    assert probe("--drive", str(image), "--virtio-legacy") == 2 * 16 + 1


def test_without_a_drive_slot_0_is_empty() -> None:
    assert probe() == 0 * 16 + 2


def bad(spec: str, expected: str) -> None:
    assert_one_line_error(run("--bios", "none", "--kernel", str(build_asm("PASS")),
                              "--drive", spec), expected)


def test_a_missing_image(tmp_path: Path) -> None:
    bad(str(tmp_path / "nope.img"), "nope.img: cannot open disk image: No such file")


def test_a_directory(tmp_path: Path) -> None:
    bad(str(tmp_path), "is a directory, not a disk image")


def test_a_size_that_is_not_whole_sectors(tmp_path: Path) -> None:
    f = tmp_path / "odd.img"
    f.write_bytes(bytes(1000))
    bad(str(f), "odd.img: size 1000 is not a multiple of 512")


def test_a_read_only_image_without_snapshot(image: Path) -> None:
    image.chmod(0o444)
    bad(str(image), "disk.img: the image is read-only; use --drive")


def test_a_read_only_image_with_snapshot_runs(image: Path) -> None:
    image.chmod(0o444)
    assert probe("--drive", f"{image},snapshot=on") == 2 * 16 + 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_image(image: Path) -> None:
    image.chmod(0)
    bad(str(image), "disk.img: cannot open disk image: Permission denied")


def test_an_unknown_drive_option(image: Path) -> None:
    bad(f"{image},format=qcow2", "unknown option 'format=qcow2' (only snapshot=on|off)")


def test_trace_takes_the_drive_options_too(image: Path) -> None:
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-m", "privlab", "trace", "--bios", "none",
                        "--kernel", str(build_asm("PASS")), "--drive", str(image) + "x"],
                       capture_output=True, text=True, timeout=120, check=False)
    assert_one_line_error(p, "disk.imgx: cannot open disk image")


def test_session_bare_runs_the_conformance_program_on_a_snapshot(image: Path) -> None:
    from conformance.programs import build_program

    from privlab.api import Session
    from privlab.machine import Stop

    before = image.read_bytes()
    s = Session.bare(build_program("virtio_blk", "rv64"), drive=f"{image},snapshot=on")
    try:
        result = s.run(max_insns=10_000_000)
    finally:
        s.close()
    assert (result.stop, result.exit_status) == (Stop.HALT, 0)
    assert image.read_bytes() == before
