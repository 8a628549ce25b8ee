"""Where a graded submission came from, for the gradebook: its git commit (read from
the files of its `.git/`, without running git, whose configuration a submission
controls) and the time it was graded."""

from __future__ import annotations

import re
import zlib
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["commit_of", "commit_time", "now_utc"]

_HASH = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_MAX_READ = 1 << 20


def _inside(path: Path, root: Path) -> bool:
    """`path` is a regular file whose real place is inside `root` (no link leads out)."""
    try:
        return path.resolve().is_relative_to(root.resolve()) and not path.is_symlink() \
            and path.is_file()
    except OSError:
        return False


def _read(path: Path, root: Path) -> str | None:
    """A regular file's text inside the repository; None for a link or anything odd."""
    try:
        if not _inside(path, root) or path.stat().st_size > _MAX_READ:
            return None
        return path.read_text(errors="replace")
    except OSError:
        return None


def commit_of(submission: Path) -> str:
    """The commit `submission`'s HEAD names, or "" when it is no git repository (or
    HEAD names a branch without commits, or `.git` is a link or a file)."""
    git = submission / ".git"
    if git.is_symlink() or not git.is_dir():
        return ""
    head = (_read(git / "HEAD", git) or "").strip()
    for _ in range(5):      # a symbolic ref may name another
        if _HASH.match(head):
            return head
        if not head.startswith("ref: "):
            return ""
        ref = head[5:].strip()
        if ".." in Path(ref).parts or not ref.startswith("refs/"):
            return ""
        loose = _read(git / ref, git)
        if loose is not None:
            head = loose.strip()
            continue
        for line in (_read(git / "packed-refs", git) or "").splitlines():
            parts = line.split(" ", 1)
            if len(parts) == 2 and parts[1] == ref and _HASH.match(parts[0]):
                return parts[0]
        return ""
    return ""


def commit_time(submission: Path, commit: str) -> str:
    """The committer's time of `commit` (UTC, ISO 8601) if its object is loose in the
    repository, else ""."""
    path = submission / ".git" / "objects" / commit[:2] / commit[2:]
    try:
        if not _inside(path, submission / ".git") or path.stat().st_size > _MAX_READ:
            return ""
        raw = zlib.decompressobj().decompress(path.read_bytes(), 64 * 1024)
    except (OSError, zlib.error):
        return ""
    match = re.search(rb"^committer .* (\d+) [+-]\d{4}$", raw, re.M)
    if match is None:
        return ""
    return datetime.fromtimestamp(int(match[1]), UTC).isoformat(timespec="seconds")


def now_utc() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
