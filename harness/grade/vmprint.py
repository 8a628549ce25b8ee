"""What a kernel's vmprint printed at boot, held against what it must print (computed
from the page table in guest memory, `checks.vmprint_lines`), in three parts that
score apart: the header, the interior entries, every entry.

The printed block is everything the kernel wrote from its `page table` line until the
first process entered user mode (with `quiet`, vmprint is the kernel's only output
while it boots), so an entry in the wrong format is not lost: it is reported as
misformatted, with the lines the kernel printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .checks import first_user_page_table, vmprint_lines
from .errors import GradeFailure
from .graded_boot import KernelRun, printable

__all__ = ["ENTRY", "HEADER", "Vmprint", "vmprint_at_boot"]

HEADER = "page table"
# One valid PTE (labs/vmprint/README.md): " .." per level, index, pte, pa; a leaf also
# its va and rwxu permissions.
ENTRY = re.compile(r"(?: \.\.)+\d+: pte 0x[0-9a-f]+ pa 0x[0-9a-f]+"
                   r"(?: va 0x[0-9a-f]+ [r-][w-][x-][u-])?")
SHOWN_LINES = 40      # of the printed block, in a failure


def _is_leaf(line: str) -> bool:
    return " va " in line


@dataclass(frozen=True)
class Vmprint:
    """`expected`: header and entries vmprint must print. `printed`: the boot's lines
    from the first `page table` line on (all of them when there is none;
    `has_header` says which)."""

    expected: list[str]
    printed: list[str]
    has_header: bool

    def _fail(self, message: str) -> None:
        shown = [f"  | {printable(line)}" for line in self.printed[:SHOWN_LINES]]
        if len(self.printed) > SHOWN_LINES:
            shown.append(f"  ({len(self.printed) - SHOWN_LINES} more lines)")
        printed = ("the kernel printed, from its header to the first process:\n"
                   + "\n".join(shown)) if shown else \
            "the kernel printed nothing before the first process ran"
        raise GradeFailure(f"{message}\n{printed}")

    def expect_header(self) -> None:
        """The header names the root page table; entries or none, it scores alone."""
        want = self.expected[0]
        if not self.has_header:
            self._fail(f"expected the header {want!r}; no line starts with {HEADER!r}")
        if self.printed[0] != want:
            self._fail(f"expected the header {want!r}, got {printable(self.printed[0])!r}")

    def expect_entries(self, *, leaves: bool) -> None:
        """The printed entries are vmprint's: the interior ones only (`leaves` False),
        or every one. A line in neither format fails as misformatted."""
        first = 1 if self.has_header else 0
        printed = list(enumerate(self.printed[first:], first + 1))   # line numbers
        expected = self.expected[1:]
        if not leaves:
            printed = [(n, line) for n, line in printed if not _is_leaf(line)]
            expected = [line for line in expected if not _is_leaf(line)]
        bad = [(n, line) for n, line in printed if not ENTRY.fullmatch(line)]
        if bad:
            what = "entry is" if len(bad) == 1 else "entries are"
            listed = "\n".join(f"  line {n}: {printable(line)!r}" for n, line in bad[:10])
            more = f"\n  ({len(bad) - 10} more)" if len(bad) > 10 else ""
            self._fail(f"{len(bad)} printed {what} misformatted (the format: "
                       f"labs/vmprint/README.md):\n{listed}{more}")
        for (n, have), want in zip(printed, expected, strict=False):
            if have != want:
                self._fail(f"line {n}: expected {want!r}\n        got      {printable(have)!r}")
        if len(printed) != len(expected):
            kind = "entries" if leaves else "interior entries"
            self._fail(f"expected {len(expected)} {kind}, the kernel printed {len(printed)}")


def vmprint_at_boot(run: KernelRun, within: int) -> Vmprint:
    """Run until the first process enters user mode: what vmprint must print for its
    page table, and what the kernel printed while it booted."""
    expected = vmprint_lines(run, first_user_page_table(run, within))
    boot = run.lines()
    start = next((i for i, line in enumerate(boot) if line.startswith(HEADER)), None)
    return Vmprint(expected, boot[start or 0:], start is not None)
