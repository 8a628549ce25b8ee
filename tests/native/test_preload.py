"""harness/native/preload.py: a command that boots a machine has the native core loaded
on a thread of its own while the command line is imported, and then opens the very
library the thread loaded; a core that must be built first is not touched there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from machine.asm import build_asm

from privlab.cli.main import COMMANDS
from privlab.entry import BOOTS
from privlab.native.library import library_path


def _probe(body: str, timeout: float = 60) -> dict[str, object]:
    """Run `body` in a fresh interpreter; return the `out` it fills."""
    code = "import json, os, sys\nout = {}\n" + textwrap.dedent(body) + \
        "\nprint(json.dumps(out))\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def _mapped(path: str) -> str:
    """Code that says whether `path` is mapped into the probe's process."""
    return f"open('/proc/self/maps').read().count({path!r}) > 0"


@pytest.fixture(scope="module")
def core() -> str:
    return str(library_path())      # built and stamped, as a user's second run finds it


def test_a_run_loads_the_core_before_it_imports_the_machine(core: str) -> None:
    out = _probe(f"""
        sys.argv = ["privlab", "run", "--bios", "none", "--kernel", "x"]
        from privlab import entry
        entry._preload_core()
        from privlab.native.preload import preloaded_core
        out["path"] = str(preloaded_core())
        out["mapped"] = {_mapped(core)}
        out["machine"] = "privlab.machine.hart" in sys.modules
        from privlab.native.library import load_library
        lib = load_library()
        import ctypes
        noload = ctypes.CDLL(None).dlopen
        noload.restype, noload.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int]
        out["same"] = noload(out["path"].encode(), os.RTLD_NOW | os.RTLD_NOLOAD) == lib._handle
    """)
    assert out == {"path": core, "mapped": True, "machine": False, "same": True}


@pytest.mark.parametrize("command", ["build", "grade", "lab", "disk"])
def test_a_command_that_boots_nothing_here_loads_no_core(core: str, command: str) -> None:
    out = _probe(f"""
        sys.argv = ["privlab", {command!r}, "--help"]
        from privlab import entry
        entry._preload_core()
        from privlab.native.preload import preloaded_core
        out["path"] = preloaded_core()
        out["mapped"] = {_mapped(core)}
    """)
    assert out == {"path": None, "mapped": False}


def test_a_core_that_must_be_built_is_not_loaded_on_the_thread(core: str) -> None:
    """A stale stamp: the build belongs to load_library, with its progress shown."""
    out = _probe(f"""
        import privlab.native.clib as clib
        clib.stamped_library = lambda lib: None
        from privlab.native.preload import preload_core, preloaded_core
        preload_core()
        out["path"] = preloaded_core()
        out["mapped"] = {_mapped(core)}
    """)
    assert out == {"path": None, "mapped": False}


def test_a_fork_waits_for_the_loader() -> None:
    """A child forked while the thread is inside dlopen loads libraries of its own: it
    must not inherit the loader's lock held (glibc sees to that itself; preload.py
    waits for the thread before any fork, for a C library that does not)."""
    out = _probe("""
        import ctypes
        from privlab.native.preload import preload_core
        preload_core()
        import time
        time.sleep(0.001)               # the thread is inside dlopen now
        pid = os.fork()
        if pid == 0:
            ctypes.CDLL("libm.so.6")
            os._exit(7)
        out["status"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    """, timeout=30)
    assert out == {"status": 7}


def test_the_commands_that_preload_are_commands_that_boot_here() -> None:
    assert BOOTS.issubset(COMMANDS)
    assert not BOOTS & {"build", "disk", "lab", "grade"}   # lab and grade boot in workers


def test_the_console_script_runs_and_answers_help_with_the_thread_at_work() -> None:
    proc = subprocess.run([sys.executable, "-m", "privlab", "run", "--help"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("usage: privlab run"), proc.stderr



def test_a_cache_that_cannot_be_made_is_reported_in_one_line(tmp_path: Path) -> None:
    """The preload meets it first, and leaves it to the command to report."""
    kernel = build_asm("PASS")
    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = subprocess.run([sys.executable, "-m", "privlab", "run", "--bios", "none",
                           "--kernel", str(kernel)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PRIVLAB_CACHE": str(blocker / "x")})
    assert (proc.returncode, proc.stderr) == (1, f"privlab: {blocker / 'x'}: Not a directory\n")
