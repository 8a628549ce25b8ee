"""Machines are independent: several can run at once in threads (Unicorn releases the
GIL while it runs), each giving exactly the trace it gives alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from machine.asm import build_asm
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


# QEMU 7.2's F/D where Unicorn's QEMU 5.0 differs (fpu.c): fmax.s of a signalling NaN
# and 1.0 is 1.0 (minimumNumber), an unboxed operand of fsgnj.s reads as the canonical
# NaN, and fmadd.s of inf x 0 + qNaN raises NV. Each wrong answer fails with its own code.
FP_EXACT = """
    .option arch, +d
    li t0, 0x6000
    csrs mstatus, t0
    la t1, operands
    fld f1, 0(t1)
    fld f2, 8(t1)
    fmax.s f0, f1, f2
    fmv.x.d a0, f0
    li a1, 0xffffffff3f800000
    bne a0, a1, 1f
    fld f3, 16(t1)
    fld f4, 24(t1)
    fsgnj.s f0, f3, f4
    fmv.x.d a0, f0
    li a1, 0xffffffff7fc00000
    bne a0, a1, 2f
    fld f5, 32(t1)
    fld f6, 40(t1)
    csrwi fflags, 0
    fmadd.s f0, f5, f4, f6
    csrr a0, fflags
    li a1, 0x10
    bne a0, a1, 3f
    PASS
1:  FAIL 1
2:  FAIL 2
3:  FAIL 3
    .data
    .balign 8
operands:
    .dword 0xffffffff7f800001, 0xffffffff3f800000, 0x7ffffffe12345678
    .dword 0xffffffff00000000, 0xffffffff7f800000, 0xffffffff7fc00000
"""

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
    out[i] = [r.stop.name, r.exit_status]

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
    computes F/D as QEMU 7.2 does."""
    elf = build_asm(FP_EXACT, "rv64")
    here = Path(__file__).resolve().parent
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(here.parent), str(here.parent.parent)]))
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", FIRST_HARTS, str(elf), "6"],
                              capture_output=True, text=True, env=env, timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr
        results, exact, emulating = json.loads(proc.stdout.strip().splitlines()[-1])
        assert results == [["HALT", 0]] * 6
        assert exact != emulating      # one of the two, decided once for every hart
