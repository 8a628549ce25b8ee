"""How a stopped run is reported (harness/cli/console.py, diagnose.py): every code
address named as symbol+offset and file:line, and the process table with each
sleeping process's wait channel named."""

from __future__ import annotations

import io
import re

from privlab.api import Session
from privlab.build.images import Images
from privlab.cli.console import report_run
from privlab.cli.diagnose import describe_machine, info_for
from privlab.machine import Stop

NAMED = r"0x[0-9a-f]+ \w+(\+0x[0-9a-f]+)? \S+\.[cS]:\d+"


def test_a_budget_stop_names_the_pc_and_every_trap_epc(images: Images) -> None:
    s = Session.boot("hello", images=images)
    try:
        r = s.run(2_000_000)
        assert r.stop is Stop.BUDGET
        out = io.StringIO()
        report_run(r, 2_000_000, out, machine=s.machine)     # images read from the machine
        text = out.getvalue()
        assert re.search(rf"exhausted at pc {NAMED} in [MS]-mode", text), text
        epcs = re.findall(r" epc (\S+ \S+ \S+) tval", text)
        assert epcs and all(re.fullmatch(NAMED, e) for e in epcs), text
    finally:
        s.close()


def test_info_for_a_machine_finds_the_firmware_and_the_kernel(images: Images) -> None:
    s = Session.boot("hello", images=images)
    try:
        info = info_for(s.machine)
        assert info.kernel is not None and info.kernel.name == "kernel.elf"
        assert info.firmware is not None and info.firmware.name != "kernel.elf"
    finally:
        s.close()


def test_sleeping_parents_wait_on_their_own_proc_slot_named(images: Images) -> None:
    """forktree 2: the parents sleep in waitpid on their own struct proc, named as
    the slot and pid instead of an address."""
    s = Session.boot("forktree", args=["2"], images=images)
    try:
        s.run_until_syscall("waitpid")
        s.run(200_000)
        lines = describe_machine(s.machine, s.info)
        assert lines[0] == "processes:"
        sleeping = [line for line in lines if "SLEEPING" in line]
        assert sleeping and all(re.search(r"waits on proc\[\d+\] \(pid \d+\)$", line)
                                for line in sleeping), lines
        assert not any(re.search(r"waits on 0x", line) for line in lines)
    finally:
        s.close()
