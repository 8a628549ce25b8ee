"""Inside a handout, every command builds and boots the handout's kernel.

A vmprint handout whose `kernel/vmprint.c` is the student's own: it prints its own
header line and makes an SBI call of its own from `student_was_here`, a function the
bundled kernel does not have. Each command, run in the handout (or given `--src`),
must show that kernel: its console line, its trap in the trace, its symbol. The first
line on stderr names the sources when they are not the bundled ones."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from privlab.cli.main import main
from privlab.paths import REPO_ROOT

STUDENT_VMPRINT = """\
#include "defs.h"
#include "riscv.h"
#include "sbi.h"

__attribute__((noinline)) void student_was_here(pagetable_t pt) {
  register uintptr_t a0 asm("a0") = SBI_EXT_DBCN;
  register uintptr_t a6 asm("a6") = SBI_BASE_PROBE_EXT;
  register uintptr_t a7 asm("a7") = SBI_EXT_BASE;
  asm volatile("ecall" : "+r"(a0) : "r"(a6), "r"(a7) : "a1", "memory");
  printf("student vmprint %p\\n", (void *)pt);
}

void vmprint(pagetable_t pt) { student_was_here(pt); }
"""


def privlab(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "privlab", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=300, check=False)


def using(root: Path) -> str:
    return f"privlab: using {root}: its kernel/ and userland/, not privlab's bundled ones\n"


@pytest.fixture(scope="module")
def handout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("student") / "vmprint"
    assert main(["lab", "handout", "vmprint", "-o", str(root)]) == 0
    (root / "kernel" / "vmprint.c").write_text(STUDENT_VMPRINT)
    return root.resolve()


@pytest.fixture(scope="module")
def built(handout: Path) -> Path:
    """`privlab build` in the handout builds it, into its own build/."""
    p = privlab("build", "--no-listings", cwd=handout / "kernel")   # from a subdirectory
    assert p.returncode == 0, p.stderr
    assert p.stderr == using(handout)
    assert re.fullmatch(rf"rv64: {re.escape(str(handout))}/build/rv64 \(\d+ user programs, "
                        r"[\d.]+ s\)", p.stdout.splitlines()[0])
    assert (handout / "build" / "rv64" / "kernel.elf").is_file()
    return handout


def test_run_boots_the_handouts_kernel(built: Path) -> None:
    p = privlab("run", "--boot-flag", "vmprint", "--user", "hello", cwd=built)
    assert (p.returncode, p.stderr) == (0, using(built))
    assert re.fullmatch(r"student vmprint 0x[0-9a-f]+\nHello, world!\n", p.stdout)


def test_src_names_the_project_from_anywhere(built: Path, tmp_path: Path) -> None:
    p = privlab("run", "--src", str(built), "--boot-flag", "vmprint", "--user", "hello",
                cwd=tmp_path)
    assert (p.returncode, p.stderr) == (0, using(built))
    assert p.stdout.startswith("student vmprint 0x")


def test_trace_shows_the_handouts_own_trap(built: Path) -> None:
    p = privlab("trace", "--boot-flag", "vmprint", "--cause", "supervisor_ecall",
                "--user", "hello", cwd=built)
    assert (p.returncode, p.stderr) == (0, using(built))
    assert re.search(r"supervisor_ecall  sbi BASE\.PROBE_EXT  kernel  at student_was_here\+0x",
                     p.stdout), p.stdout


@pytest.mark.parametrize("command", [["inspect"], ["pagetable"],
                                     ["translate", "student_was_here", "--priv", "S"]])
def test_the_inspectors_stop_in_the_handouts_code(built: Path, command: list[str]) -> None:
    p = privlab(*command, "--boot-flag", "vmprint", "--at", "symbol:student_was_here",
                cwd=built)
    assert (p.returncode, p.stderr) == (0, using(built))
    # translate first says where it looked, then walks
    first = p.stdout.splitlines()[1 if command[0] == "translate" else 0]
    assert {"inspect": "At symbol:student_was_here: S-mode  pc 0x",
            "pagetable": "Page table at symbol:student_was_here",
            "translate": "translate 0x"}[command[0]] in first
    if command[0] == "inspect":
        assert re.search(r"where the hart is: pc student_was_here\s+kernel/vmprint\.c:\d+",
                         p.stdout)


def test_outside_any_project_the_bundled_kernel_runs(tmp_path: Path) -> None:
    """The same stop in privlab's own kernel: no such symbol, and nothing announced."""
    p = privlab("inspect", "--at", "symbol:student_was_here", cwd=tmp_path)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == "privlab: no symbol 'student_was_here' in the loaded images\n"
    p = privlab("run", "--user", "hello", cwd=REPO_ROOT / "docs")   # privlab's own tree
    assert (p.returncode, p.stdout, p.stderr) == (0, "Hello, world!\n", "")


def test_src_without_a_kernel_is_one_line(tmp_path: Path) -> None:
    p = privlab("run", "--src", str(tmp_path), "--user", "hello", cwd=tmp_path)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == f"privlab: --src {tmp_path}: no kernel/ directory in it\n"
    p = privlab("build", "--src", str(tmp_path / "nope"), cwd=tmp_path)
    assert (p.returncode, p.stderr) == (2, f"privlab: --src {tmp_path / 'nope'}: no such "
                                           "directory\n")
