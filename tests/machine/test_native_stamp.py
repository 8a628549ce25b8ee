"""The C libraries' up-to-date stamp (harness/native/clib.py): a command whose library
has not changed finds it from file sizes and mtimes, without hashing the sources or
reading zig's package metadata; any change to what a library is made from goes back
to the content-keyed build. The hart core and the trace analysis alike."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from privlab.build import toolchain
from privlab.errors import NativeBuildError
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
    monkeypatch.setattr(toolchain, "compiler_identity", _no_identity)
    assert clib.built_library(lib) == built


@LIBRARIES
def test_a_changed_input_goes_back_to_the_content_keyed_build(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, lib: clib.CLibrary) -> None:
    clib.built_library(lib)
    extra = tmp_path / "extra.c"
    extra.write_text("/* one */\n")
    inputs = clib._stamp_inputs
    monkeypatch.setattr(clib, "_stamp_inputs", lambda lib: [*inputs(lib), extra])
    monkeypatch.setattr(toolchain, "compiler_identity", _no_identity)
    with pytest.raises(AssertionError, match="compiler_identity was asked for"):
        clib.built_library(lib)


def test_the_two_libraries_have_their_own_stamps_and_files() -> None:
    hart, trace = clib.built_library(HART_LIBRARY), clib.built_library(TRACE_LIBRARY)
    assert (hart.name, trace.name) == ("libprivlab_hart.so", "libprivlab_trace.so")
    assert hart.parent != trace.parent


def _tiny_library(tmp_path: Path) -> tuple[clib.CLibrary, Path]:
    src = tmp_path / "src"
    src.mkdir(parents=True)
    (src / "tiny.c").write_text("int tiny(void) { return 1; }\n")
    lib = clib.CLibrary("libtiny.so", src, ("tiny.c",), (), "tiny_gen.h", lambda: "",
                        unicorn=False, what="a tiny library")
    return lib, src / "tiny.c"


def test_a_source_edited_while_compiling_is_built_again_under_its_new_key(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Cached under the key of what it was not built from, a library would disagree
    with its own header on every later run: the build is thrown away and redone."""
    monkeypatch.setenv("PRIVLAB_CACHE", str(tmp_path / "cache"))
    lib, source = _tiny_library(tmp_path)
    real, calls = clib.compile_library, []

    def editing(*args: object, **kwargs: object) -> None:
        real(*args, **kwargs)  # type: ignore[arg-type]
        calls.append(1)
        if len(calls) == 1:
            source.write_text("int tiny(void) { return 2; }\n")

    monkeypatch.setattr(clib, "compile_library", editing)
    built = clib._build(lib)
    assert len(calls) == 2
    assert built.parent.name == clib._key(lib, "")
    assert [p.name for p in (tmp_path / "cache" / "native").iterdir()
            if (p / "libtiny.so").exists()] == [built.parent.name]


def test_a_source_that_keeps_changing_is_one_line(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PRIVLAB_CACHE", str(tmp_path / "cache"))
    lib, source = _tiny_library(tmp_path)
    real, n = clib.compile_library, iter(range(100))

    def editing(*args: object, **kwargs: object) -> None:
        real(*args, **kwargs)  # type: ignore[arg-type]
        source.write_text(f"int tiny(void) {{ return {next(n) + 10}; }}\n")

    monkeypatch.setattr(clib, "compile_library", editing)
    with pytest.raises(NativeBuildError) as e:
        clib._build(lib)
    assert str(e.value) == ("cannot build a tiny library: its sources changed during each of "
                            "3 builds; run again once they are saved")


def test_two_installs_sharing_a_cache_keep_a_stamp_each(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A checkout's venv and a wheel's share ~/.cache/privlab: runs that alternate
    between them each find their own stamp, not the other's (which would send every
    run back to the content-keyed build's key: the compiler's identity, hashing)."""
    monkeypatch.setenv("PRIVLAB_CACHE", str(tmp_path / "cache"))
    one, first = _tiny_library(tmp_path / "one")
    other, second = _tiny_library(tmp_path / "other")
    for source in (first, second):          # old enough to stamp (stamp.RACY_NS)
        os.utime(source, ns=(time.time_ns() - 10**10,) * 2)
    built = clib.built_library(one), clib.built_library(other)
    assert built[0] == built[1]             # the same content: one build in the cache
    monkeypatch.setattr(toolchain, "compiler_identity", _no_identity)
    for _ in range(2):
        assert (clib.built_library(one), clib.built_library(other)) == built
