"""A closed output pipe ends a command quietly with the status `cat` has there: 141,
128 + SIGPIPE, as bash shows it under `set -o pipefail` (it was 1, the status
of a kernel panic). privlab ignores SIGPIPE as Python does, sees EPIPE, exits 141."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from privlab.paths import REPO_ROOT

PRIVLAB = shlex.join([sys.executable, "-m", "privlab"])


def pipeline(command: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`command | head -2` beside `cat BIG | head -2`, each followed by the status of
    its first stage."""
    big = tmp_path / "big.txt"
    big.write_text("".join(f"{i}\n" for i in range(200_000)))   # more than a pipe holds
    script = (f"set -o pipefail; cat {big} | head -2 > /dev/null; echo \"cat ${{PIPESTATUS[0]}}\"; "
              f"{command} | head -2; echo \"privlab ${{PIPESTATUS[0]}}\"")
    return subprocess.run(["bash", "-c", script], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300, check=False)


@pytest.mark.parametrize("command, head", [
    (f"{PRIVLAB} run --user usertests", ["Hello, world!", "argv[1] = from"]),
    (f"{PRIVLAB} tour", ["privlab tour: the life of one system call",
                         "  hello prints one line. We boot the teaching kernel, run hello, "
                         "and follow its write() through the "]),
    (f"{PRIVLAB} trace --no-capture --user sleep 2",              # 270 KB of rows
     ["   seq    instret  U     S     M     path    event",
      "     0         62  ·     ◀━━━━━●     S       mret  kernel  to _entry"]),
    # a trace that would run for hours: rows stream, so head's exit ends it (it
    # printed nothing until the end of the run before)
    (f"{PRIVLAB} trace --max-insns 100000000000 --user compute 100000000000",
     ["   seq    instret  U     S     M     path    event",
      "     0         62  ·     ◀━━━━━●     S       mret  kernel  to _entry"]),
    # (exit: a row with no kernel instruction count, which moves with every kernel change)
    (f"{PRIVLAB} trace --format calls --syscall exit --user usertests",
     ["    seq   pid  call                                          result            "
      "kernel insns  where",
      "    104     3  exit(0)                                       does not return          "
      "       at exit+0x4"]),
], ids=["run", "tour", "trace", "trace-forever", "trace-calls"])
def test_a_closed_pipe_is_cats_status(command: str, head: list[str], tmp_path: Path) -> None:
    p = pipeline(command, tmp_path)
    assert p.stdout.splitlines() == ["cat 141", *head, "privlab 141"]
    assert p.stderr == ""
