"""Machines are independent: several can run at once in threads (Unicorn releases the
GIL while it runs), each giving exactly the trace it gives alone."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

from machine.asm import build_asm
from machine.child_env import child_env
from machine.fpu_cases import BODY, QEMU_7_2
from privlab.boot import user_boot
from privlab.build.images import build_images
from privlab.devices import Console
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_system


def trace(prog: str, *args: str) -> tuple[str, list[str]]:
    im = build_images("rv64", listings=False)
    ub = user_boot(im.users, prog, args)
    m = Machine(64, console=Console())
    boot_system(m, load_elf(im.firmware), load_elf(im.kernel), ub.initrd, ub.bootargs)
    r = m.run(max_insns=2_000_000_000)
    assert (r.stop, r.exit_status) == (Stop.HALT, 0), r.message
    return m.console.text(), [json.dumps(e.to_json()) for e in m.events]


def test_two_machines_in_threads_give_the_same_traces_as_alone() -> None:
    jobs = [("compute", "1500000"), ("usertests", "exec", "waitpid", "fork_copies_memory")]
    alone = [trace(*job) for job in jobs]
    together: list[tuple[str, list[str]] | None] = [None, None]

    def worker(i: int) -> None:
        together[i] = trace(*jobs[i])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert together == alone


# fpu_cases.BODY with its five results kept in memory (`got`) and a clean power-off.
FP_RESULTS = BODY.replace("    ecall\n", """
    la t2, got
    sd a0, 0(t2)
    sd a1, 8(t2)
    sd a2, 16(t2)
    sd a3, 24(t2)
    sd a4, 32(t2)
    PASS
""") + "got:\n    .dword 0, 0, 0, 0, 0\n"

FIRST_HARTS = r"""
import json, sys, threading
from privlab.machine import Machine, load_elf
from privlab.machine.assemble import boot_bare
from privlab.native.library import load_library

image, n = load_elf(sys.argv[1]), int(sys.argv[2])
gate, out = threading.Barrier(n), [None] * n

def worker(i):
    gate.wait()                # every thread's first hart at once, in a fresh process
    m = Machine(image.xlen)
    boot_bare(m, image)
    r = m.run(max_insns=100_000)
    got = m.memory.read(image.symbols["got"], 40)
    out[i] = [r.stop.name, r.exit_status,
              [int.from_bytes(got[k:k + 8], "little") for k in range(0, 40, 8)]]

threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=120)
print(json.dumps([out, load_library().fpu_exact(), load_library().fpu_emulating()]))
"""


def test_the_first_harts_of_a_process_made_at_once_on_threads_all_get_the_exact_fpu() -> None:
    """hart_new replaces parts of libunicorn once per process (hartapi.c install_once):
    threads that make their first harts at once wait for that, and every one of them
    computes F/D as QEMU 7.2 does (fpu_cases: where Unicorn's own FPU differs)."""
    elf = build_asm(FP_RESULTS, "rv64")
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", FIRST_HARTS, str(elf), "6"],
                              capture_output=True, text=True, env=child_env(), timeout=300,
                              check=False)
        assert proc.returncode == 0, proc.stderr
        results, exact, emulating = json.loads(proc.stdout.strip().splitlines()[-1])
        assert results == [["HALT", 0, QEMU_7_2]] * 6
        assert exact != emulating      # one of the two, decided once for every hart
