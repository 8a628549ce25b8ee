"""Copy-on-write fork and lazy allocation (kernel/cow.c, kernel/lazy.c) under QEMU 7.2,
whose TLB is real: a kernel that changed a PTE and forgot that the hart may still hold
the old translation would show it there first. Each test program prints the same
console (kill lines with their sepc and stval included) on both machines."""

from __future__ import annotations

import pytest

from kernel.qemu_boot import boot_qemu, needs_qemu
from kernel.test_privlab_kernel import boot_privlab_console
from kernel.test_privlab_kernel import images as built_images


@needs_qemu
@pytest.mark.parametrize("program", [
    "lab_cow share tok 6",                 # shared, then copied, then W back
    "lab_cow readonly tok 268435456",      # two kill lines: the text, a PROT_READ page
    "lab_cow copyout tok",                 # the kernel's stores break COW
    "lab_lazy outside tok 3",              # four kill lines outside the heap
    "lab_lazy syscalls tok",               # copyin/copyout fault heap pages in
    "lab_lazy forkfirst tok 6",            # both labs at once
])
def test_the_same_console_on_qemu(program: str) -> None:
    bootargs = f"quiet init={program}"
    ours, status = boot_privlab_console(bootargs, "")
    reference = boot_qemu(built_images("rv64"), bootargs=bootargs, timeout=120)
    assert ours.endswith("PASS tok\n")
    assert (ours, status) == (reference.output, reference.status)
