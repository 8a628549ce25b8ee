from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from privlab.machine import Machine, load_elf
from privlab.machine.assemble import boot_bare


@pytest.fixture
def bare() -> Callable[..., Machine]:
    """A fresh machine with a bare-metal ELF loaded, as `privlab run --bios none`."""
    machines: list[Machine] = []

    def make(elf: Path, **board: Any) -> Machine:
        image = load_elf(elf)
        m = Machine(image.xlen, **board)
        boot_bare(m, image)
        machines.append(m)
        return m

    yield make
    for m in machines:
        m.close()
