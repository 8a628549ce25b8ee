"""The one default instruction budget: what a graded run gets, and what `privlab trace`,
`inspect`, `pagetable` and `translate` stop after unless `--max-insns N` says otherwise.

Counted in instructions, never seconds, so a slow host stops where a fast one does.
`privlab run` has no default budget: it is the interactive machine (a shell waits for
you; Ctrl-C stops it). Kept free of the machine: the command line reads it for --help.
"""

from __future__ import annotations

__all__ = ["DEFAULT_MAX_INSNS"]

DEFAULT_MAX_INSNS = 150_000_000  # ~1-2 s on the slowest host we grade on
