"""The lab solutions sit between `// BEGIN SOLUTION` and `// END SOLUTION` markers: with
every marked block removed, the kernel must still build, boot and pass the base tests,
and fail exactly the lab cases (the `lab_` usertests)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from harness.build.images import build_images
from harness.paths import KERNEL_DIR, USERLAND_DIR

from .qemu_boot import boot_qemu, needs_qemu

_SOLUTION = re.compile(r"[ \t]*// BEGIN SOLUTION\n.*?// END SOLUTION\n", re.S)
LAB_FILES = {"taskinfo.c", "mmap.c", "sched.c", "spawn.c", "vmprint.c", "backtrace.c", "trap.c",
             "trampoline.S"}


def _strip_solutions(kernel: Path) -> set[str]:
    changed = set()
    for path in kernel.rglob("*.[chS]"):
        text = path.read_text()
        stripped = _SOLUTION.sub("", text)
        assert "SOLUTION" not in stripped, f"unbalanced markers in {path.name}"
        if stripped != text:
            path.write_text(stripped)
            changed.add(path.name)
    return changed


@needs_qemu
def test_handout_builds_passes_base_tests_and_fails_lab_tests(tmp_path: Path) -> None:
    kernel, userland = tmp_path / "kernel", tmp_path / "userland"
    shutil.copytree(KERNEL_DIR, kernel)
    shutil.copytree(USERLAND_DIR, userland)
    assert _strip_solutions(kernel) == LAB_FILES
    images = build_images("rv64", kernel_dir=kernel, userland_dir=userland,
                          out_dir=tmp_path / "out", listings=False)
    boot = boot_qemu(images, bootargs="quiet init=usertests")
    results = dict((name, verdict) for verdict, name in
                   re.findall(r"^(PASS|FAIL) (\w+)$", boot.output, re.M))
    failed = {name for name, verdict in results.items() if verdict == "FAIL"}
    assert failed == {name for name in results if name.startswith("lab_")}
    assert len(failed) == 5
