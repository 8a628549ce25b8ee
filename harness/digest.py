"""SHA-256 for the keys privlab computes on every command, without loading OpenSSL.

`hashlib` loads OpenSSL's libcrypto when it is imported: about 2.5 ms, a tenth of what
twice QEMU's start-up allows a whole run. The keys a run computes cover a few kilobytes
to a few hundred (a build stamp's place, the compiled-code table's name), where
CPython's own SHA-256 (the module `random` uses for the same reason) is done sooner than
libcrypto is loaded. Data of BULK bytes or more goes to OpenSSL, which hashes three
times as fast. Both give the same digest: SHA-256 stays, since a weaker hash would let
a student hand the grader a file that collides with another's cached results.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import _Hash as Hash
    from hashlib import sha256 as _builtin
else:
    try:
        from _sha2 import sha256 as _builtin  # CPython 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256 as _builtin  # CPython 3.11
        except ImportError:                         # a build without them
            from hashlib import sha256 as _builtin

__all__ = ["BULK", "sha256"]

BULK = 4 << 20
"""From this many bytes on, OpenSSL's speed pays for loading it."""


def sha256(data: bytes = b"") -> Hash:
    """A SHA-256 hash object (hashlib's interface) over `data`; more may be added with
    `update`. `data` alone picks the implementation: what `update` adds later (a build
    key's file contents, say) is hashed by the same one, CPython's when `data` is
    small."""
    if len(data) >= BULK:
        import hashlib

        return hashlib.sha256(data)
    return _builtin(data)
