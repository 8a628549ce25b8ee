"""mmap(PROT_WRITE) maps exactly W without R, the encoding the spec reserves (4.3.1):
the hart page-faults on every access to such a page, so the process that touches it
is killed, and the kernel's copyin/copyout refuse it too, so a system call given a
buffer there returns -1 rather than reading or writing a page the user cannot.
`lab_mmap writeonly` does all of it (userland/lab_mmap.c)."""

from __future__ import annotations

import pytest

from kernel.qemu_boot import boot_qemu, needs_qemu
from kernel.test_privlab_kernel import boot_privlab_console, run_user
from kernel.test_privlab_kernel import images as built_images
from privlab.abi.csr import Exc, Priv
from privlab.trace import TrapEvent

ADDR = 0x1000_0000
PAGE_FAULTS = {Exc.EXEC_PAGE_FAULT, Exc.LOAD_PAGE_FAULT, Exc.STORE_PAGE_FAULT}


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_write_only_page_refuses_syscalls_and_kills_on_store_and_on_load(arch: str) -> None:
    m, r = run_user(arch, "lab_mmap", "writeonly", "tok", str(ADDR))
    user_faults = [e for e in m.events if isinstance(e, TrapEvent) and not e.interrupt
                   and e.priv_from == Priv.U and e.code in PAGE_FAULTS]
    at_addr = [e for e in user_faults if e.tval == ADDR]
    assert [(e.code, e.tval) for e in at_addr] == [
        (Exc.STORE_PAGE_FAULT, ADDR), (Exc.LOAD_PAGE_FAULT, ADDR)]
    # The others are copy-on-write stores (a child's first stores to its shared stack),
    # which the kernel resolves (kernel/cow.c).
    assert all(e.code == Exc.STORE_PAGE_FAULT for e in user_faults if e.tval != ADDR)
    store, load = at_addr
    assert m.console.text() == (
        f"[kernel] pid 2 (lab_mmap) killed: store_page_fault sepc={store.epc:#x} "
        f"stval={ADDR:#x}\n"
        f"[kernel] pid 3 (lab_mmap) killed: load_page_fault sepc={load.epc:#x} "
        f"stval={ADDR:#x}\n"
        "PASS tok\n")
    assert (r.stop.name, r.exit_status) == ("HALT", 0)
    kernel_faults = [e for e in m.events if isinstance(e, TrapEvent) and not e.interrupt
                     and e.priv_from == Priv.S and e.code in PAGE_FAULTS]
    assert kernel_faults == []  # write, get_time and read returned -1 without touching it


@needs_qemu
def test_write_only_page_gives_the_same_console_on_qemu() -> None:
    """QEMU 7.2 faults on W without R too: the same two kill lines, the same PASS."""
    bootargs = f"quiet init=lab_mmap writeonly tok {ADDR}"
    ours, status = boot_privlab_console(bootargs, "")
    reference = boot_qemu(built_images("rv64"), bootargs=bootargs)
    assert "killed: store_page_fault" in ours and ours.endswith("PASS tok\n")
    assert (ours, status) == (reference.output, reference.status)
