"""A course's firmware written for an earlier QEMU, known by its bytes
(harness/boot/knownfirmware.py): `make run QEMU="privlab qemu"` runs it as the QEMU it
was written for, with the options that model that QEMU, and says so on stderr;
`--no-known-firmware` runs it as QEMU 7.2 does. The course's own files cannot be
vendored, so firmware of our own stands in for them: the run patches the table with
their sizes and digests, as the real entries hold the course files'."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from privlab.boot import knownfirmware
from privlab.boot.knownfirmware import (
    DTB_BEFORE_QEMU72,
    OLDER_QEMU,
    PMP_BEFORE_QEMU7,
    KnownFirmware,
    known_firmware,
)
from privlab.build.baremetal import build_baremetal
from privlab.build.toolchain import ARCHES

from .test_qemu_cmd import HERE, raw

# The table patched, then the command line, as the console script runs it.
DRIVER = """
import sys
from privlab.boot import knownfirmware
from privlab.boot.knownfirmware import KnownFirmware
size, digest, option = int(sys.argv[1]), sys.argv[2], sys.argv[3]
known = [o for o in knownfirmware.OLDER_QEMU if o[0] == option]
knownfirmware.KNOWN = (KnownFirmware(size, digest, "a test's firmware", "QEMU 7.0",
                                     tuple(known)),)
from privlab.cli.main import main
sys.exit(main(sys.argv[4:]))
"""


def _entry(path: Path) -> tuple[str, str]:
    data = path.read_bytes()
    return str(len(data)), hashlib.sha256(data).hexdigest()


def run_known(firmware: Path, option: str, *words: str | Path
              ) -> subprocess.CompletedProcess[str]:
    """`privlab WORDS` with `firmware` known as needing `option`."""
    return subprocess.run([sys.executable, "-c", DRIVER, *_entry(firmware), option,
                           *map(str, words)], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def by_node_name(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """uart_by_node_name.c (the 2023 RustSBI-QEMU's UART lookup) and a kernel."""
    tmp = tmp_path_factory.mktemp("known")
    firmware = build_baremetal([HERE / "uart_by_node_name.c"], ARCHES["rv64"],
                               tmp / "firmware.elf", listings=False)
    return firmware, raw("raw_kernel", tmp)


def note(firmware: Path, option: str) -> str:
    return (f"privlab: note: {firmware} is a test's firmware, written for QEMU 7.0: privlab "
            f"runs it as that QEMU would ({option}); --no-known-firmware runs it as QEMU 7.2 "
            "does\n")


def test_a_known_firmware_runs_as_the_qemu_it_was_written_for(
        by_node_name: tuple[Path, Path]) -> None:
    firmware, kernel = by_node_name
    words = ("-machine", "virt", "-nographic", "-bios", firmware, "-kernel", kernel)
    done = run_known(firmware, "--dtb-before-qemu7.2", "qemu", *words)
    assert (done.returncode, done.stdout) == (0, "uart found by its node's name\n")
    assert done.stderr == note(firmware, "--dtb-before-qemu7.2")
    # the same through `privlab run` (the bundled kernel, which it never enters)
    done = run_known(firmware, "--dtb-before-qemu7.2", "run", "--bios", firmware)
    assert (done.returncode, done.stdout) == (0, "uart found by its node's name\n")
    assert done.stderr == note(firmware, "--dtb-before-qemu7.2")


def test_no_known_firmware_runs_it_as_qemu_7_2_does(by_node_name: tuple[Path, Path]) -> None:
    """Without the tree it was written for, the lookup polls address 5: a load access
    fault, which its handler turns into exit status 5; no note."""
    firmware, kernel = by_node_name
    done = run_known(firmware, "--dtb-before-qemu7.2", "qemu", "--no-known-firmware",
                     "-machine", "virt", "-nographic", "-bios", firmware, "-kernel", kernel)
    assert (done.returncode, done.stdout, done.stderr) == (5, "", "")
    done = run_known(firmware, "--dtb-before-qemu7.2", "run", "--no-known-firmware",
                     "--bios", firmware)
    assert (done.returncode, done.stdout) == (5, "")
    assert "note" not in done.stderr


def test_options_already_given_are_not_noted(by_node_name: tuple[Path, Path]) -> None:
    firmware, kernel = by_node_name
    done = run_known(firmware, "--dtb-before-qemu7.2", "qemu", "--dtb-before-qemu7.2",
                     "-machine", "virt", "-nographic", "-bios", firmware, "-kernel", kernel)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, "uart found by its node's name\n", "")


def test_a_known_firmware_of_qemu_before_7_may_mret_with_no_pmp_entry(
        tmp_path: Path) -> None:
    """mret_no_pmp.S as firmware: its mret to S with no PMP entry is illegal on QEMU 7.2
    (exit 12); known as written for QEMU 6, it reaches S and powers off with 0."""
    firmware = build_baremetal([HERE / "mret_no_pmp.S"], ARCHES["rv64"],
                               tmp_path / "firmware.elf", listings=False)
    words = ("qemu", "-machine", "virt", "-nographic", "-bios", firmware,
             "-kernel", raw("raw_kernel", tmp_path))
    done = run_known(firmware, "--pmp-before-qemu7", *words)
    assert done.returncode == 0
    assert done.stderr == note(firmware, "--pmp-before-qemu7")
    done = run_known(firmware, "--pmp-before-qemu7", words[0], "--no-known-firmware",
                     *words[1:])
    assert done.returncode == 12


def test_a_file_of_a_known_size_with_other_bytes_is_not_known(tmp_path: Path) -> None:
    for entry in knownfirmware.KNOWN:
        other = tmp_path / "other.bin"
        other.write_bytes(bytes(entry.size))
        assert known_firmware(other) is None
    assert known_firmware(tmp_path / "missing.bin") is None


def test_a_known_file_is_found_by_size_and_digest(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    data = b"\x13\x00\x00\x00" * 16
    (tmp_path / "fw.bin").write_bytes(data)
    entry = KnownFirmware(len(data), hashlib.sha256(data).hexdigest(), "a test's", "QEMU 6",
                          (PMP_BEFORE_QEMU7,))
    monkeypatch.setattr(knownfirmware, "KNOWN", (entry,))
    assert known_firmware(tmp_path / "fw.bin") == entry


def test_the_course_entries_name_the_options_of_an_earlier_qemu() -> None:
    """The uCore course's 2022 RustSBI needs the PMP rule before QEMU 7.0, its 2023 and
    2024 RustSBI-QEMU the device tree before 7.2 (docs/other-kernels.md)."""
    assert [(k.size, k.options) for k in knownfirmware.KNOWN] == [
        (103_288, (PMP_BEFORE_QEMU7,)), (38_592, (DTB_BEFORE_QEMU72,))]
    for k in knownfirmware.KNOWN:
        assert len(k.digest) == 64 and int(k.digest, 16) >= 0
        assert set(k.options) <= set(OLDER_QEMU)
