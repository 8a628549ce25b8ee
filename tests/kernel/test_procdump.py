"""Ctrl-P at the console (kernel/console.c, kernel/procdump.c): the bundled kernel
prints its process table, each sleeping process's wait channel named as
`privlab inspect` names it, and the reader gets the bytes around the key as if it had
not been typed."""

from __future__ import annotations

import subprocess
import sys


def test_ctrl_p_prints_the_process_table_and_reads_go_on() -> None:
    r = subprocess.run([sys.executable, "-m", "privlab", "run", "--input",
                        r"ec\x10ho hi\ncat | wc\nab\x10c\n"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    shown = r.stdout.split("initrd: ", 1)[1].split("\n", 1)[1]
    assert shown == (
        "$ ec\n"
        "procdump:\n"
        "  pid 1 SLEEPING init waits on proc[0] (pid 1)\n"
        "  pid 2 RUNNING sh on hart 0\n"
        "ho hi\n"             # the shell's echo of the rest of the line it read
        "hi\n"                # `echo hi`: the shell read the line without the key
        "$ cat | wc\n"
        "\n"
        "procdump:\n"
        "  pid 1 SLEEPING init waits on proc[0] (pid 1)\n"
        "  pid 2 SLEEPING sh waits on proc[1] (pid 2)\n"
        "  pid 4 RUNNING cat on hart 0\n"
        "  pid 5 RUNNABLE sh\n"), r.stdout
    assert "console input ended" in r.stderr
