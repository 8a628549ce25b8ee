"""The default instruction budgets: what a graded run gets, and what `privlab trace`,
`inspect`, `pagetable` and `translate` stop after unless `--max-insns N` says otherwise.

Counted in instructions, never seconds, so a slow host stops where a fast one does.
`privlab run` has no default budget: it is the interactive machine (a shell waits for
you; Ctrl-C stops it). Kept free of the machine: the command line reads it for --help.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_INSNS", "INSPECT_MAX_INSNS"]

DEFAULT_MAX_INSNS = 150_000_000  # a graded run: ~1-2 s on the slowest host we grade on

# The inspectors look at the kernels people run, not only the labs' short programs: the
# uCore course's chapter 4 and later kernels take about 400 million instructions to
# boot, xv6 about 100 million. A person is watching (Ctrl-C stops any of them).
INSPECT_MAX_INSNS = 1_000_000_000
