"""Machines are independent: several can run at once in threads (Unicorn releases the
GIL while it runs), each giving exactly the trace it gives alone."""

from __future__ import annotations

import json
import threading

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
