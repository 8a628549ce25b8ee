"""Unit tests of what the harness hands the kernel: initrd, device tree, bootargs, and
the syscall table generator."""

from __future__ import annotations

import mmap
import shutil
import subprocess
from pathlib import Path

import fdt
import pytest
from machine.asm import build_asm

from privlab.abi.syscall_table import (
    generate_kernel_header,
    generate_user_header,
    generate_user_stubs,
    load_syscall_table,
    parse_syscall_table,
)
from privlab.boot.bootargs import make_bootargs, user_boot
from privlab.boot.dtb import build_dtb, parse_dtb_summary
from privlab.boot.initrd import initrd_load_address, pack_initrd, unpack_initrd
from privlab.build.images import Images
from privlab.errors import BadInput
from privlab.machine import Machine

# ---- initrd ---------------------------------------------------------------------------


def test_initrd_round_trips_names_and_bytes() -> None:
    files = {"hello": b"\x7fELF" + bytes(range(200)), "a": b"", "sh": b"xyz"}
    blob = pack_initrd(files)
    assert {e.name: e.data for e in unpack_initrd(blob)} == files
    assert all(e.mode == 0o100755 for e in unpack_initrd(blob))


def test_initrd_is_newc_with_4_byte_alignment_and_a_trailer() -> None:
    blob = pack_initrd({"abc": b"12345"})
    assert blob.startswith(b"070701")
    assert len(blob) % 4 == 0
    header = blob[:110]
    assert int(header[6 + 8 * 6:6 + 8 * 7], 16) == 5      # filesize
    assert int(header[6 + 8 * 11:6 + 8 * 12], 16) == 4    # namesize with NUL
    data_at = (110 + 4 + 3) & ~3
    assert blob[data_at:data_at + 5] == b"12345"
    assert b"TRAILER!!!\0" in blob[-128:]


def test_initrd_is_deterministic() -> None:
    assert pack_initrd({"x": b"1"}) == pack_initrd({"x": b"1"})


@pytest.mark.parametrize("name", ["", "a/b", "TRAILER!!!", "x" * 64])
def test_initrd_rejects_bad_names(name: str) -> None:
    with pytest.raises(BadInput):
        pack_initrd({name: b""})


def test_initrd_unpack_rejects_garbage() -> None:
    with pytest.raises(BadInput):
        unpack_initrd(b"not a cpio archive" * 10)


def test_initrd_load_address_matches_qemu() -> None:
    assert initrd_load_address(0x8000_0000, 128 << 20, 0x8020_0000) == 0x8420_0000
    assert initrd_load_address(0x8000_0000, 1 << 30, 0x8020_0000) == 0x8820_0000

# ---- device tree ----------------------------------------------------------------------


def test_dtb_round_trips_what_the_kernel_reads() -> None:
    blob = build_dtb(0x8000_0000, 128 << 20, "quiet init=hello", (0x8420_0000, 0x8430_0000), 64)
    assert parse_dtb_summary(blob) == {
        "ram_base": 0x8000_0000, "ram_size": 128 << 20, "timebase_hz": 10_000_000,
        "bootargs": "quiet init=hello", "initrd_start": 0x8420_0000, "initrd_end": 0x8430_0000}


def test_dtb_describes_the_virt_devices() -> None:
    tree = fdt.parse_dtb(build_dtb(0x8000_0000, 64 << 20, "", None, 64))
    cpu = tree.get_node("/cpus/cpu@0")
    assert cpu.get_property("riscv,isa").value.startswith("rv64ima")
    assert cpu.get_property("mmu-type").value == "riscv,sv48"
    assert tree.get_node("/cpus/cpu@0/interrupt-controller").exist_property("interrupt-controller")
    assert tree.get_property("compatible", "/soc/serial@10000000").value == "ns16550a"
    assert "riscv,clint0" in tree.get_property("compatible", "/soc/clint@2000000").data
    assert "sifive,test0" in tree.get_property("compatible", "/soc/test@100000").data
    assert tree.get_property("stdout-path", "/chosen").value == "/soc/serial@10000000"
    assert not tree.get_node("/chosen").exist_property("linux,initrd-start")


def test_dtb_before_qemu_7_2_names_the_uart_node_uart() -> None:
    """QEMU 7.0 and 7.1 named the UART's node uart@; 7.2 serial@. Only the name (and
    the stdout-path that names it) differs."""
    new = fdt.parse_dtb(build_dtb(0x8000_0000, 64 << 20, "", None, 64))
    old = fdt.parse_dtb(build_dtb(0x8000_0000, 64 << 20, "", None, 64, before_qemu72=True))
    assert [n.name for n in old.get_node("/soc").nodes if "10000000" in n.name] == \
        ["uart@10000000"]
    assert not new.exist_node("/soc/uart@10000000")
    assert old.get_property("stdout-path", "/chosen").value == "/soc/uart@10000000"
    assert old.get_node("/soc/uart@10000000").props == new.get_node("/soc/serial@10000000").props
    names = [n.name for n in old.get_node("/soc").nodes]
    assert names == [n.name.replace("serial@", "uart@") for n in new.get_node("/soc").nodes]


def test_dtb_lists_eight_virtio_transports_as_qemu_7_2_does() -> None:
    tree = fdt.parse_dtb(build_dtb(0x8000_0000, 64 << 20, "", None, 64))
    names = [n.name for n in tree.get_node("/soc").nodes if n.name.startswith("virtio")]
    assert names == [f"virtio_mmio@1000{i}000" for i in range(8, 0, -1)]
    node = tree.get_node("/soc/virtio_mmio@10001000")
    assert node.get_property("compatible").value == "virtio,mmio"
    assert list(node.get_property("reg").data) == [0, 0x1000_1000, 0, 0x1000]


PLIC_PROPS = ("compatible", "reg", "riscv,ndev", "interrupts-extended", "#interrupt-cells",
              "#address-cells", "interrupt-controller", "phandle")


def _props(node: fdt.Node, names: tuple[str, ...]) -> dict[str, object]:
    out: dict[str, object] = {}
    for n in names:
        prop = node.get_property(n) if node.exist_property(n) else None
        out[n] = None if prop is None else list(getattr(prop, "data", [True]))
    return out


def _qemus_dtb(xlen: int, tmp_path: Path) -> fdt.FDT:
    """The device tree QEMU 7.2's virt board generates (`-machine virt,dumpdtb=`)."""
    qemu = shutil.which(f"qemu-system-riscv{xlen}")
    if qemu is None:
        pytest.skip(f"qemu-system-riscv{xlen} is not installed")
    dumped = tmp_path / "virt.dtb"
    subprocess.run([qemu, "-machine", f"virt,dumpdtb={dumped}", "-bios", "none",
                    "-nographic"], capture_output=True, timeout=60, check=True)
    return fdt.parse_dtb(dumped.read_bytes())


@pytest.mark.parametrize("xlen", [64, 32])
def test_dtb_plic_and_uart_interrupt_match_qemu(xlen: int, tmp_path: Path) -> None:
    theirs = _qemus_dtb(xlen, tmp_path)
    ours = fdt.parse_dtb(build_dtb(0x8000_0000, 128 << 20, "", None, xlen))
    plic, serial = "/soc/plic@c000000", "/soc/serial@10000000"
    assert _props(ours.get_node(plic), PLIC_PROPS) == _props(theirs.get_node(plic), PLIC_PROPS)
    intc = "/cpus/cpu@0/interrupt-controller"
    assert _props(ours.get_node(intc), ("phandle",)) == _props(theirs.get_node(intc),
                                                              ("phandle",))
    uart = ("interrupts", "interrupt-parent")
    assert _props(ours.get_node(serial), uart) == _props(theirs.get_node(serial), uart)


@pytest.mark.parametrize("xlen", [64, 32])
def test_dtb_root_names_the_board_as_qemu_does(xlen: int, tmp_path: Path) -> None:
    """Firmware prints the root's model as the platform's name (OpenSBI's "Platform
    Name", RustSBI-QEMU's): the same words on privlab as on QEMU 7.2."""
    ours = fdt.parse_dtb(build_dtb(0x8000_0000, 128 << 20, "", None, xlen))
    assert (ours.get_property("model").value, ours.get_property("compatible").value) == (
        "riscv-virtio,qemu", "riscv-virtio")
    theirs = _qemus_dtb(xlen, tmp_path)
    for name in ("model", "compatible"):
        assert ours.get_property(name).value == theirs.get_property(name).value


@pytest.mark.parametrize("xlen", [64, 32])
def test_dtb_names_the_harts_extensions_as_qemu_does_without_h(xlen: int,
                                                             tmp_path: Path) -> None:
    """QEMU 7.2's string for its default cpu without the hypervisor, whose misa equals
    privlab's hart's; the single letters are misa's (S and U left out). The mmu-type
    too: Sv48 on RV64 (vm_deeper.S checks the hart walks it), Sv32 on RV32."""
    from privlab.machine.assemble import new_bare
    from privlab.machine.loader import load_elf

    ours = fdt.parse_dtb(build_dtb(0x8000_0000, 128 << 20, "", None, xlen))
    isa = ours.get_property("riscv,isa", "/cpus/cpu@0").value
    assert isa == f"rv{xlen}imafdc_zicsr_zifencei_zihintpause_zba_zbb_zbc_zbs_sstc"
    elf = build_asm("PASS", f"rv{xlen}")
    misa = new_bare(load_elf(elf)).hart.csr(0x301)
    letters = {chr(ord("a") + i) for i in range(26) if misa >> i & 1}
    assert set(isa[4:].split("_")[0]) == letters - {"s", "u"}
    qemu = shutil.which(f"qemu-system-riscv{xlen}")
    if qemu is None:
        pytest.skip(f"qemu-system-riscv{xlen} is not installed")
    dumped = tmp_path / "virt.dtb"
    subprocess.run([qemu, "-machine", f"virt,dumpdtb={dumped}", "-cpu", f"rv{xlen},h=false",
                    "-bios", "none", "-nographic"], capture_output=True, timeout=60, check=True)
    theirs = fdt.parse_dtb(dumped.read_bytes())
    for name in ("riscv,isa", "mmu-type"):
        assert ours.get_property(name, "/cpus/cpu@0").value == \
            theirs.get_property(name, "/cpus/cpu@0").value


def test_dtb_for_rv32_says_sv32() -> None:
    tree = fdt.parse_dtb(build_dtb(0x8000_0000, 64 << 20, "", None, 32))
    assert tree.get_property("mmu-type", "/cpus/cpu@0").value == "riscv,sv32"
    assert tree.get_property("riscv,isa", "/cpus/cpu@0").value.startswith("rv32")


def test_dtb_rejects_an_initrd_outside_ram() -> None:
    with pytest.raises(BadInput):
        build_dtb(0x8000_0000, 1 << 20, "", (0x9000_0000, 0x9000_1000), 64)

# ---- bootargs -------------------------------------------------------------------------


def test_bootargs_format() -> None:
    assert make_bootargs() == ""
    assert make_bootargs("hello", ["a", "b"], flags=["quiet"]) == "quiet init=hello a b"
    with pytest.raises(BadInput):
        make_bootargs("hello", ["two words"])
    with pytest.raises(BadInput):
        make_bootargs("hello", ["x" * 300])


def test_user_boot_adds_an_outside_elf_to_the_initrd(images: Images, tmp_path: Path) -> None:
    elf = tmp_path / "mytest.elf"
    elf.write_bytes(images.users["hello"].read_bytes())
    boot = user_boot(images.users, str(elf), ["1"])
    assert boot.bootargs == "quiet init=mytest 1"
    assert "mytest" in {e.name for e in unpack_initrd(boot.initrd)}
    assert user_boot(images.users, "hello").bootargs == "quiet init=hello"
    with pytest.raises(BadInput):
        user_boot(images.users, str(tmp_path / "missing"))

def test_a_boot_that_adds_nothing_loads_the_builds_initrd(images: Images,
                                                          tmp_path: Path) -> None:
    """The build packed exactly the bundled programs, as user_boot packs them: given
    that initrd, a boot of a bundled program (or of the shell) reads no program."""
    assert images.initrd.read_bytes() == user_boot(images.users, "hello").initrd
    gone = {**images.users, "hello": tmp_path / "deleted.elf"}   # unreadable if read
    built = user_boot(gone, "hello", ["x"], initrd=images.initrd)
    assert built.initrd == images.initrd.read_bytes()
    assert built.bootargs == "quiet init=hello x"
    assert user_boot(gone, None, initrd=images.initrd).initrd == built.initrd
    with pytest.raises(FileNotFoundError):
        user_boot(gone, "hello")                                  # packs: reads each


def test_the_builds_initrd_is_mapped_for_the_machine_not_read(images: Images) -> None:
    """A machine loads the build's initrd from a private mapping of the file: the same
    bytes land in guest RAM, and nothing written to the mapping reaches the file."""
    boot = user_boot(images.users, "hello", initrd=images.initrd)
    image = boot.initrd_image()
    assert isinstance(image, mmap.mmap)
    on_disk = images.initrd.read_bytes()
    assert image[:] == on_disk == boot.initrd
    m = Machine(64)
    start = m.memory.ram_base + 0x100000
    m.memory.write(start, image)
    assert m.memory.read(start, len(on_disk)) == on_disk
    image[:4] = b"XXXX"                    # a private copy: the build's file stays
    assert images.initrd.read_bytes() == on_disk


def test_a_packed_initrd_is_handed_over_as_its_bytes(images: Images, tmp_path: Path) -> None:
    elf = tmp_path / "mytest.elf"
    elf.write_bytes(images.users["hello"].read_bytes())
    boot = user_boot(images.users, str(elf), initrd=images.initrd)
    assert boot.built is None
    assert boot.initrd_image() is boot.packed == boot.initrd


def test_an_empty_built_initrd_maps_to_no_bytes(images: Images, tmp_path: Path) -> None:
    """mmap cannot map an empty file: an empty initrd is b"" (a machine then loads none)."""
    empty = tmp_path / "initrd.cpio"
    empty.write_bytes(b"")
    assert user_boot(images.users, "hello", initrd=empty).initrd_image() == b""


def test_a_boot_that_adds_a_program_packs_its_own_initrd(images: Images,
                                                         tmp_path: Path) -> None:
    stale = tmp_path / "initrd.cpio"
    stale.write_bytes(b"not the build's")
    elf = tmp_path / "mytest.elf"
    elf.write_bytes(images.users["hello"].read_bytes())
    for boot in (user_boot(images.users, str(elf), initrd=stale),
                 user_boot(images.users, "mytest", add=[elf], initrd=stale)):
        names = [e.name for e in unpack_initrd(boot.initrd)]
        assert names == [*sorted(images.users), "mytest"]


# ---- syscall table --------------------------------------------------------------------


ABI = {"dup": 23, "mkdirat": 34, "unlinkat": 35, "linkat": 37, "chdir": 49, "openat": 56,
       "close": 57, "pipe2": 59, "getdents64": 61, "fstat": 80, "read": 63, "write": 64,
       "exit": 93, "yield": 124, "kill": 129, "sigaction": 134, "sigprocmask": 135,
       "sigreturn": 139, "set_priority": 140,
       "get_time": 169, "getpid": 172, "getppid": 173, "sbrk": 214, "munmap": 215,
       "fork": 220, "exec": 221, "mmap": 222, "waitpid": 260, "spawn": 400, "task_info": 410,
       "sigalarm": 411, "lockstat": 412, "freemem": 413,
       "sleep": 101, "gettid": 178, "thread_create": 460, "waittid": 462, "mutex_create": 463,
       "mutex_lock": 464, "mutex_unlock": 466, "semaphore_create": 467, "semaphore_up": 468,
       "semaphore_down": 470, "condvar_create": 471, "condvar_signal": 472,
       "condvar_wait": 473, "enable_deadlock_detect": 469}


def test_syscall_table_has_the_abi_numbers() -> None:
    table = load_syscall_table()
    assert {c.name: c.number for c in table} == ABI
    write = next(c for c in table if c.name == "write")
    assert write.args == [("fd", "int"), ("buf", "const char *"), ("len", "size_t")]
    assert write.returns == "ssize_t"


def test_syscall_generators_emit_numbers_dispatch_and_stubs() -> None:
    table = load_syscall_table()
    kernel = generate_kernel_header(table)
    assert "#define SYS_write          64" in kernel
    assert "long sys_write(int fd, uintptr_t buf, size_t len);" in kernel
    assert "return sys_write((int)tf->a0, (uintptr_t)tf->a1, (size_t)tf->a2);" in kernel
    assert '[SYS_write] = { "write", 3, call_write },' in kernel
    stubs = generate_user_stubs(table)
    assert "write:\n    li a7, 64\n    ecall\n    ret" in stubs
    user = generate_user_header(table)
    assert "ssize_t write(int fd, const char *buf, size_t len);" in user
    assert "__attribute__((noreturn)) void exit(int status);" in user


@pytest.mark.parametrize("text", ["64 write(int fd) -> long\n64 other(void) -> int",
                                  "x write(int fd) -> long",
                                  "1 f(int a, int b, int c, int d, int e, int f, int g) -> int"])
def test_syscall_table_errors_name_the_problem(text: str) -> None:
    with pytest.raises(BadInput):
        parse_syscall_table(text)


@pytest.mark.parametrize("xlen", [64, 32])
def test_dtb_virtio_interrupts_match_qemu(xlen: int, tmp_path: Path) -> None:
    theirs = _qemus_dtb(xlen, tmp_path)
    ours = fdt.parse_dtb(build_dtb(0x8000_0000, 128 << 20, "", None, xlen))
    props = ("interrupts", "interrupt-parent", "reg", "compatible")
    for i in range(8):
        node = f"/soc/virtio_mmio@{0x1000_1000 + 0x1000 * i:x}"
        assert _props(ours.get_node(node), props) == _props(theirs.get_node(node), props)
    assert _props(ours.get_node("/soc/virtio_mmio@10001000"), ("interrupts",)) == \
        {"interrupts": [1]}


def test_boot_leaves_ram_it_does_not_use_untouched(images: Images) -> None:
    """kalloc hands out frames from the top of RAM down and threads nothing through
    the ones it has not handed out: after hello, the middle of RAM is still all zero
    (a free list through every frame would have put a pointer in each), so the host
    never has to back it."""
    from privlab.api import Session
    from privlab.machine import Stop

    s = Session.boot("hello", images=images)
    assert s.run(100_000_000).stop is Stop.HALT
    memory = s.machine.memory
    middle = memory.ram_base + memory.ram_size // 2
    for page in range(middle, middle + 64 * 4096, 4096):
        assert memory.read(page, 4096) == bytes(4096), hex(page)
    s.close()
