"""Help is laid out at the width argparse's own formatter would choose, without shutil."""

from __future__ import annotations

import argparse
import shutil

import pytest

from privlab.cli.helplayout import HelpLayout, terminal_columns


@pytest.mark.parametrize("columns", [None, "60", "132", "0", "-5", "wide"])
def test_the_width_is_shutils(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns
    assert HelpLayout("privlab")._width == argparse.HelpFormatter("privlab")._width


def test_options_wrap_at_columns_and_the_description_keeps_its_lines(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "50")
    p = argparse.ArgumentParser(prog="privlab run", formatter_class=HelpLayout,
                                description="first line\n  an example, indented\n")
    p.add_argument("--trace-out", metavar="FILE", help="write every trap and xRET " * 4)
    text = p.format_help()
    assert "first line\n  an example, indented\n" in text
    options = text[text.index("--trace-out"):].splitlines()
    assert len(options) > 2 and all(len(line) <= 48 for line in options)
