"""Lab 9 hidden tests: concurrent writers, and the shell's pipelines."""

import pytest

from privlab.grade import KernelUnderTest


@pytest.mark.points(2)
def test_four_writers_at_once(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_pipe", "writers", privlab_kernel.token)
    run.expect_pass()


@pytest.mark.points(2)
def test_a_pipeline_in_the_shell(privlab_kernel: KernelUnderTest) -> None:
    token = privlab_kernel.token
    run = privlab_kernel.run("sh", input=f"echo {token} {token} | cat | wc\nexit 0\n".encode())
    run.expect_exit(0)
    # wc counts one line, two words and the bytes echo wrote: "TOKEN TOKEN\n"
    assert f"1 2 {2 * len(token) + 2}" in run.lines()
