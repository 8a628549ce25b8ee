"""The success token of one graded test run: printed by the trusted test program when
its checks pass, fresh for every run, so a kernel that only prints a success message
(or one it saw in an earlier run) scores nothing."""

from __future__ import annotations

import secrets

__all__ = ["new_token"]


def new_token() -> str:
    """A success token nobody can guess: fresh for every test run."""
    return secrets.token_hex(8)
