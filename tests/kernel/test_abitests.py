"""`abitests` (userland/abitests.c) on privlab with the build's disk: the system-call
ABI as the uCore-Tutorial and rCore-Tutorial course test programs use it (argument
forms, structure layouts, the semantics their checks rely on). The course's own
programs cannot run in CI; each behaviour they exposed has a case here."""

from __future__ import annotations

import pytest
from built_images import built

from privlab.boot import user_boot
from privlab.devices import Console
from privlab.devices.disk import Drive
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_system

CASES = [
    "pipe_one_argument", "pipe_fork_rw", "openat_forms", "long_names", "exit_status_int",
    "exec_null_argv", "exec_argv", "lab_mass_unlink",
    "lab_fstat_layout", "lab_link_counts", "lab_spawn_null_argv", "lab_mmap_five_args",
    "lab_task_info_layout",
]

# What the programs the cases run print: hello (copies of it under names of 15, 20, 32
# and 62 bytes in long_names; spawned
# in lab_spawn_null_argv, with its parent's console) and "abitests echo".
CHILD_OUTPUT = {
    "long_names": ["Hello, world!"] * 4,
    "exec_null_argv": ["Hello, world!"],
    "lab_spawn_null_argv": ["Hello, world!"],
    "exec_argv": ["argc = 7", "argv[0] = (*o*)", "argv[1] = echo", "argv[2] = (>.<)",
                  "argv[3] = (O.O)", "argv[4] = (QwQ)", "argv[5] = orz",
                  "argv[6] = 没有了呀"],
}


images = built


def run_abitests(arch: str, *args: str) -> tuple[int | None, list[str]]:
    im = images(arch)
    ub = user_boot(im.users, "abitests", args)
    m = Machine(int(arch[2:]), console=Console(),
                drive=Drive.in_memory(im.disk.read_bytes(), "fs.img"))
    boot_system(m, load_elf(im.firmware), load_elf(im.kernel), ub.initrd, ub.bootargs)
    r = m.run(max_insns=2_000_000_000)
    assert r.stop == Stop.HALT, m.console.text()[-2000:]
    return r.exit_status, m.console.text().splitlines()


@pytest.mark.parametrize("arch", ["rv64", "rv32"])
def test_abitests_every_case_passes(arch: str) -> None:
    status, lines = run_abitests(arch)
    expected: list[str] = []
    for case in CASES:
        expected += [*CHILD_OUTPUT.get(case, []), f"PASS {case}"]
    expected.append(f"abitests: {len(CASES)} passed, 0 failed")
    assert lines[-len(expected):] == expected, "\n".join(lines)
    assert status == 0

