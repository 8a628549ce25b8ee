"""What the portable core costs: the same images on privlab in its normal mode, in its
portable mode (PRIVLAB_PORTABLE=1: none of the replacements inside libunicorn that only
save time, harness/native/portable.h) and on QEMU 7.2 with its defaults and with
`-icount shift=0`, start-up subtracted on all. The mode is read once per process, so
each privlab side runs in a child process of its own. No goal: it prints the ratios.

    python benchmarks/portable_cost.py [SCALE]     (default 1.0: iteration counts x SCALE)

The workloads are the other benchmarks' programs: ALU work (compute.py), stores
(store_loop.py), sstatus accesses from S (csr_access.py: csrfast.c's path in normal
mode, a code hook in portable mode) and U->S ecall round trips (trap_roundtrip.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from common import best_of, build, qemu_reference, time_privlab

REPEAT = 3


@dataclass(frozen=True)
class Workload:
    title: str
    program: str
    iterations: int
    defines: dict[str, int]


WORKLOADS = (
    Workload("ALU loop (10 insns/iteration)", "alu_loop", 10_000_000, {}),
    Workload("store loop", "store_loop", 10_240_000, {}),
    Workload("csrr t1, sstatus from S", "csr_loop", 500_000, {"CSR_OP": 0}),
    Workload("csrci sstatus, SIE from S", "csr_loop", 500_000, {"CSR_OP": 1}),
    Workload("U->S ecall round trip", "ecall_loop", 200_000, {}),
)


def child(program: str, iterations: int, defines: dict[str, int]) -> None:
    """In the child: privlab's best-of seconds for the work (start-up subtracted)."""
    work, empty = build(program, iterations, **defines), build(program, 0, **defines)
    seconds = best_of(REPEAT, lambda: time_privlab(work)[0]) - \
        best_of(REPEAT, lambda: time_privlab(empty)[0])
    print(json.dumps({"seconds": seconds}))


def privlab_seconds(w: Workload, iterations: int, portable: bool) -> float:
    env = {**os.environ, "PRIVLAB_PORTABLE": "1" if portable else "0"}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", w.program,
           str(iterations), json.dumps(w.defines)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"portable_cost: the {'portable' if portable else 'normal'} run of "
                 f"{w.program} failed: {proc.stderr.strip().splitlines()[-1:]}")
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["seconds"])


def _cell(x: float | None) -> str:
    return f"{x:9.3f}" if x else f"{'-':>9}"


def _ratio(ours: float, theirs: float | None, width: int) -> str:
    return f"{ours / theirs:{width}.2f}x" if theirs else f"{'-':>{width + 1}}"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        child(argv[1], int(argv[2]), json.loads(argv[3]))
        return 0
    scale = float(argv[0]) if argv else 1.0
    print(f"{'workload':<30} {'normal':>9} {'portable':>9} {'port/norm':>9} "
          f"{'QEMU':>9} {'QEMU-ic':>9} {'port/QEMU':>9} {'port/QEMU-ic':>12}")
    for w in WORKLOADS:
        n = max(1, int(w.iterations * scale))
        normal = privlab_seconds(w, n, portable=False)
        portable = privlab_seconds(w, n, portable=True)
        ref = qemu_reference(build(w.program, n, **w.defines), build(w.program, 0, **w.defines),
                             REPEAT)

        print(f"{w.title:<30} {normal:9.3f} {portable:9.3f} {portable / normal:8.2f}x "
              f"{_cell(ref.default)} {_cell(ref.icount)} {_ratio(portable, ref.default, 8)} "
              f"{_ratio(portable, ref.icount, 11)}")
    print("seconds of work, best of 3, start-up subtracted; QEMU-ic: -icount shift=0")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
