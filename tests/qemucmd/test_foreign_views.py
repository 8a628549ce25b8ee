"""The views on a kernel that lacks privlab's structures degrade (None, a `?`), never
stop the command: tests/qemucmd/foreign_kernel.c has DWARF and none of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from privlab.build.baremetal import build_baremetal
from privlab.build.toolchain import ARCHES
from privlab.errors import BadInput
from privlab.kernelinfo.dwarf import MissingStructure
from privlab.kernelinfo.mirrors import KernelInfo
from privlab.machine import load_elf
from privlab.machine.assemble import new_bare
from privlab.trace.capture import LiveCapture

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def foreign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("foreign") / "foreign_kernel.elf"
    return build_baremetal([HERE / "foreign_kernel.c"], ARCHES["rv64"], out, listings=False)


def test_a_missing_global_is_bad_input_in_one_line_and_a_key_error(foreign: Path) -> None:
    kernel = KernelInfo.load(foreign)
    m = new_bare(load_elf(foreign))
    with pytest.raises(MissingStructure) as caught:
        kernel.current_pid(m.memory)
    assert isinstance(caught.value, BadInput) and isinstance(caught.value, KeyError)
    assert str(caught.value) == "foreign_kernel.elf: no global variable 'cpu' in its DWARF"


def test_the_trace_asks_who_runs_and_gets_no_answer_instead_of_an_error(
        foreign: Path) -> None:
    m = new_bare(load_elf(foreign))
    kernel = KernelInfo.load(foreign)
    live = LiveCapture(m, lambda: kernel)
    assert (live.whoami(), live.thread()) == (None, None)
