"""The system-call fuzzer as a user runs it: `privlab run --quiet --user fuzz 7 N` on
the bundled firmware, kernel, initrd and disk, against QEMU 7.2 booting the same with
-icount shift=0 and with its defaults, at N = 3,000 and 20,000 calls, in the same
run. Goals: not slower than QEMU -icount shift=0 at 20,000 calls, and privlab's cost
growing no faster than the guest's work: its ratio at 20,000 at most 1.2 times its
ratio at 3,000 (QEMU's time stands for the guest's work; the guest is the same on
both).

    python benchmarks/fuzz.py [SEED]

Each command is timed whole (boot included, as a user waits for it), best of 2.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from common import best_of, privlab_cli, time_command, time_qemu_user

from privlab.build.images import Images, build_images

COUNTS = (3_000, 20_000)
GOAL = 1.0           # privlab / QEMU at the largest count
GROWTH = 1.2         # ratio at the largest count / ratio at the smallest


def privlab(seed: int, n: int) -> float:
    took, proc = time_command([*privlab_cli(), "run", "--quiet", "--user",
                               "fuzz", str(seed), str(n)])
    if proc.returncode != 0:
        sys.exit(f"privlab: fuzz {seed} {n} exited {proc.returncode}: "
                 f"{proc.stderr.decode(errors='replace')[-300:]}")
    return took


def qemu(images: Images, seed: int, n: int, scratch: Path, icount: bool = True) -> float:
    return time_qemu_user(images, "fuzz", [str(seed), str(n)], b"fuzz: kernel survived",
                          scratch, icount=icount, disk=True)


def main() -> int:
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    images = build_images("rv64", listings=False)
    privlab(seed, 1)                       # the build and caches, untimed
    have_qemu = shutil.which("qemu-system-riscv64") is not None
    ratios = []
    print(f"the system-call fuzzer, seed {seed}, bundled kernel")
    with tempfile.TemporaryDirectory(prefix="privlab-bench-fuzz-") as tmp:
        for n in COUNTS:
            ours = best_of(2, lambda n=n: privlab(seed, n))
            line = f"  {n:6,} calls: privlab {ours:6.2f} s"
            if have_qemu:
                theirs = best_of(2, lambda n=n: qemu(images, seed, n, Path(tmp)))
                ratios.append(ours / theirs)
                line += f"   QEMU -icount shift=0 {theirs:6.2f} s   ratio {ratios[-1]:.2f}x"
                default = best_of(2, lambda n=n: qemu(images, seed, n, Path(tmp), False))
                line += f"   QEMU defaults {default:6.2f} s   ratio {ours / default:.2f}x"
            print(line)
    if not have_qemu:
        print("  QEMU 7.2 not installed: no reference, no ratio")
        return 0
    growth = ratios[-1] / ratios[0]
    meets = ratios[-1] <= GOAL and growth <= GROWTH
    print(f"  ratio at {COUNTS[-1]:,} = {ratios[-1]:.2f}x (goal <= {GOAL}x); growth "
          f"{growth:.2f} (goal <= {GROWTH}): {'meets' if meets else 'MISSES'}")
    return 0 if meets else 1


if __name__ == "__main__":
    sys.exit(main())
