"""The environment of a child Python a test starts with `python -c`: this one's, with
the tests' directory (for `machine.asm` and the other helpers) and the repository (for
`privlab` without an install) on its path."""

from __future__ import annotations

import os
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent


def child_env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), str(TESTS.parent)]))
