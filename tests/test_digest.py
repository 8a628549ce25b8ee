"""privlab's SHA-256 (harness/digest.py) is hashlib's, whichever implementation runs."""

from __future__ import annotations

import hashlib
import subprocess
import sys

import pytest

from privlab.digest import BULK, sha256


@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 4096, BULK - 1, BULK, BULK + 1])
def test_the_digest_is_sha256_at_every_size(size: int) -> None:
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()


def test_updates_add_to_the_digest_as_hashlibs_do() -> None:
    h = sha256(b"elf")
    h.update(b"-facts")
    assert h.hexdigest() == hashlib.sha256(b"elf-facts").hexdigest()
    assert h.name == "sha256"


def test_small_data_does_not_load_openssl() -> None:
    """The point of the module: a run's keys are hashed without importing hashlib."""
    code = ("import sys\nfrom privlab.digest import sha256\nsha256(b'x' * 600_000).hexdigest()\n"
            "print('hashlib' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
