"""Lab 8 hidden tests: what unlink leaves on the disk."""

import pytest

from privlab.fs import DiskImage, check
from privlab.grade import KernelUnderTest


@pytest.mark.points(2)
def test_an_open_unlinked_file_is_readable_then_leaves_nothing(
        privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_link", "unlinked", privlab_kernel.token)
    run.expect_pass()
    data = run.disk_contents()
    findings = check(data)
    assert findings == [], "fsck: " + "; ".join(str(f) for f in findings)
    names = {e.name for e in DiskImage(data).listdir(DiskImage(data).lookup("/"))}
    assert "u" not in names


@pytest.mark.points(1)
def test_links_across_directories(privlab_kernel: KernelUnderTest) -> None:
    run = privlab_kernel.run("lab_link", "subdir", privlab_kernel.token)
    run.expect_pass()
