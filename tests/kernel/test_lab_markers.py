"""The lab solutions sit between `// BEGIN SOLUTION` and `// END SOLUTION` markers: with
every marked block replaced by its `// HANDOUT:` stub, the kernel must still build,
boot and pass the base tests, and fail exactly the lab cases (the `lab_` usertests)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from privlab.build.images import build_images
from privlab.course.handout import strip_solutions
from privlab.errors import BadInput
from privlab.paths import KERNEL_DIR, USERLAND_DIR

from .qemu_boot import boot_qemu, needs_qemu

LAB_FILES = {"taskinfo.c", "mmap.c", "sched.c", "spawn.c", "vmprint.c", "backtrace.c", "trap.c",
             "fs.c", "sysfile.c", "pipe.c", "kalloc.c", "cow.c", "lazy.c",
             "alarm.c", "deadlock.c"}


def _strip_solutions(kernel: Path) -> set[str]:
    changed = set()
    for path in kernel.rglob("*.[chS]"):
        text = path.read_text()
        stripped = strip_solutions(text, path.name)
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


def test_a_block_becomes_its_handout_lines_uncommented_at_their_indentation() -> None:
    text = ("long f(int p) {\n  // BEGIN SOLUTION\n  return p + 1;\n  // HANDOUT: (void)p;\n"
            "  // HANDOUT: return -1;\n  // END SOLUTION\n}\n")
    assert strip_solutions(text) == "long f(int p) {\n  (void)p;\n  return -1;\n}\n"


def test_a_handout_line_outside_a_block_is_an_error() -> None:
    with pytest.raises(BadInput, match="unbalanced"):
        strip_solutions("int f(void) {\n  // HANDOUT: return -1;\n}\n", "f.c")


def test_the_reference_has_no_unreachable_fallback_after_a_solution() -> None:
    """A stub after an END marker would follow the solution's own return: dead code in
    the reference. Stubs go inside the block as `// HANDOUT:` lines."""
    dead = []
    for path in sorted(KERNEL_DIR.rglob("*.[chS]")):
        lines = path.read_text().splitlines()
        for n, line in enumerate(lines[:-1], 1):
            after = lines[n].strip()
            ended = line.strip().startswith("// END SOLUTION")
            if ended and after.startswith(("return", "(void)")):
                dead.append(f"{path.name}:{n + 1}: {after}")
    assert dead == []
