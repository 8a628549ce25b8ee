"""What the portable core costs: the same images on privlab in its normal mode, in its
portable mode (PRIVLAB_PORTABLE=1: none of the replacements inside libunicorn that only
save time, harness/native/portable.h), in portable mode with the virtual TLB
(PRIVLAB_VTLB=1 as well: PMP and the MMU through Unicorn's public API,
harness/native/vtlb.c, what a host without libunicorn's PLT runs) and on QEMU 7.2 with
its defaults and with `-icount shift=0`, start-up subtracted on all. The mode is read
once per process, so each privlab side runs in a child process of its own. No goal: it
prints the ratios.

    python benchmarks/portable_cost.py [SCALE]     (default 1.0: iteration counts x SCALE)

The workloads are the other benchmarks' programs: ALU work (compute.py), stores
(store_loop.py), sstatus accesses from S (csr_access.py: csrfast.c's path in normal
mode, a code hook in portable mode) and U->S ecall round trips (trap_roundtrip.py).
"""

from __future__ import annotations

import argparse
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


# Each privlab mode and the environment its child runs with.
MODES = {
    "normal": {"PRIVLAB_PORTABLE": "0", "PRIVLAB_VTLB": "0"},
    "portable": {"PRIVLAB_PORTABLE": "1", "PRIVLAB_VTLB": "0"},
    "virtual TLB": {"PRIVLAB_PORTABLE": "1", "PRIVLAB_VTLB": "1"},
}


def privlab_seconds(w: Workload, iterations: int, mode: str) -> float:
    env = {**os.environ, **MODES[mode]}
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", w.program,
           str(iterations), json.dumps(w.defines)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"portable_cost: the {mode} run of "
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
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scale", nargs="?", type=float, default=1.0,
                        help="iteration counts x SCALE (default 1.0)")
    scale = parser.parse_args(argv).scale
    print(f"{'workload':<30} {'normal':>9} {'portable':>9} {'vtlb':>9} {'port/norm':>9} "
          f"{'vtlb/norm':>9} {'QEMU':>9} {'QEMU-ic':>9} {'port/QEMU':>9} {'port/QEMU-ic':>12} "
          f"{'vtlb/QEMU-ic':>12}")
    for w in WORKLOADS:
        n = max(1, int(w.iterations * scale))
        normal, portable, vtlb = (privlab_seconds(w, n, mode) for mode in MODES)
        ref = qemu_reference(build(w.program, n, **w.defines), build(w.program, 0, **w.defines),
                             REPEAT)

        print(f"{w.title:<30} {normal:9.3f} {portable:9.3f} {vtlb:9.3f} "
              f"{portable / normal:8.2f}x {vtlb / normal:8.2f}x "
              f"{_cell(ref.default)} {_cell(ref.icount)} {_ratio(portable, ref.default, 8)} "
              f"{_ratio(portable, ref.icount, 11)} {_ratio(vtlb, ref.icount, 11)}")
    print("seconds of work, best of 3, start-up subtracted; QEMU-ic: -icount shift=0; "
          "vtlb: portable with PRIVLAB_VTLB=1")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
