"""Cheats that must score 0: a submission that reads the grader's files at build time,
and a kernel that forges the trusted test program's control flow."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from privlab.course.handout import strip_solutions
from privlab.course.submission_build import build_submission
from privlab.paths import REPO_ROOT

from .conftest import grade_lab, variant

REFERENCE = REPO_ROOT / "kernel" / "taskinfo.c"
HIDDEN = REPO_ROOT / "labs" / "taskinfo" / "hidden" / "test_taskinfo_hidden.py"

INCLUDE_THE_REFERENCE = f"""// The cheat: compile the grader's own solution in.
#if __has_include("{REFERENCE}")
#include "{REFERENCE}"
#else
#error "the grader's checkout is not readable"
#endif
"""

LEAK = f"""
// The cheat: the hidden tests' source in the kernel image, printed at every boot.
__asm__(".section .rodata\\n.globl leaked\\nleaked:\\n.incbin \\"{HIDDEN}\\"\\n.byte 0\\n"
        ".text\\n");
"""
BOOT = "  bootargs_parse(boot.bootargs);"
PRINT_THE_LEAK = "\n  { extern const char leaked[]; printf(\"%s\", leaked); }"


def _handout(root: Path) -> Path:
    """The taskinfo handout: the reference kernel with the lab's solution stripped."""
    sub = variant(root, {})
    taskinfo = sub / "kernel" / "taskinfo.c"
    taskinfo.write_text(strip_solutions(taskinfo.read_text()))
    return sub


def test_including_the_reference_from_the_graders_checkout_scores_zero(tmp_path: Path) -> None:
    sub = _handout(tmp_path)
    (sub / "kernel" / "taskinfo.c").write_text(INCLUDE_THE_REFERENCE)
    report = grade_lab("taskinfo", sub, hidden=True)
    assert not report.built
    assert report.score == 0, [(t.name, t.score) for t in report.tests]
    assert (f"the build tried to read {REFERENCE}, outside the submission"
            in report.build_output), report.build_output


@pytest.mark.parametrize("path", ["/proc/self/environ", "/etc/passwd",
                                  str(REPO_ROOT / "README.md")])
def test_the_build_reads_nothing_outside_the_submission_and_the_toolchain(
        tmp_path: Path, path: str) -> None:
    """The grader's environment (CI secrets), the machine's files, the checkout."""
    sub = _handout(tmp_path / "sub")
    taskinfo = sub / "kernel" / "taskinfo.c"
    taskinfo.write_text(f'#include "{path}"\n' + taskinfo.read_text())
    built = build_submission(sub, tmp_path / "slot")
    assert not built.ok
    assert built.output.startswith(f"the build tried to read {path}, outside the "
                                   "submission (refused: "), built.output


def test_incbin_of_the_hidden_tests_does_not_build(tmp_path: Path) -> None:
    sub = _handout(tmp_path)
    main = sub / "kernel" / "main.c"
    main.write_text(main.read_text().replace(BOOT, BOOT + PRINT_THE_LEAK, 1) + LEAK)
    report = grade_lab("taskinfo", sub, hidden=True)
    assert not report.built
    assert report.score == 0
    assert "test_counts_match_the_trace" not in report.build_output
    assert (f"the build tried to read {HIDDEN}, outside the submission"
            in report.build_output), report.build_output

# Both forging kernels find the test program's own stubs and the boot arguments' token.
STUB_AND_TOKEN = r"""static uintptr_t stub(pagetable_t pt, uint32_t li_a7) {
  for (uintptr_t va = USER_BASE; va < USER_BASE + 0x10000; va += 2) {
    uint32_t insn[2];
    if (copyin(pt, insn, va, sizeof insn) < 0)
      return 0;
    if (insn[0] == li_a7 && insn[1] == 0x00000073)
      return va;
  }
  return 0;
}

static int token(char *out) {
  for (const char *w = boot.bootargs; *w; w++) {
    int n = 0;
    while ((w[n] >= '0' && w[n] <= '9') || (w[n] >= 'a' && w[n] <= 'f'))
      n++;
    if (n == 16 && (w[n] == ' ' || w[n] == 0) && (w == boot.bootargs || w[-1] == ' ')) {
      memmove(out, w, 16);
      return 1;
    }
  }
  return 0;
}
"""


REPLAY = r"""#include "types.h"
#include "param.h"
#include "memlayout.h"
#include "riscv.h"
#include "proc.h"
#include "defs.h"

// The cheat: the first process's exit does not end it. The kernel finds the
// program's own write and exit stubs (li a7, N; ecall) in its text, puts
// "PASS <token>" (the 16-hex-digit word of the boot arguments) on its stack and
// resumes it in write(1, line, len), returning into exit. The second exit powers off
// with status 0, as an honest program's would.
""" + STUB_AND_TOKEN + r"""
long sys_exit(int status) {
  static int replayed;
  struct proc *p = myproc();
  char line[32] = "PASS ";
  if (p->pid == 1 && !replayed && token(line + 5)) {
    replayed = 1;
    uintptr_t write = stub(p->pagetable, 0x04000893), quit = stub(p->pagetable, 0x05d00893);
    struct trapframe *tf = p->trapframe;
    uintptr_t buf = (tf->sp - 64) & ~15UL;
    line[21] = '\n';
    if (write && quit && copyout(p->pagetable, buf, line, 22) == 0) {
      tf->epc = write;
      tf->ra = quit;
      tf->a1 = buf;
      tf->a2 = 22;
      return 1;        // into a0: the fd
    }
  }
  exit(replayed ? 0 : status);
}
"""


def test_an_exit_that_replays_a_pass_scores_zero(tmp_path: Path) -> None:
    """sys_task_info a stub (the handout's), sys_exit steering the trusted program
    into its own write stub: every test that expects a pass fails, saying where U
    resumed."""
    sub = _handout(tmp_path)
    sysproc = sub / "kernel" / "sysproc.c"
    text = sysproc.read_text()
    assert "long sys_exit(int status) { exit(status); }\n" in text
    (sub / "kernel" / "cheat.c").write_text(REPLAY)
    sysproc.write_text(text.replace("long sys_exit(int status) { exit(status); }\n", ""))
    report = grade_lab("taskinfo", sub, hidden=True)
    assert report.built, report.build_output
    graded = [t for t in report.tests if t.max_score]
    lab = [t for t in graded if not t.name.startswith("test_base_")]
    assert len(lab) == 8 and sum(t.score for t in lab) == 0, [(t.name, t.score) for t in lab]
    caught = [t for t in graded if "which never returns: the kernel made an exited process "
              "run again" in t.output]
    assert caught, [t.output for t in graded]
    assert re.search(r"U-mode resumed at 0x[0-9a-f]+ \(event #\d+, satp 0x[0-9a-f]+\) after "
                     r"its system call exit \(ecall at 0x[0-9a-f]+\)", caught[0].output)


SUBSTITUTE = """  struct args *a = args_alloc();
  if (a == 0)
    return 0;
  // The cheat: whatever init= asks for, run `echo PASS <token>` (echo writes its
  // line in one write and exits 0).
  for (int i = 0; i < nwords; i++) {
    const char *w = words[i];
    int n = 0;
    while ((w[n] >= '0' && w[n] <= '9') || (w[n] >= 'a' && w[n] <= 'f'))
      n++;
    if (n == 16 && w[n] == 0) {
      if (args_add(a, "echo") < 0 || args_add(a, "PASS") < 0 || args_add(a, w) < 0)
        return 0;
      return a;
    }
  }
"""


def test_running_another_trusted_program_in_the_tests_place_scores_zero(
        tmp_path: Path) -> None:
    """The kernel boots `echo PASS <token>` instead of the test program: a write of
    the line from U-mode and an exit(0), both honest, but not the test program's."""
    sub = _handout(tmp_path)
    bootargs = sub / "kernel" / "bootargs.c"
    head = "struct args *bootargs_init_args(void) {\n"
    text = bootargs.read_text()
    body = head + "  struct args *a = args_alloc();\n  if (a == 0)\n    return 0;\n"
    assert body in text
    bootargs.write_text(text.replace(body, head + SUBSTITUTE, 1))
    report = grade_lab("taskinfo", sub, hidden=True)
    assert report.built, report.build_output
    lab = [t for t in report.tests if t.max_score and not t.name.startswith("test_base_")]
    assert len(lab) == 8 and sum(t.score for t in lab) == 0, [(t.name, t.score) for t in lab]
    counts = report.by_name()["test_counts_exactly_the_calls_made"].output
    assert re.match(r"'PASS [0-9a-f]{16}' was written, but not by lab_taskinfo: the write's "
                    r"ecall at 0x[0-9a-f]+ is not in lab_taskinfo's write \(0x[0-9a-f]+\)",
                    counts), counts


STEER = r"""#include "types.h"
#include "param.h"
#include "memlayout.h"
#include "riscv.h"
#include "proc.h"
#include "defs.h"
#include "trapframe.h"

// The cheat: no task_info at all. Every return is at the ecall's next instruction,
// as the ABI says, but the registers are the kernel's: the first system call of the
// first process returns into its own write stub (ra) with write(1, "PASS <token>\n",
// 22) in a0..a2; that write returns 22 into its own getpid stub, and getpid returns
// 0 into its own exit stub.
""" + STUB_AND_TOKEN + r"""
void steer(struct proc *p) {
  static int step;
  char line[32] = "PASS ";
  struct trapframe *tf = p->trapframe;
  if (p->pid != 1 || step == 3)
    return;
  if (step == 0 && token(line + 5)) {
    uintptr_t write = stub(p->pagetable, 0x04000893);
    uintptr_t buf = (tf->sp - 256) & ~15UL;
    line[21] = '\n';
    if (write && copyout(p->pagetable, buf, line, 22) == 0) {
      tf->ra = write;
      tf->a0 = 1;
      tf->a1 = buf;
      tf->a2 = 22;
      step = 1;
    }
  } else if (step == 1) {
    uintptr_t getpid = stub(p->pagetable, 0x0ac00893);
    if (getpid) {
      tf->ra = getpid;
      step = 2;
    }
  } else if (step == 2) {
    uintptr_t quit = stub(p->pagetable, 0x05d00893);
    if (quit) {
      tf->ra = quit;
      tf->a0 = 0;
      step = 3;
    }
  }
}
"""
RESULT = "  p->trapframe->a0 = (uintptr_t)ret;\n"


def _steering(root: Path) -> Path:
    sub = _handout(root)
    syscall = sub / "kernel" / "syscall.c"
    text = syscall.read_text()
    assert RESULT in text
    syscall.write_text(text.replace(RESULT, RESULT + "  steer(p);\n", 1)
                       .replace('#include "trapframe.h"\n',
                                '#include "trapframe.h"\nvoid steer(struct proc *p);\n', 1))
    (sub / "kernel" / "cheat.c").write_text(STEER)
    return sub


def test_steering_the_program_through_its_own_stubs_scores_zero(tmp_path: Path) -> None:
    """Every return at the ecall's next instruction, but with the kernel's ra and
    a0..a2: the program's own write stub prints the PASS line and its own exit stub
    exits 0. The register check names the register, the call and both values."""
    report = grade_lab("taskinfo", _steering(tmp_path), hidden=True)
    assert report.built, report.build_output
    lab = [t for t in report.tests if t.max_score and not t.name.startswith("test_base_")]
    assert len(lab) == 8 and sum(t.score for t in lab) == 0, [(t.name, t.score) for t in lab]
    caught = [t for t in lab if "the kernel changed the program's registers" in t.output]
    assert caught, [t.output for t in lab]
    assert re.search(r"U-mode resumed at (0x[0-9a-f]+) \(event #\d+\) after its system call "
                     r"\w+ \(ecall at 0x[0-9a-f]+\) with ra \(x1\) = 0x[0-9a-f]+, but it was "
                     r"0x[0-9a-f]+ at the trap \(and \d+ more registers?\)", caught[0].output), \
        caught[0].output
