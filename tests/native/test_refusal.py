"""A host whose libunicorn has neither the PLT slots pmp.c replaces Unicorn's PMP check
through nor Unicorn's virtual TLB (vtlb.c) cannot run privlab exactly: the first hart
is refused (hartapi.c hart_new) and `privlab run` says so in one line. PRIVLAB_NO_PLT=1
makes plt.c find no slot, as on macOS; PRIVLAB_VTLB=0 turns the virtual TLB off, as in
a libunicorn without it (vtlb.c vtlb_mode)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REFUSAL = ("privlab: cannot run on this host: its libunicorn has neither the PLT slots for "
           "the core's PMP check (pmp.c) nor a virtual TLB (vtlb.c), see docs/install.md\n")


def run_hello(tmp_path: Path, **env_extra: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("PRIVLAB_PORTABLE", "PRIVLAB_VTLB", "PRIVLAB_NO_PLT")}
    return subprocess.run([sys.executable, "-m", "privlab", "run", "--user", "hello"],
                          env={**env, **env_extra}, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False)


def test_no_plt_and_no_virtual_tlb_refuses_in_one_line(tmp_path: Path) -> None:
    proc = run_hello(tmp_path, PRIVLAB_NO_PLT="1", PRIVLAB_VTLB="0")
    assert (proc.returncode, proc.stderr) == (1, REFUSAL)   # no traceback
    assert "Hello, world!" not in proc.stdout


def test_the_virtual_tlb_off_with_the_plt_there_runs(tmp_path: Path) -> None:
    # PRIVLAB_VTLB=0 alone takes nothing away: pmp.c's check goes in through the PLT.
    proc = run_hello(tmp_path, PRIVLAB_PORTABLE="1", PRIVLAB_VTLB="0")
    assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
    assert "Hello, world!" in proc.stdout
