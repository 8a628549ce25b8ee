"""What a build compiles: `count_compiles(monkeypatch)` returns a list that from then on
gets the source of each compiler run with `-c` in this process (the build's thread
pool included), for tests that a build compiles exactly what it must."""

from __future__ import annotations

import pytest

from privlab.build import toolchain

__all__ = ["count_compiles"]


def count_compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    compiled: list[str] = []
    real = toolchain.run_compiler

    def counting(cmd: list[str], what: str) -> str:
        if "-c" in cmd:
            compiled.append(cmd[cmd.index("-c") + 1])
        return real(cmd, what)
    monkeypatch.setattr(toolchain, "run_compiler", counting)
    return compiled
