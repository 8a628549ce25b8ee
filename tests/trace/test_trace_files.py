"""The timeline decodes the file-system calls: paths, named openat flags, returned
descriptors."""

from __future__ import annotations

import re

import pytest

from privlab.cli.main import main
from privlab.trace.syscalls import open_flags_text


@pytest.mark.parametrize(("value", "text"), [
    (0x000, "O_RDONLY"),
    (0x001, "O_WRONLY"),
    (0x202, "O_RDWR|O_CREATE"),
    (0x601, "O_WRONLY|O_CREATE|O_TRUNC"),
    (0x801, "O_WRONLY|O_APPEND"),
    (0x003, "0x3"),                       # no such access mode
    (0x1000, "O_RDONLY|0x1000"),          # a bit abi.h does not define
])
def test_openat_flags_are_named_from_abi_h(value: int, text: str) -> None:
    assert open_flags_text(value) == text


def test_calls_format_decodes_paths_flags_and_descriptors(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "--format", "calls", "--user", "fscrash", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [re.match(r"\s*\d+\s+(\d+)\s+(.+?)\s{2,}(\S+)", line) for line in lines[1:]]
    got = [(m[2], m[3]) for m in rows if m is not None]
    assert got[:2] == [('mkdirat("d0", 0)', "0"), ('openat("d0/f0", O_WRONLY|O_CREATE, 0)', "3")]
    assert ("close(3)", "0") in got
    assert ('linkat("d0/f0", "l0")', "0") in got
    assert ('write(1, "step 0 done\\n", 12)', "12") in got
