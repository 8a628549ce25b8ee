"""The native core's up-to-date stamp: a command whose core has not changed finds its
library from file sizes and mtimes, without hashing the sources or reading zig's
package metadata; any change to what the core is made from goes back to the
content-keyed build."""

from __future__ import annotations

from pathlib import Path

import pytest

from privlab.native import library


def _no_identity() -> str:
    raise AssertionError("compiler_identity was asked for")


def test_an_unchanged_core_is_found_from_its_stamp(monkeypatch: pytest.MonkeyPatch) -> None:
    built = library.library_path()          # builds or finds it, and stamps it
    monkeypatch.setattr(library, "compiler_identity", _no_identity)
    assert library.library_path() == built


def test_a_changed_input_goes_back_to_the_content_keyed_build(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    library.library_path()
    extra = tmp_path / "extra.c"
    extra.write_text("/* one */\n")
    inputs = library._stamp_inputs
    monkeypatch.setattr(library, "_stamp_inputs",
                        lambda include, libdir: [*inputs(include, libdir), extra])
    monkeypatch.setattr(library, "compiler_identity", _no_identity)
    with pytest.raises(AssertionError, match="compiler_identity was asked for"):
        library.library_path()
