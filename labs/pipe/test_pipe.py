"""Lab 9: pipes (pipewrite and piperead in kernel/pipe.c)."""

import pytest

from privlab.grade import KernelUnderTest


@pytest.mark.points(3)
def test_a_message_arrives_whole_then_end_of_file(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_pipe", "basic", privlab_kernel.token)
    run.expect_pass()


@pytest.mark.points(3)
@pytest.mark.requires("test_a_message_arrives_whole_then_end_of_file")
def test_64_kib_arrive_in_order_through_a_512_byte_buffer(
        privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_pipe", "large", privlab_kernel.token)
    run.expect_pass()
    # A 512-byte ring cannot take 64 KiB without the writer waiting for the reader.
    assert len(run.trace.syscalls("read")) > 65536 // 512 // 2


@pytest.mark.points(1)
@pytest.mark.requires("test_a_message_arrives_whole_then_end_of_file")
def test_end_of_file_waits_for_every_write_end(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_pipe", "eof", privlab_kernel.token)
    run.expect_pass()


@pytest.mark.points(1)
def test_a_write_with_no_reader_returns_minus_one(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_pipe", "broken", privlab_kernel.token)
    run.expect_pass()
    assert [c.ret for c in run.trace.syscalls("write") if c.args[2] == 1] == [1, -1]
