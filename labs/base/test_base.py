"""Base system: what every lab's kernel must still do. A handout passes these."""

import pytest

from privlab.abi.csr import Exc, Priv
from privlab.grade import KernelUnderTest

pytestmark = pytest.mark.points(1)


def test_base_runs_a_program_with_arguments(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("hello", privlab_kernel.token, "second")
    run.expect_output(rf"^argv\[1\] = {privlab_kernel.token}$")
    run.expect_output(r"^argv\[2\] = second$")
    run.expect_exit(0)


def test_base_fork_exec_and_exit_status(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("usertests", "exec_hello", "exit_status", "fork_copies_memory")
    run.expect_output(r"^usertests: 3 passed, 0 failed$")
    run.expect_exit(0)


def test_base_user_faults_kill_the_process_not_the_kernel(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("usertests", "kill_kernel_read", "kill_sret", "kill_jump0",
                             "bad_pointers")
    run.expect_output(r"^usertests: 4 passed, 0 failed$")
    run.expect_exit(0)
    killed = [t for t in run.trace.traps(interrupt=False) if t.priv_from == Priv.U
              and t.code != Exc.USER_ECALL]
    assert len(killed) >= 3, "each hostile program should have trapped into the kernel"


def test_base_shell_runs_ls_which_stats_every_file(privlab_kernel: KernelUnderTest) -> None:
    """The shell reads a command line, forks and execs ls, which opens the directory
    and fstats each entry (a kernel without fstat prints `ls: .: cannot stat`)."""
    run = privlab_kernel.run("sh", input=b"ls\nexit\n")
    run.expect_output(r"^usertests +file +\d+ +\d+$")
    run.expect_output(r"^\. +dir +1 +\d+$")
    assert "cannot" not in run.output, run.output
    run.expect_exit(0)
