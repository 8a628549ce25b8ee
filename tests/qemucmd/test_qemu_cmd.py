"""`privlab qemu`: QEMU 7.2's command line for the virt board, run on privlab, with
programs of our own (tests/qemucmd/*.S) and, where QEMU is installed, the same command
line on QEMU for the status to compare."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conformance.programs import build_program, scratch_drive
from machine.asm import build_asm

from privlab.build.baremetal import build_baremetal
from privlab.build.toolchain import ARCHES
from privlab.machine.loader import load_elf

HERE = Path(__file__).resolve().parent
PRIVLAB = [sys.executable, "-m", "privlab"]
QEMU = shutil.which("qemu-system-riscv64")


def program(name: str, tmp_path: Path) -> Path:
    return build_baremetal([HERE / f"{name}.S"], ARCHES["rv64"], tmp_path / f"{name}.elf",
                           listings=False)


def raw(name: str, tmp_path: Path) -> Path:
    """The program's bytes alone, as `objcopy -O binary` makes them."""
    (segment,) = [s for s in load_elf(program(name, tmp_path)).segments if s.data]
    out = tmp_path / f"{name}.bin"
    out.write_bytes(segment.data)
    return out


def privlab_qemu(*words: str | Path, stdin: bytes = b"",
                 timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*PRIVLAB, "qemu", *map(str, words)], input=stdin,
                          capture_output=True, timeout=timeout)


def qemu(*words: str | Path, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    if QEMU is None:
        pytest.skip("qemu-system-riscv64 is not installed")
    return subprocess.run([QEMU, *map(str, words)], input=stdin, capture_output=True,
                          timeout=60)


BARE = ("-machine", "virt", "-nographic", "-bios", "none", "-kernel")


def test_mret_to_s_without_pmp_is_illegal_as_on_qemu_7_2(tmp_path: Path) -> None:
    elf = program("mret_no_pmp", tmp_path)
    assert privlab_qemu(*BARE, elf).returncode == 12          # 10 + illegal instruction
    if QEMU is not None:
        assert qemu(*BARE, elf).returncode == 12


def test_pmp_before_qemu7_lets_mret_reach_s_and_s_use_ram(tmp_path: Path) -> None:
    elf = program("mret_no_pmp", tmp_path)
    assert privlab_qemu("--pmp-before-qemu7", *BARE, elf).returncode == 0
    run = subprocess.run([*PRIVLAB, "run", "--pmp-before-qemu7", "--bios", "none",
                          "--kernel", str(elf)], capture_output=True, timeout=120)
    assert run.returncode == 0


def test_raw_bios_kernel_and_loader_land_where_qemu_puts_them(tmp_path: Path) -> None:
    data = tmp_path / "byte.bin"
    data.write_bytes(bytes([42]))
    words = ("-machine", "virt", "-nographic", "-bios", raw("raw_firmware", tmp_path),
             "-kernel", raw("raw_kernel", tmp_path),
             "-device", f"loader,file={data},addr=0x80300000")
    assert privlab_qemu(*words).returncode == 42
    if QEMU is not None:
        assert qemu(*words).returncode == 42


def test_firmware_that_finds_the_uart_by_node_name_needs_the_tree_before_qemu_7_2(
        tmp_path: Path) -> None:
    """uart_by_node_name.c looks the UART up as the uCore course's 2023 RustSBI-QEMU
    does: by the node's name, `uart...`. QEMU 7.2's tree names it serial@10000000, so on
    QEMU 7.2 and on privlab by default it polls address 5: a load access fault (its
    trap handler exits with the cause). --dtb-before-qemu7.2 names it as QEMU 7.0 and
    7.1 did, and the firmware prints through it and powers off."""
    firmware = build_baremetal([HERE / "uart_by_node_name.c"], ARCHES["rv64"],
                               tmp_path / "firmware.elf", listings=False)
    words = ("-machine", "virt", "-nographic", "-bios", firmware,
             "-kernel", raw("raw_kernel", tmp_path))
    assert privlab_qemu(*words).returncode == 5
    if QEMU is not None:
        assert qemu(*words).returncode == 5
    run = privlab_qemu("--dtb-before-qemu7.2", *words)
    assert (run.returncode, run.stdout) == (0, b"uart found by its node's name\n")


def test_the_tree_before_qemu_7_2_needs_a_tree(tmp_path: Path) -> None:
    """With -bios none (--bios none) there is no device tree to name a node of."""
    elf = program("mret_no_pmp", tmp_path)
    for words in (["qemu", "--dtb-before-qemu7.2", *BARE, str(elf)],
                  ["run", "--dtb-before-qemu7.2", "--bios", "none", "--kernel", str(elf)]):
        done = subprocess.run([*PRIVLAB, *words], capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stderr) == (
            2, "privlab: --dtb-before-qemu7.2 names a node of the device tree, which "
               f"{'-' if words[0] == 'qemu' else '--'}bios none does not pass\n")


VECTOR_ZERO = """
    csrw mtvec, zero
    li t0, 5
    lbu t1, 0(t0)
"""


def test_firmware_whose_trap_vector_faults_is_told_of_the_earlier_qemu_options(
        tmp_path: Path) -> None:
    """Firmware that takes a trap before it sets mtvec (the 2023 RustSBI-QEMU's fate on
    QEMU 7.2) storms at address 0: the report says M's vector faults and names the
    options for an earlier QEMU's firmware that are not already given."""
    firmware = build_asm(VECTOR_ZERO)
    words = ("-machine", "virt", "-nographic", "-bios", firmware,
             "-kernel", raw("raw_kernel", tmp_path))
    done = privlab_qemu(*words)
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 3
    assert lines[0].startswith("privlab: trap storm: fault_fetch (cause 0x1) at epc 0x0, "
                               "tval 0x0, repeated 1000 times with no progress; M's trap "
                               "vector itself faults (mtvec 0x0) (pc 0x0, M-mode")
    assert lines[1] == ("firmware written for an earlier QEMU may need --pmp-before-qemu7 "
                        "or --dtb-before-qemu7.2 (docs/moving-from-qemu.md)")
    done = privlab_qemu("--pmp-before-qemu7", *words)
    assert done.stderr.decode().splitlines()[1] == (
        "firmware written for an earlier QEMU may need --dtb-before-qemu7.2 "
        "(docs/moving-from-qemu.md)")
    run = subprocess.run([*PRIVLAB, "run", "--dtb-before-qemu7.2", "--bios", str(firmware)],
                         capture_output=True, text=True, timeout=120)     # the bundled kernel
    assert run.returncode == 3
    assert run.stderr.splitlines()[1] == (
        "firmware written for an earlier QEMU may need --pmp-before-qemu7 "
        "(docs/moving-from-qemu.md)")


def test_a_bare_program_whose_trap_vector_faults_is_told_no_more() -> None:
    """-bios none: the program is no firmware, and its own vector is its own bug."""
    done = privlab_qemu(*BARE, build_asm(VECTOR_ZERO))
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 3 and "M's trap vector itself faults (mtvec 0x0)" in lines[0]
    assert not any("earlier QEMU" in line for line in lines)


def test_the_bundled_system_boots_on_the_tree_before_qemu_7_2() -> None:
    """privlab's firmware and kernel find nothing by the UART node's name."""
    done = subprocess.run([*PRIVLAB, "run", "--dtb-before-qemu7.2", "--user", "hello"],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "Hello, world!\n")


UNACKNOWLEDGED_THRE = """
    UART_IRQ_TO_M
    li t0, PLATFORM_UART0_BASE
    li t1, 0x02                 // IER: THR-empty interrupts only
    sb t1, 1(t0)
    li s1, 0                    // external interrupts taken
    li t1, 1 << 11
    csrw mie, t1
    csrsi mstatus, 8
    li t1, 'x'
    sb t1, 0(t0)                // sent at once: THR empty again, the line high
    li s2, 4000000              // about four of the run loop's looks at a pipe
1:  addi s2, s2, -1
    bnez s2, 1b
    slli a0, s1, 16
    FAIL_REG a0                 // exit status: the count
    .balign 4
trap:                           // (t0 and t1 are the loop's)
    li t3, PLATFORM_PLIC_BASE + PLIC_CONTEXT + PLIC_CLAIM
    lw t4, 0(t3)
    addi s1, s1, 1
    sw t4, 0(t3)                // completed; IIR is never read, so THRI stays pending
    mret
"""


def test_an_unacknowledged_thr_empty_interrupt_is_taken_once(tmp_path: Path) -> None:
    """A guest that never reads IIR (xv6's uart.c) leaves QEMU's THR-empty interrupt
    pending with its line high: QEMU's PLIC takes it once, and again only when the UART
    reports its line anew (a register access, a byte's arrival). privlab's run loop
    looks at a piped stdin every INPUT_POLL_INSNS instructions; a look reports the line
    only when a byte waits, or xv6 under `make qemu < script` took a UART interrupt at
    every look, and stopped as if waiting for input when the script had ended."""
    elf = build_asm(UNACKNOWLEDGED_THRE)
    words = (*BARE, elf)
    # twice: the IER write with THR empty raises it, and so does the byte's sending
    assert privlab_qemu(*words, stdin=b"").returncode == 2
    if QEMU is not None:
        assert qemu(*words).returncode == 2


def test_piped_input_reaches_the_guest_as_typed_keys(tmp_path: Path) -> None:
    """The program first empties the UART as OpenSBI does, then waits for a key: the
    first byte of the pipe is the key it gets, not the one its blind read took."""
    elf = program("uart_first_key", tmp_path)
    assert privlab_qemu(*BARE, elf, stdin=b"AB").returncode == ord("A")
    run = subprocess.run([*PRIVLAB, "run", "--bios", "none", "--kernel", str(elf),
                          "--input", "AB"], capture_output=True, timeout=120)
    assert run.returncode == ord("A")


@pytest.mark.parametrize("name, legacy", [("virtio_blk", ["-global",
                                                         "virtio-mmio.force-legacy=false"]),
                                          ("virtio_blk_legacy", [])])
def test_a_drive_on_virtio_mmio_bus_0_modern_or_legacy_by_default(
        name: str, legacy: list[str], tmp_path: Path) -> None:
    elf = build_program(name, "rv64")
    image = scratch_drive(name, tmp_path)
    words = (*BARE, elf, *legacy, "-drive", f"file={image},if=none,format=raw,id=x0",
             "-device", "virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0")
    done = privlab_qemu(*words)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("run", ["privlab", "qemu"])
def test_minus_snapshot_keeps_every_drive_s_file_as_it_was(run: str, tmp_path: Path) -> None:
    """-snapshot (xv6_usertests.py's QEMU line): the guest's writes reach the disk it
    reads back, not the file; without it they reach the file."""
    elf = build_program("virtio_blk", "rv64")
    runner = privlab_qemu if run == "privlab" else qemu
    for snapshot in (["-snapshot"], []):
        image = scratch_drive("virtio_blk", tmp_path)
        assert image is not None
        done = runner(*BARE, elf, "-global", "virtio-mmio.force-legacy=false", *snapshot,
                      "-drive", f"file={image},if=none,format=raw,id=x0",
                      "-device", "virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0")
        assert done.returncode == 0, done.stderr
        assert (image.read_bytes().count(0) == image.stat().st_size) == bool(snapshot)


def test_help_lists_gdb_at_a_line_start_as_makefiles_grep_for() -> None:
    done = privlab_qemu("-help")
    lines = done.stdout.decode().splitlines()
    assert done.returncode == 0
    assert any(line.startswith("-gdb tcp::") for line in lines)
    assert any(line.startswith("-bios default|none|file") for line in lines)


MAKEFILE = """\
QEMU = qemu-system-riscv64
QEMUGDB = $(shell if $(QEMU) -help | grep -q '^-gdb'; \\
	then echo "-gdb tcp::26000"; else echo "-s -p 26000"; fi)
QEMUOPTS = -machine virt -bios none -kernel {elf} -m 128M -smp 1 -nographic
run:
	$(QEMU) $(QEMUOPTS)
gdbflag:
	@echo $(QEMUGDB)
"""


def test_a_makefile_switches_with_its_qemu_variable(tmp_path: Path) -> None:
    """`make run QEMU="privlab qemu"`: the two words work wherever the Makefile uses
    $(QEMU), its -help probe included."""
    elf = program("mret_no_pmp", tmp_path)
    (tmp_path / "Makefile").write_text(MAKEFILE.format(elf=elf))
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    make = ["make", "-s", "-C", str(tmp_path), "QEMU=privlab qemu --pmp-before-qemu7"]
    assert subprocess.run([*make, "run"], env=env, capture_output=True,
                          timeout=120).returncode == 0
    flag = subprocess.run([*make, "gdbflag"], env=env, capture_output=True, timeout=60)
    assert flag.stdout.decode().strip() == "-gdb tcp::26000"


@pytest.mark.parametrize("words, message", [
    (["-machine", "sifive_u"], "-machine sifive_u: privlab models the plain virt board only "
                               "(-machine virt)"),
    (["-machine", "virt,aia=aplic"], "-machine virt,aia=aplic: privlab models the plain "
                                     "virt board only (-machine virt)"),
    (["-netdev", "user,id=n0"], "-netdev: not modelled by privlab qemu (privlab qemu -help "
                                "lists what is)"),
    (["-device", "virtio-net-device"], "-device virtio-net-device: not modelled (privlab "
                                       "has virtio-blk-device and loader)"),
    (["-drive", "file=a.img,if=none,format=qcow2,id=x"],
     "-drive file=a.img,if=none,format=qcow2,id=x: privlab models format=raw only"),
    (["-device", "virtio-blk-device,drive=x0,bus=virtio-mmio-bus.3"],
     "-device virtio-blk-device,drive=x0,bus=virtio-mmio-bus.3: privlab models "
     "bus=virtio-mmio-bus.0 only"),
    (["-device", "virtio-blk-device,drive=x9,bus=virtio-mmio-bus.0"],
     "-device virtio-blk-device,drive=x9: no -drive with id=x9"),
    (["-serial", "pty"], "-serial pty: privlab's serial port is the terminal "
                         "(-serial mon:stdio)"),
    (["-monitor", "stdio"], "-monitor stdio: privlab has no QEMU monitor (-monitor none)"),
    (["-icount", "shift=auto"], "-icount shift=auto: privlab's clock is fixed per "
                                "instruction (shift=N, 0 to 10)"),
    (["-smp", "9"], "-smp 9: expected a number from 1 to 8"),
    (["-m", "lots"], "-m lots: expected a size in MiB such as 128M or 1G"),
    (["-gdb", "unix:/tmp/s"], "-gdb unix:/tmp/s: privlab serves gdb on TCP only "
                              "(-gdb tcp::PORT)"),
    (["-global", "virtio-mmio.foo=1"], "-global virtio-mmio.foo=1: privlab models "
                                       "virtio-mmio.force-legacy=true|false only"),
    (["-kernel"], "-kernel needs a value"),
    (["kernel.elf"], "kernel.elf: not a QEMU option (QEMU's options start with -)"),
    (["-machine", "virt"], "privlab qemu needs -kernel FILE (the program to boot)"),
    (["-bios", "none", "-kernel", "k", "-append", "x"],
     "-initrd and -append need firmware: with -bios none privlab passes no device tree"),
    (["-bios", "none", "-kernel", "k", "-S"],
     "-S without -s or -gdb: with no monitor nothing could start the machine"),
    (["-bios", "none", "-kernel", "missing.elf"], "-kernel missing.elf: no such file"),
])
def test_what_is_not_modelled_is_refused_in_one_line(words: list[str], message: str) -> None:
    done = privlab_qemu(*words)
    assert (done.returncode, done.stderr.decode()) == (2, f"privlab: {message}\n")


@pytest.mark.skipif(shutil.which("gdb-multiarch") is None, reason="gdb-multiarch missing")
def test_minus_s_capital_s_waits_for_gdb_which_runs_it_to_the_end(tmp_path: Path) -> None:
    elf = program("mret_no_pmp", tmp_path)
    port = "26731"
    proc = subprocess.Popen([*PRIVLAB, "qemu", "--pmp-before-qemu7", *BARE, str(elf),
                             "-S", "-gdb", f"tcp::{port}"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        for _ in range(60):            # until the stub listens (the build comes first)
            gdb = subprocess.run(
                ["gdb-multiarch", "-batch", "-nx", "-ex", "set architecture riscv:rv64",
                 "-ex", "set confirm off", "-ex", f"target remote 127.0.0.1:{port}",
                 "-ex", "info registers pc", "-ex", "continue"],
                capture_output=True, timeout=120)
            if b"Connection refused" not in gdb.stderr:
                break
            time.sleep(0.5)
        assert "0x80000000" in gdb.stdout.decode()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(shutil.which("gdb-multiarch") is None, reason="gdb-multiarch missing")
def test_xv6_s_qemu_gdb_line_breaks_continues_and_backtraces(tmp_path: Path) -> None:
    """The command line xv6's `make qemu-gdb` writes (-bios none -kernel K -m 128M -smp
    N -nographic -global virtio-mmio.force-legacy=false -drive ... -device
    virtio-blk-device,... -S -gdb tcp::PORT), then gdb as its .gdbinit connects: a
    breakpoint at a function is hit with its argument, continue hits it again, the
    backtrace names the callers, and the run then ends with the program's status."""
    elf = build_baremetal([HERE / "gdb_target.c"], ARCHES["rv64"], tmp_path / "kernel",
                          listings=False)
    image = tmp_path / "fs.img"
    image.write_bytes(bytes(1 << 20))
    port = "26733"
    proc = subprocess.Popen(
        [*PRIVLAB, "qemu", "-machine", "virt", "-bios", "none", "-kernel", str(elf),
         "-m", "128M", "-smp", "1", "-nographic", "-global", "virtio-mmio.force-legacy=false",
         "-drive", f"file={image},if=none,format=raw,id=x0",
         "-device", "virtio-blk-device,drive=x0,bus=virtio-mmio-bus.0", "-S",
         "-gdb", f"tcp::{port}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(60):            # until the stub listens (the build comes first)
            gdb = subprocess.run(
                ["gdb-multiarch", "-batch", "-nx", "-ex", "set confirm off",
                 "-ex", "set architecture riscv:rv64", "-ex", f"target remote 127.0.0.1:{port}",
                 "-ex", f"symbol-file {elf}", "-ex", "set riscv use-compressed-breakpoints yes",
                 "-ex", "break leaf", "-ex", "continue", "-ex", "continue", "-ex", "bt",
                 "-ex", "delete", "-ex", "continue"],
                capture_output=True, timeout=120, text=True)
            if "Connection refused" not in gdb.stderr:
                break
            time.sleep(0.5)
        out = gdb.stdout
        hits = re.findall(r"Breakpoint 1, leaf \(n=(?:n@entry=)?(\d+)\)", out)
        assert hits == ["1", "2"], out
        frames = re.findall(r"(?m)^#\d+\s+(?:0x[0-9a-f]+ in )?(\S+)", out)
        assert frames[:3] == ["leaf", "middle", "kmain"], out
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize("extra, shift", [([], 5), (["-icount", "shift=0"], 0),
                                          (["-icount", "3"], 3)])
def test_without_icount_the_guest_runs_at_privlabs_default_pace(
        extra: list[str], shift: int, tmp_path: Path) -> None:
    """QEMU's default clock is the host's; privlab's stand-in is its default pace
    (32 ns an instruction), which gives a guest about the same work per tick. An
    explicit -icount shift=N is kept, 0 included."""
    from privlab.devices import Console
    from privlab.devices.uart import ScriptedInput
    from privlab.qemucmd.boot import boot_qemu_line
    from privlab.qemucmd.grammar import parse_qemu_line

    line = parse_qemu_line(["-machine", "virt", "-nographic", "-bios", "none", "-kernel",
                            str(program("raw_kernel", tmp_path)), *extra])
    m = boot_qemu_line(line, Console(), ScriptedInput(b""))
    try:
        assert m.icount_shift == shift
    finally:
        m.close()
