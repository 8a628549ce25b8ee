"""The C libraries are opened with lazy binding (harness/native/clib.py
`open_library`): ctypes' own open binds every call slot of every library it brings
in, for the core all of libunicorn's PLT, 1.5-2 ms of each start. Our own libraries
keep their check at load: zig links them with -z now, so a function no library
defines still stops the load, with its name, rather than the process at the call."""

from __future__ import annotations

import ctypes
import sys
from pathlib import Path

import pytest

from privlab.native import clib

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="lazy binding is asked of the ELF loader alone")

CALLS_A_MISSING_FUNCTION = """\
void privlab_no_such_function(void);
int answer(void) { return 42; }
void broken(void) { privlab_no_such_function(); }
"""


def _library(tmp_path: Path) -> clib.CLibrary:
    src = tmp_path / "src"
    src.mkdir()
    (src / "missing.c").write_text(CALLS_A_MISSING_FUNCTION)
    return clib.CLibrary("libmissing.so", src, ("missing.c",), (), "missing_gen.h",
                         lambda: "", unicorn=False, what="a library calling a missing function")


def test_a_library_built_as_ours_still_names_a_missing_function_at_load(
        tmp_path: Path) -> None:
    lib = _library(tmp_path)
    out = tmp_path / lib.name
    clib.compile_library(lib, out, "", clib.CFLAGS, tmp_path, [])
    with pytest.raises(OSError, match="undefined symbol: privlab_no_such_function"):
        clib.open_library(out)


def test_the_libraries_an_open_brings_in_are_bound_at_each_call(tmp_path: Path) -> None:
    """A library linked for lazy binding (as libunicorn is) loads only if its calls are
    bound as they are made: ctypes' own open binds them all and refuses it."""
    lib = _library(tmp_path)
    out = tmp_path / lib.name
    clib.compile_library(lib, out, "", (*clib.CFLAGS, "-Wl,-z,lazy"), tmp_path, [])
    with pytest.raises(OSError, match="undefined symbol: privlab_no_such_function"):
        ctypes.CDLL(str(out))
    assert clib.open_library(out).answer() == 42
