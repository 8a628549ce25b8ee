"""Names of SBI calls (an `ecall` from S into the firmware), from kernel/include/sbi.h.

The header is the single source: `SBI_EXT_<NAME>` gives an extension ID (a7),
`SBI_<NAME>_<FUNC>` a function ID (a6) of that extension, and `SBI_LEGACY_<NAME>`
a legacy call, whose extension ID is the function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..abi.platform import parse_defines
from ..paths import KERNEL_DIR

__all__ = ["SBI_EXTENSION_REG", "SBI_FUNCTION_REG", "SBI_HEADER", "SbiNames", "load_sbi_names"]

SBI_HEADER = KERNEL_DIR / "include" / "sbi.h"
LEGACY_MAX = 0x0F  # legacy extension IDs are 0x00..0x0F (SBI spec, chapter 5)
SBI_EXTENSION_REG = 7  # a7: the extension ID (an index into TrapEvent.args)
SBI_FUNCTION_REG = 6   # a6: the function ID


@dataclass(frozen=True)
class SbiNames:
    """SBI extension and function names, by EID and FID."""
    extensions: dict[int, str] = field(default_factory=dict)          # EID -> "DBCN"
    functions: dict[tuple[int, int], str] = field(default_factory=dict)  # (EID, FID)
    legacy: dict[int, str] = field(default_factory=dict)              # EID -> "SHUTDOWN"

    def name(self, eid: int, fid: int) -> str:
        """`DBCN.WRITE`, `legacy.CONSOLE_PUTCHAR`, or the numbers when unknown."""
        if eid <= LEGACY_MAX and eid in self.legacy:
            return f"legacy.{self.legacy[eid]}"
        ext = self.extensions.get(eid)
        if ext is None:
            return f"ext {eid:#x}.{fid}"
        return f"{ext}.{self.functions.get((eid, fid), str(fid))}"

    def known(self) -> set[str]:
        """Every call the header names, as `name` spells them."""
        out = {f"legacy.{n}" for n in self.legacy.values()}
        return out | {self.name(eid, fid) for eid, fid in self.functions}


def load_sbi_names(header: Path = SBI_HEADER) -> SbiNames:
    try:
        defs = parse_defines(header)
    except OSError:
        return SbiNames()
    exts = {name[len("SBI_EXT_"):]: v for name, v in defs.items() if name.startswith("SBI_EXT_")}
    out = SbiNames({v: n for n, v in exts.items()})
    for name, v in defs.items():
        if name.startswith("SBI_LEGACY_"):
            out.legacy.setdefault(v, name[len("SBI_LEGACY_"):])
            continue
        for ext, eid in exts.items():
            prefix = f"SBI_{ext}_"
            if name.startswith(prefix):
                out.functions.setdefault((eid, v), name[len(prefix):])
    return out
