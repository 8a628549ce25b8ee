"""Kernel mirrors and symbols from the kernel ELF: DWARF layouts (checked against the
compiler's own asm-offsets.h), the process table and trap frames read from a running
kernel, and addresses as symbol+offset and file:line."""

from __future__ import annotations

import pytest

from privlab.abi.csr import Csr
from privlab.abi.platform import parse_defines
from privlab.api import Session
from privlab.build.images import Images
from privlab.kernelinfo import ArrayType, DwarfTypes, KernelInfo, StructType
from privlab.kernelinfo.symbols import read_symtab
from privlab.machine.elfread import RawElf
from privlab.mmu import decode_satp


def test_trapframe_layout_matches_asm_offsets(images: Images) -> None:
    tf = DwarfTypes.load(images.kernel).struct("trapframe")
    offsets = {k[len("TF_"):].lower(): v for k, v in
               parse_defines(images.out_dir / "gen" / "asm-offsets.h").items()
               if k.startswith("TF_")}
    assert offsets and {m.name: m.offset for m in tf.members if m.name in offsets} == offsets


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_every_dwarf_global_is_where_the_symbol_table_puts_it(
        arch: str, images: Images, images32: Images) -> None:
    """clang merges globals into blocks and describes each as block + offset: the
    address must include the offset (`cpus` and `initproc` may share one block)."""
    kernel = (images if arch == "rv64" else images32).kernel
    symbols: dict[str, set[int]] = {}
    for addr, _size, name, _func in read_symtab(RawElf(kernel.read_bytes())):
        symbols.setdefault(name, set()).add(addr)
    globals_ = DwarfTypes.load(kernel).globals
    assert {"cpus", "initproc", "proc"} <= set(globals_)
    wrong = {n: hex(g.address) for n, g in globals_.items() if g.address not in symbols.get(n, ())}
    assert wrong == {}


def test_proc_table_global_is_an_array_of_struct_proc(images: Images) -> None:
    g = DwarfTypes.load(images.kernel).global_("proc")
    assert isinstance(g.type, ArrayType) and isinstance(g.type.elem, StructType)
    assert g.type.elem.name == "proc" and g.type.count > 1


def test_process_table_at_the_write_has_hello_running(hello: Session) -> None:
    hello.run_until_syscall("write")
    table = hello.processes()
    assert [(p.pid, p.state, p.name) for p in table.processes] == [(1, "RUNNING", "hello")]
    proc = table.processes[0]
    assert table.current == proc.slot
    assert proc.pagetable == int(decode_satp(hello.csr(Csr.SATP).value, 64).ppn.addr)


def test_process_roots_is_the_process_tables_answer(hello: Session) -> None:
    # privlab trace names address spaces with process_roots, which decodes only the
    # three fields it needs: the same mapping the full table gives.
    hello.run_until_syscall("write")
    table = hello.processes()
    kernel = hello.info.kernel_info
    assert kernel is not None
    roots = kernel.process_roots(hello.machine.memory)
    assert roots == {p.pagetable: (p.pid, p.name) for p in table.processes}
    assert roots == {int(decode_satp(hello.csr(Csr.SATP).value, 64).ppn.addr): (1, "hello")}


def test_trapframe_at_exit_holds_what_uservec_saved_at_the_write(hello: Session) -> None:
    hello.run_until_syscall("write")
    ecall = hello.events[-1]
    hello.run_until_syscall("exit")
    frame = hello.trapframe()
    assert frame is not None
    # usertrap() stores sepc + 4 for an ecall; the registers are the write's, as saved.
    assert frame.get_int("epc") == ecall.epc + 4
    assert (frame.get_int("a7"), frame.get_int("a1"), frame.get_int("a2")) == \
        (64, ecall.args[1], ecall.args[2])


def test_current_pid_reads_cpu_proc(hello: Session, images: Images) -> None:
    hello.run_until_syscall("write")
    assert KernelInfo.load(images.kernel).current_pid(hello.machine.memory) == (1, "hello")


def test_kernel_function_symbol_offset_and_line(hello: Session) -> None:
    addr = hello.info.address_of("usertrap", "kernel")
    assert addr is not None
    loc = hello.symbolize(addr + 4)
    assert (loc.image, loc.symbol, loc.offset) == ("kernel", "usertrap", 4)
    assert loc.file == "kernel/trap.c" and loc.line is not None and loc.name == "usertrap+0x4"


def test_trampoline_address_is_symbolized_through_the_page_table(hello: Session) -> None:
    hello.run_until_syscall("write")
    loc = hello.symbolize(hello.pc)     # the top virtual page, linked elsewhere
    assert (loc.symbol, loc.offset, loc.file) == ("uservec", 0, "kernel/trampoline.S")


def test_user_address_prefers_the_running_program(hello: Session) -> None:
    hello.run_until_syscall("write")
    loc = hello.symbolize(hello.events[-1].epc)
    assert loc.image == "hello" and loc.symbol == "write" and loc.offset > 0
