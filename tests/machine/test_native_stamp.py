"""The C libraries' up-to-date stamp (harness/native/clib.py): a command whose library
has not changed finds it from file sizes and mtimes, without hashing the sources or
reading zig's package metadata; any change to what a library is made from goes back
to the content-keyed build. The hart core and the trace analysis alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from privlab.native import clib
from privlab.native.library import HART_LIBRARY
from privlab.trace.library import TRACE_LIBRARY

LIBRARIES = pytest.mark.parametrize("lib", [HART_LIBRARY, TRACE_LIBRARY],
                                    ids=["hart", "trace"])


def _no_identity() -> str:
    raise AssertionError("compiler_identity was asked for")


@LIBRARIES
def test_an_unchanged_library_is_found_from_its_stamp(
        monkeypatch: pytest.MonkeyPatch, lib: clib.CLibrary) -> None:
    built = clib.built_library(lib)          # builds or finds it, and stamps it
    monkeypatch.setattr(clib, "compiler_identity", _no_identity)
    assert clib.built_library(lib) == built


@LIBRARIES
def test_a_changed_input_goes_back_to_the_content_keyed_build(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, lib: clib.CLibrary) -> None:
    clib.built_library(lib)
    extra = tmp_path / "extra.c"
    extra.write_text("/* one */\n")
    inputs = clib._stamp_inputs
    monkeypatch.setattr(clib, "_stamp_inputs", lambda lib: [*inputs(lib), extra])
    monkeypatch.setattr(clib, "compiler_identity", _no_identity)
    with pytest.raises(AssertionError, match="compiler_identity was asked for"):
        clib.built_library(lib)


def test_the_two_libraries_have_their_own_stamps_and_files() -> None:
    hart, trace = clib.built_library(HART_LIBRARY), clib.built_library(TRACE_LIBRARY)
    assert (hart.name, trace.name) == ("libprivlab_hart.so", "libprivlab_trace.so")
    assert hart.parent != trace.parent
