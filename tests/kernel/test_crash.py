"""Crash consistency of the kernel's file system: stop the machine at many
deterministic instants while `fscrash` works (each stop is a power cut: the disk
holds exactly the writes that completed), then check each disk as the kernel would
find it on the next boot (fsck after log replay), and boot the kernel on some of
them to see it recover. Every step fscrash reported done before the cut must be on
the disk, whole."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from built_images import built

from privlab.boot import user_boot
from privlab.build.images import Images
from privlab.devices import Console
from privlab.devices.disk import Drive
from privlab.fs.fsck import check, replay_log
from privlab.fs.image import DiskImage
from privlab.machine import Machine, RunResult, Stop, load_elf
from privlab.machine.assemble import boot_system

STEPS = 12
INSTANTS = 300


def images() -> Images:
    return built("rv64")


def boot(disk: Path, prog: str, *args: str) -> Machine:
    im = images()
    ub = user_boot(im.users, prog, args)
    m = Machine(64, console=Console(), drive=Drive(disk))
    boot_system(m, load_elf(im.firmware), load_elf(im.kernel), ub.initrd, ub.bootargs)
    return m


def fresh_image(path: Path) -> Path:
    shutil.copy(images().disk, path)
    return path


def done_steps(console: str) -> int:
    return len(re.findall(r"^step \d+ done$", console, re.M))


def pattern(i: int) -> bytes:
    return bytes(ord("a") + (i + k) % 26 for k in range(1500 + 97 * i))


def check_committed(img: DiskImage, done: int) -> None:
    """Steps 0..done-1 are on the disk: d<i%4>/f<i> whole, l<i> only for the last two."""
    for i in range(done):
        assert img.read_path(f"/d{i % 4}/f{i}") == pattern(i), f"step {i}"
    names = {e.name for e in img.listdir(img.lookup("/"))}
    for i in range(max(0, done - 2)):
        assert f"l{i}" not in names, f"l{i} unlinked by step {i + 2}"


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, int]:
    """(0, instret at the end of an uncut run)."""
    disk = fresh_image(tmp_path_factory.mktemp("crash") / "full.img")
    m = boot(disk, "fscrash", str(STEPS))
    r = m.run(max_insns=2_000_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), m.console.text()[-500:]
    assert done_steps(m.console.text()) == STEPS
    assert check(disk.read_bytes()) == []
    check_committed(DiskImage.open(disk), STEPS)
    return 0, r.instret


def test_fscrash_leaves_a_consistent_disk_with_every_step(full_run: tuple[int, int]) -> None:
    start, end = full_run
    assert end > start


def test_a_cut_at_any_of_many_instants_loses_no_committed_step(
        full_run: tuple[int, int], tmp_path: Path) -> None:
    start, end = full_run
    disk = fresh_image(tmp_path / "live.img")
    m = boot(disk, "fscrash", str(STEPS))
    instants = [start + (end - start) * k // INSTANTS for k in range(1, INSTANTS)]
    mid_transaction = 0
    for t in instants:
        r: RunResult = m.run(max_insns=t - m.hart.state.instret)
        assert r.stop is Stop.BUDGET, r.message
        data = disk.read_bytes()
        if DiskImage(data).log_header().n > 0:
            mid_transaction += 1
        # As the next boot sees it: the log replayed (fsck names a committed
        # transaction it replays; that is the expected state mid-commit).
        findings = [f for f in check(data) if f.code != "log-committed"]
        assert findings == [], f"cut at instret {t}: {[str(f) for f in findings]}"
        assert check(replay_log(data), replay=False) == []
        check_committed(DiskImage(replay_log(data)), done_steps(m.console.text()))
    # The cuts must have hit the window between a commit and its install at least
    # once, or recovery was never exercised.
    assert mid_transaction > 0


def test_the_kernel_recovers_a_committed_transaction_at_boot(
        full_run: tuple[int, int], tmp_path: Path) -> None:
    """Cut inside a commit (the header written, the blocks not yet home), boot again:
    the kernel says it recovers and the disk is then clean without help."""
    start, end = full_run
    disk = fresh_image(tmp_path / "cut.img")
    m = boot(disk, "fscrash", str(STEPS))
    step = max(1, (end - start) // 4000)
    t = start
    while DiskImage(disk.read_bytes()).log_header().n == 0:
        t += step
        assert t < end, "no instant with a committed, uninstalled transaction"
        m.run(max_insns=t - m.hart.state.instret)
    done = done_steps(m.console.text())
    saved = tmp_path / "saved.img"
    shutil.copy(disk, saved)
    again = boot(disk, "hello")
    r = again.run(max_insns=500_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0)
    assert re.search(r"^\[kernel\] log: recovering a committed transaction of \d+ blocks$",
                     again.console.text(), re.M)
    data = disk.read_bytes()
    assert DiskImage(data).log_header().n == 0
    assert data == replay_log(saved.read_bytes()) or check(data) == []
    assert check(data) == []
    check_committed(DiskImage(data), done)
