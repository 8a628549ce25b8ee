"""Batch grading throughput: submissions per minute and CPU per submission, on a local
Dask cluster and on a loopback cluster of a `dask scheduler` and two `dask worker`
processes (started here), over copies of the reference kernel graded on a real lab.

    python benchmarks/batch_throughput.py [LAB] [N]     # default: taskinfo, 6
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from privlab.course.batch import grade_batch
from privlab.course.grade_one import GradeOptions
from privlab.grade.labs import find_lab
from privlab.paths import KERNEL_DIR


def _submissions(root: Path, n: int) -> Path:
    import shutil

    subs = root / "subs"
    for i in range(n):
        kernel = subs / f"s{i:03}" / "kernel"
        shutil.copytree(KERNEL_DIR, kernel)
        path = kernel / "taskinfo.c"   # each differs from the others in one file
        path.write_text(path.read_text() + f"\n// student {i}\n")
    return subs


def _loopback() -> tuple[str, list[subprocess.Popen[bytes]]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dask = str(Path(sys.executable).with_name("dask"))
    address = f"tcp://127.0.0.1:{port}"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL,
             "start_new_session": True}
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], **quiet)]  # type: ignore[call-overload]
    time.sleep(1.5)
    procs += [subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--no-dashboard",
                                "--host", "127.0.0.1"], **quiet)  # type: ignore[call-overload]
              for _ in range(2)]
    return address, procs


def _row(label: str, n: int, took: float, cpu: float) -> None:
    print(f"{label:<34} {n} submissions in {took:6.1f} s = {60 * n / took:5.1f}/min, "
          f"{cpu / n:4.1f} s CPU each")


def main() -> int:
    lab = find_lab(sys.argv[1] if len(sys.argv) > 1 else "taskinfo")
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    print(f"{lab.name}, {n} submissions, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subs = _submissions(root, n)
        options = GradeOptions(lab, subs)
        for workers in (1, 2):
            r = grade_batch(options, subs, root / f"local{workers}", workers=workers,
                            regrade=True)
            _row(f"local cluster, {workers} worker(s)", r.graded, r.wall_seconds,
                 r.cpu_seconds)
        address, procs = _loopback()
        try:
            r = grade_batch(options, subs, root / "loopback", scheduler=address, regrade=True)
            _row("loopback cluster, 2 dask workers", r.graded, r.wall_seconds, r.cpu_seconds)
        finally:
            for proc in procs:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
