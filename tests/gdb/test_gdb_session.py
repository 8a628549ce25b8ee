"""The real gdb-multiarch, in batch mode, against the stub serving the bundled kernel
running `hello` (which calls write then exit)."""

from __future__ import annotations

import re
from collections.abc import Callable

from gdb.helpers import ECALL, SRET, Served, find_insn, symbol
from privlab.build.images import Images
from privlab.machine import Stop

TRAMPOLINE = 0x3FFFFFF000   # kernel/memlayout.h, Sv39

Gdb = Callable[..., str]
Serve = Callable[..., Served]


def values(out: str) -> list[str]:
    """What gdb printed for each `p`, in order ($1 = ..., $2 = ...)."""
    return re.findall(r"^\$\d+ = (.*)$", out, re.M)


def test_breakpoint_on_syscall_handler_after_user_write_shows_the_ecall(
        served: Serve, gdb: Gdb, images: Images) -> None:
    s = served("hello")
    write = symbol(images.users["hello"], "write")
    out = gdb(s.port, [f"hbreak *{write:#x}", "continue", "p $priv",
                       "break syscall.c:syscall", "continue",
                       "p $scause", "p $sepc < 0x80000000", "p $sepc >= 0x10000",
                       "p ($sstatus >> 8) & 1", "p $priv", "p cpus[0].proc->trapframe->a7",
                       "p $stvec", "kill"])
    assert "syscall () at" in out, out
    assert values(out)[:-1] == ["0", "8", "1", "1", "0", "1", "64"], out
    assert values(out)[-1].endswith("<kernelvec>"), out   # usertrap() set it


def frames(out: str) -> list[tuple[str, str, str]]:
    """What gdb's `bt` printed: (level, function, source file) for each frame."""
    found = re.findall(r"^#(\d+) +(?:0x[0-9a-f]+ in )?(\w+) \(.*\) at ([\w/.]+):\d+$",
                       out, re.M)
    assert len(found) == len(re.findall(r"^#\d+ ", out, re.M)), out   # every frame named
    return found


def test_backtrace_in_a_syscall_handler_ends_at_the_trap_entry(
        served: Serve, gdb: Gdb) -> None:
    s = served("hello")
    out = gdb(s.port, ["break sys_write", "continue", "bt", "kill"])
    assert frames(out) == [("0", "sys_write", "kernel/sysfile.c"),
                           ("1", "syscall", "kernel/syscall.c"),
                           ("2", "usertrap", "kernel/trap.c"),
                           ("3", "usertrap_entry", "kernel/trampoline.S")], out
    assert "Backtrace stopped" not in out, out


def test_backtrace_in_an_interrupt_handler_continues_in_the_interrupted_function(
        served: Serve, gdb: Gdb) -> None:
    """The kernel reads the superblock at boot and waits in sleep() for the disk's
    interrupt: kernelvec's CFI gives the interrupted pc (sepc) as its caller."""
    s = served("hello", disk=True)
    out = gdb(s.port, ["break virtio_disk_intr", "continue", "bt", "kill"])
    assert [(f, src) for _, f, src in frames(out)] == [
        ("virtio_disk_intr", "kernel/virtio_disk.c"), ("device_interrupt", "kernel/trap.c"),
        ("kerneltrap", "kernel/trap.c"), ("kernelvec", "kernel/kernelvec.S"),
        ("intr_on", "kernel/include/riscv.h"), ("wait_for_interrupt", "kernel/proc.c"),
        ("sleep", "kernel/proc.c"), ("virtio_disk_rw", "kernel/virtio_disk.c"),
        ("bread", "kernel/bio.c"), ("fsinit", "kernel/fs.c"), ("main", "kernel/main.c")], out
    assert "Backtrace stopped" not in out, out


def test_backtrace_of_a_new_process_ends_at_its_first_switch(
        served: Serve, gdb: Gdb) -> None:
    s = served("hello")
    out = gdb(s.port, ["break usertrapret", "continue", "bt", "kill"])
    assert frames(out) == [("0", "usertrapret", "kernel/trap.c"),
                           ("1", "forkret", "kernel/proc.c"),
                           ("2", "forkret_entry", "kernel/switch.S")], out
    assert "Backtrace stopped" not in out, out


def test_stepi_across_sret_arrives_in_user_mode_at_sepc(
        served: Serve, gdb: Gdb, images: Images) -> None:
    s = served("hello")
    # userret runs from the trampoline page, mapped at TRAMPOLINE in every space.
    sret = find_insn(images.kernel, "userret", SRET)
    sret = TRAMPOLINE + sret - symbol(images.kernel, "trampoline")
    out = gdb(s.port, [f"break *{sret:#x}", "continue", "p $priv", "set $target = $sepc",
                       "stepi", "p $priv", "p $pc == $target", "p/x $pc", "kill"])
    assert values(out) == ["1", "0", "1", "0x10000"], out   # hello's entry point


def test_stepi_onto_ecall_arrives_at_the_trap_vector(
        served: Serve, gdb: Gdb, images: Images) -> None:
    s = served("hello")
    ecall = find_insn(images.users["hello"], "write", ECALL)
    out = gdb(s.port, [f"hbreak *{ecall:#x}", "continue", "p $priv", "set $vec = $stvec",
                       "stepi", "p $priv", "p $pc == $vec", "p $scause",
                       f"p $sepc == {ecall:#x}", "p/x $pc", "kill"])
    assert values(out) == ["0", "1", "1", "8", "1", "0x3ffffff000"], out


def test_software_and_hardware_breakpoints_in_kernel_and_user_code(
        served: Serve, gdb: Gdb, images: Images) -> None:
    s = served("hello")
    hello = images.users["hello"]
    main, write = symbol(hello, "main"), symbol(hello, "write")
    usertrap, sys_write = symbol(images.kernel, "usertrap"), symbol(images.kernel, "sys_write")
    out = gdb(s.port, [f"hbreak *{main:#x}", f"break *{write:#x}", f"break *{usertrap:#x}",
                       f"hbreak *{sys_write:#x}",
                       "continue", "p/x $pc", "p $priv", "continue", "p/x $pc", "p $priv",
                       "continue", "p/x $pc", "p $priv", "continue", "p/x $pc", "p $priv",
                       "kill"])
    assert values(out) == [hex(main), "0", hex(write), "0", hex(usertrap), "1",
                           hex(sys_write), "1"], out
    assert re.findall(r"^(?:Temporary )?(?:Hardware assisted )?[Bb]reakpoint (\d)", out,
                      re.M)[-4:] == ["1", "2", "3", "4"], out


def test_breakpoint_in_a_loop_hits_again_after_gdb_steps_over_it(
        served: Serve, gdb: Gdb, images: Images) -> None:
    s = served("hello")
    out = gdb(s.port, ["break syscall.c:syscall", "continue", "p cpus[0].proc->trapframe->a7",
                       "continue", "p cpus[0].proc->trapframe->a7", "kill"])
    assert values(out) == ["64", "93"], out   # write, then exit


def test_user_memory_reads_and_writes_from_user_mode(
        served: Serve, gdb: Gdb, images: Images) -> None:
    s = served("hello")
    write = symbol(images.users["hello"], "write")
    out = gdb(s.port, [f"hbreak *{write:#x}", "continue", "x/s $a1",
                       "set var *(char *)$a1 = 'J'", "x/s $a1", "x/xw 0", "delete", "continue"])
    assert '"Hello, world!\\n"' in out and '"Jello, world!\\n"' in out, out
    assert "Cannot access memory at address 0x0" in out, out
    result = s.finish()
    assert result.stop is Stop.HALT and result.exit_status == 0
    assert s.machine.console.text() == "Jello, world!\n"


def test_supervisor_mode_debugger_reads_user_pages_despite_sum_clear(
        served: Serve, gdb: Gdb, images: Images) -> None:
    s = served("hello")
    ecall = find_insn(images.users["hello"], "write", ECALL)
    # One step onto the ecall: S-mode at uservec, still on the user page table, SUM=0.
    out = gdb(s.port, [f"hbreak *{ecall:#x}", "continue", "stepi", "p $priv",
                       "p ($sstatus >> 18) & 1", "x/s $a1", "kill"])
    assert values(out) == ["1", "0"], out
    assert '"Hello, world!\\n"' in out, out


def test_register_priv_and_pc_writes_undo_a_system_call(
        served: Serve, gdb: Gdb, images: Images) -> None:
    # One step into the trap vector, then back to U after the ecall as if write()
    # had returned 14: nothing is printed, hello exits normally.
    s = served("hello")
    ecall = find_insn(images.users["hello"], "write", ECALL)
    out = gdb(s.port, [f"hbreak *{ecall:#x}", "continue", "stepi", "p $priv",
                       "set $priv = 0", "set $pc = $sepc + 4", "set $a0 = 14",
                       "p $priv", "delete", "continue"])
    assert values(out) == ["1", "0"], out
    assert "exited normally" in out, out
    assert s.finish().exit_status == 0
    assert s.machine.console.text() == ""


def test_kernel_memory_reads_and_writes(served: Serve, gdb: Gdb, images: Images) -> None:
    s = served("hello")
    out = gdb(s.port, ["break syscall.c:syscall", "continue", "p nextpid",
                       "set var nextpid = 7", "p nextpid", "x/2xb &nextpid", "kill"])
    assert values(out) == ["2", "7"], out
    assert re.search(r"<nextpid>:\s+0x07\s+0x00", out), out


def test_monitor_reads_and_writes_physical_memory(served: Serve, gdb: Gdb) -> None:
    s = served("hello")
    out = gdb(s.port, ["monitor phys-write 0x80400000 6869", "monitor phys 0x80400000 2",
                       "monitor memory physical", "x/2xb 0x80400000",
                       "monitor memory virtual", "kill"])
    assert "0x0080400000: 68 69" in out and "hi" in out, out
    assert re.search(r"0x80400000:\s+0x68\s+0x69", out), out


def test_watchpoint_on_a_kernel_global_reports_old_and_new_value(
        served: Serve, gdb: Gdb) -> None:
    s = served("hello")
    out = gdb(s.port, ["watch nextpid", "continue", "p nextpid", "kill"])
    assert "Hardware watchpoint 1: nextpid" in out, out
    assert "Old value = 1" in out and "New value = 2" in out, out
    assert re.search(r"watch hit at 0x[0-9a-f]+: the store by the instruction at "
                     r"0x[0-9a-f]+ \(physical 0x[0-9a-f]+\), stopped before it", out), out
    # The stop is at the access: gdb steps over the store and shows the line that made
    # it, not a later block's (docs/gdb.md, Watchpoints).
    assert re.search(r"allocproc \(\) at kernel/proc\.c:\d+\n\d+\s+p->pid = nextpid\+\+;",
                     out), out


def test_read_watchpoint_shows_the_value_the_load_reads(served: Serve, gdb: Gdb) -> None:
    # allocproc reads nextpid (1), then stores 2: stopped before the load, gdb sees 1.
    s = served("hello")
    out = gdb(s.port, ["rwatch nextpid", "continue", "kill"])
    assert "Hardware read watchpoint 1: nextpid\n\nValue = 1\n" in out, out
    assert "rwatch hit at 0x" in out and "the load by the instruction at" in out, out


def test_monitor_commands_print_the_inspectors(served: Serve, gdb: Gdb) -> None:
    s = served("hello")
    out = gdb(s.port, ["break syscall.c:syscall", "continue", "monitor traps 3",
                       "monitor csr", "monitor pagetable", "monitor translate 0x10000",
                       "monitor status", "kill"])
    assert "user_ecall" in out and "sret" in out, out
    assert "scause" in out and "sepc" in out, out
    assert "satp" in out, out
    assert "more lines (monitor pagetable full shows every one)" in out, out
    assert "--full" not in out, out
    assert "0x10000" in out, out
    assert "instructions retired" in out, out


def test_monitor_status_lists_the_breakpoints_gdb_inserted_for_the_last_resume(
        served: Serve, gdb: Gdb, images: Images) -> None:
    s = served("hello")
    sys_write = symbol(images.kernel, "sys_write")
    exit_ = symbol(images.users["hello"], "exit")
    out = gdb(s.port, [f"break *{sys_write:#x}", f"hbreak *{exit_:#x}", "monitor status",
                       "continue", "monitor status", "kill"])
    lines = out.splitlines()
    assert ("breakpoints: none (gdb inserts its breakpoints when the guest resumes)"
            in lines), out
    assert (f"breakpoints: {exit_:#x} hw, {sys_write:#x} sw (inserted by gdb for the last "
            "resume; it lifts them while the guest is stopped)") in lines, out


def test_unknown_monitor_command_is_one_line_error(served: Serve, gdb: Gdb) -> None:
    s = served("hello")
    out = gdb(s.port, ["monitor frobnicate", "monitor traps x", "p 6 * 7", "kill"])
    lines = out.splitlines()
    first = lines.index("privlab: unknown monitor command 'frobnicate' (try: monitor help)")
    assert lines[first + 1] == "privlab: N must be a number (0x... for hex), not 'x'", out
    assert lines[first + 2] == "$1 = 42", out     # gdb adds nothing ("Protocol error")


def test_monitor_says_how_to_pass_a_register_value(served: Serve, gdb: Gdb) -> None:
    s = served("hello")
    out = gdb(s.port, ["monitor translate $pc", 'eval "monitor translate %#lx", $pc', "kill"])
    assert ("privlab: gdb does not evaluate $pc in a monitor command; try: "
            'eval "monitor translate %#lx", $pc\n') in out, out
    assert "translate 0x80000000  load from M-mode" in out, out


def test_kill_ends_the_run(served: Serve, gdb: Gdb) -> None:
    s = served("hello")
    out = gdb(s.port, ["stepi 3", "kill"])
    assert "killed" in out, out
    result = s.finish()
    assert result.stop is Stop.USER and result.instret == 3


def test_detach_lets_the_guest_run_to_completion(served: Serve, gdb: Gdb) -> None:
    s = served("hello")
    gdb(s.port, ["break syscall.c:syscall", "continue", "detach"])
    result = s.finish()
    assert result.stop is Stop.HALT and result.exit_status == 0
    assert s.machine.console.text() == "Hello, world!\n"


def test_guest_exit_is_reported_to_gdb(served: Serve, gdb: Gdb) -> None:
    s = served("hello")
    out = gdb(s.port, ["continue"])
    assert "exited normally" in out, out
    assert s.finish().exit_status == 0
