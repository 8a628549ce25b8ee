"""What a batch sends to a grading worker and how it recognises work already done: a
submission's `kernel/` (and the hidden tests) as a tar archive in memory, content
hashes of a submission and of a lab's version, and a GradeReport as JSON."""

from __future__ import annotations

import hashlib
import importlib.metadata
import io
import os
import stat
import tarfile
from pathlib import Path
from typing import Any

from ..errors import PrivlabError
from ..grade.labs import Lab
from ..grade.model import GradeReport, TestResult

__all__ = ["MAX_PACKED_BYTES", "content_hash", "lab_version", "pack", "report_from_json",
           "report_to_json", "unpack"]

MAX_PACKED_BYTES = 64 << 20
_IGNORED = frozenset({".git", "__pycache__"})


def _files(root: Path) -> list[Path]:
    """Every entry under `root`, in a fixed order; ignored directories left out; links
    never followed into directories."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _IGNORED)
        found += [Path(dirpath) / d for d in dirnames]
        found += [Path(dirpath) / f for f in sorted(filenames)]
    return found


def content_hash(root: Path, *, parts: tuple[str, ...] = ()) -> str:
    """A digest of the names and bytes of the regular files under `root` (and where
    its links point), plus `parts`: the same content anywhere hashes the same."""
    h = hashlib.sha256()
    for part in parts:
        h.update(b"P%d:%s" % (len(part), part.encode()))
    if root.is_dir():
        for path in _files(root):
            rel = os.fsencode(path.relative_to(root))
            if path.is_symlink():
                h.update(b"L" + rel + b"\0" + os.fsencode(os.readlink(path)))
            elif path.is_file():
                data = path.read_bytes()
                h.update(b"F%d:" % len(data) + rel + b"\0" + data)
    return h.hexdigest()[:32]


def lab_version(lab: Lab, hidden: Path | None) -> str:
    """What a lab's grade depends on besides the submission: privlab's version, the
    lab's tests (base tests and hidden tests among them) and its reference kernel."""
    from ..paths import KERNEL_DIR, USERLAND_DIR

    try:
        version = importlib.metadata.version("privlab")
    except importlib.metadata.PackageNotFoundError:   # run from a checkout, not installed
        version = "checkout"
    parts = (version, *(content_hash(p) for p in lab.test_paths(hidden=hidden)),
             content_hash(KERNEL_DIR), content_hash(USERLAND_DIR))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def hard_linked_outside(root: Path) -> list[Path]:
    """The regular files under `root` (relative paths) with a hard link outside it."""
    seen: dict[tuple[int, int], list[Path]] = {}
    links: dict[tuple[int, int], int] = {}
    for path in _files(root):
        info = path.lstat()
        if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
            key = (info.st_dev, info.st_ino)
            seen.setdefault(key, []).append(path.relative_to(root))
            links[key] = info.st_nlink
    return [p for key, paths in seen.items() if len(paths) < links[key] for p in paths]


def _keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    """Regular files, directories and links; a pipe or device never travels."""
    if not (info.isreg() or info.isdir() or info.issym()):
        return None
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def pack(root: Path) -> bytes:
    """`root` as a gzip tar archive (empty when `root` does not exist). A regular file
    with a hard link outside `root` travels as a symbolic link to its own path here,
    which staging refuses as leading outside the submission."""
    buffer = io.BytesIO()
    outside = {str(root / p) for p in hard_linked_outside(root)} if root.is_dir() else set()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        if root.is_dir():
            for path in _files(root):
                try:
                    mode = path.lstat().st_mode
                except OSError:
                    continue
                if stat.S_ISREG(mode) and path.stat().st_size > MAX_PACKED_BYTES:
                    continue
                if str(path) in outside:
                    info = tarfile.TarInfo(str(path.relative_to(root)))
                    info.type, info.linkname = tarfile.SYMTYPE, str(path.absolute())
                    tar.addfile(info)
                    continue
                try:
                    tar.add(path, arcname=str(path.relative_to(root)), recursive=False,
                            filter=_keep)
                except OSError:
                    continue  # unreadable: the worker's build names what is missing
    data = buffer.getvalue()
    if len(data) > MAX_PACKED_BYTES:
        raise PrivlabError(f"{root}: larger than {MAX_PACKED_BYTES >> 20} MiB packed")
    return data


def unpack(data: bytes, target: Path) -> None:
    """Extract a packed tree into `target` with Python's `data` filter: nothing is
    written outside `target` or through a link, no device or special bit comes out.
    A symbolic link the filter refuses (absolute, or leading outside) is made as the
    link it was, never followed, so that staging refuses the submission naming it
    (harness/course/submission_build.py), as it would have on the batch's machine."""
    target.mkdir(parents=True, exist_ok=True)
    refused: list[tuple[Path, str]] = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar:
            try:
                kept = tarfile.data_filter(member, str(target))
            except tarfile.FilterError:
                if member.issym():
                    # Where the link goes is refused; where it sits must pass the filter.
                    placed = tarfile.data_filter(member.replace(linkname="."), str(target))
                    refused.append((target / placed.name, member.linkname))
                continue
            tar.extract(kept, target, filter="fully_trusted")
    for path, linkname in refused:
        if path.parent.resolve().is_relative_to(target.resolve()) and not path.exists():
            os.symlink(linkname, path)


def report_to_json(report: GradeReport) -> dict[str, Any]:
    return {"lab": report.lab, "submission": report.submission,
            "tests": [t.to_json() for t in report.tests],
            "execution_time": report.execution_time, "built": report.built,
            "build_output": report.build_output, "notes": list(report.notes),
            "commit": report.commit, "committed_at": report.committed_at,
            "graded_at": report.graded_at}


def report_from_json(data: dict[str, Any]) -> GradeReport:
    return GradeReport(str(data["lab"]), str(data["submission"]),
                       [TestResult.from_json(t) for t in data.get("tests", [])],
                       float(data.get("execution_time", 0.0)), bool(data.get("built", True)),
                       str(data.get("build_output", "")),
                       [str(n) for n in data.get("notes", [])],
                       commit=str(data.get("commit", "")),
                       committed_at=str(data.get("committed_at", "")),
                       graded_at=str(data.get("graded_at", "")))
