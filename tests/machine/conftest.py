from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harness.machine import Machine, load_elf
from harness.machine.assemble import boot_bare


@pytest.fixture
def bare() -> Callable[[Path], Machine]:
    """A fresh machine with a bare-metal ELF loaded, as `privlab run --bios none`."""
    machines: list[Machine] = []

    def make(elf: Path) -> Machine:
        image = load_elf(elf)
        m = Machine(image.xlen)
        boot_bare(m, image)
        machines.append(m)
        return m

    yield make
    for m in machines:
        m.close()
