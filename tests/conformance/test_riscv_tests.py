"""The public riscv-tests ISA binaries (docs/conformance.md, "The public riscv-tests"),
when a directory of them is given: PRIVLAB_RISCV_TESTS=DIR runs every `*-p-*` and
`*-v-*` binary there (not the `.dump` listings) as `privlab run --bios none --kernel
TEST` does, each to end as on QEMU 7.2 with its default CPU: through HTIF with exit
status 0, except in the suites of extensions that CPU leaves out (ABSENT), which fail
there at their first instruction of the extension, and must here. They are not
vendored, so without the variable this is skipped. Run it once with PRIVLAB_PORTABLE=1 and once
without for the two modes (docs/install.md).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_bare

DIR = os.environ.get("PRIVLAB_RISCV_TESTS")

# Suites of extensions QEMU 7.2's default CPU does not have, and neither does privlab:
# Zbkb, Zbkx, Zfh and Zicboz. (Zba, Zbb, Zbc and Zbs it has: harness/native/bitmanip.c.)
ABSENT = ("uzbkb-", "uzbkx-", "uzfh-", "mzicbo-")
# Tests of those suites that use no instruction of the extension, and pass on QEMU 7.2.
PASS_ANYWAY = ("uzfh-p-recoding", "uzfh-v-recoding")   # single precision only


def passes_on_qemu(elf: Path) -> bool:
    name = elf.name
    return not any(s in name for s in ABSENT) or any(name.endswith(s) for s in PASS_ANYWAY)


def binaries() -> list[Path]:
    if not DIR:
        return []
    return sorted(p for pat in ("*-p-*", "*-v-*") for p in Path(DIR).glob(pat)
                  if not p.suffix)


@pytest.mark.skipif(not DIR, reason="PRIVLAB_RISCV_TESTS names no directory of riscv-tests")
@pytest.mark.parametrize("elf", binaries(), ids=lambda p: p.name)
def test_riscv_test_passes(elf: Path) -> None:
    image = load_elf(elf)
    m = Machine(image.xlen, keep_events=False)
    boot_bare(m, image)
    if passes_on_qemu(elf):
        r = m.run(max_insns=100_000_000)
        assert (r.stop, r.exit_status) == (Stop.HALT, 0), r.message
    else:
        # `p`: the illegal instruction, within the first few thousand instructions,
        # fails the test (HTIF, status = its number); `v`: its handler then faults on
        # its own stores for good (a trap every 3 instructions), as on QEMU, until the
        # budget.
        r = m.run(max_insns=1_000_000)
        assert (r.stop, r.exit_status) != (Stop.HALT, 0), r.message
