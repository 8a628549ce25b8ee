"""Incremental rebuild: edit one kernel file, rebuild everything (kernel, firmware, user
programs, initrd, listings) as `privlab build` does. Goal: under 2 s.

Works on a copy of kernel/ and userland/ so the repository is untouched; the first
build of the copy is cold (objects are cached by content and path), the timed one is
the rebuild after the edit.

    python benchmarks/rebuild.py [FILE]   (default: proc.c)
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

from privlab.build.images import build_images
from privlab.paths import KERNEL_DIR, USERLAND_DIR

GOAL = 2.0


def main() -> int:
    name = sys.argv[1] if len(sys.argv) > 1 else "proc.c"
    with tempfile.TemporaryDirectory(prefix="privlab-rebuild-") as tmp:
        root = Path(tmp)
        kernel, userland = root / "kernel", root / "userland"
        shutil.copytree(KERNEL_DIR, kernel)
        shutil.copytree(USERLAND_DIR, userland)
        out = root / "out"
        start = time.perf_counter()
        build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=out)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=out)
        noop = time.perf_counter() - start
        source = kernel / name
        source.write_text(source.read_text() + f"\n// edited {time.time()}\n")
        start = time.perf_counter()
        build_images("rv64", kernel_dir=kernel, userland_dir=userland, out_dir=out)
        edit = time.perf_counter() - start
    print(f"cold build {cold:.2f} s, nothing changed {noop:.2f} s, after editing {name} "
          f"{edit:.2f} s (goal < {GOAL} s: {'meets' if edit < GOAL else 'MISSES'})")
    return 0 if edit < GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
