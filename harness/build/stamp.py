"""The build's up-to-date stamp: `build_images` answers "nothing changed" from file
sizes and modification times, without compiling, hashing or linking anything.

A successful build writes a stamp, `<cache>/stamps/<hash of the output directory>.marshal`
(in the cache, not beside the outputs: it holds this machine's paths, and the outputs
are the same bytes in every checkout; marshalled, since a stamp is read by this machine's
Python alone, which would otherwise import json for it at every run): the build's
parameters and the (size, mtime_ns) of every file it read (the kernel and userland
trees, the harness's own Python and data files that generate sources, the zig binary)
and of every file it wrote. The next build whose parameters and files all stat the same returns the
stamped outputs; any difference, or no stamp, means the full content-keyed build
(toolchain.py), which writes a new stamp. A file changed within `RACY_NS` of the
stamp could change again within the file system's timestamp granularity unseen, so
such a build writes no stamp (git's "racily clean" rule).
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..digest import sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["RACY_NS", "check_stamp", "harness_inputs", "input_files", "stamp_path", "tree",
           "write_stamp", "zig_binary"]

FORMAT = 2     # 2: marshalled, no longer JSON
RACY_NS = 2_000_000_000
HARNESS_DIR = Path(__file__).resolve().parent.parent


def zig_binary() -> list[Path]:
    spec = importlib.util.find_spec("ziglang")
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(next(iter(spec.submodule_search_locations))) / "zig"]


def _walk(root: Path) -> Iterator[str]:
    """Every file under `root` but __pycache__'s, in a fixed order, as strings: a stamp
    check walks several hundred files on every run, and Path objects would triple the
    cost of that walk."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            yield os.path.join(dirpath, name)


def tree(root: Path) -> Iterable[Path]:
    return map(Path, _walk(root))


def input_files(kernel_dir: Path, userland_dir: Path) -> list[Path | str]:
    """Everything a build reads: its sources, the harness that generates and packs, zig."""
    return [*_walk(kernel_dir), *_walk(userland_dir), *_harness_inputs(), *zig_binary()]


_HARNESS_SUFFIXES = (".py", ".tbl", ".ld", ".c", ".h")


def _harness_inputs() -> Iterator[str]:
    data = os.path.join(HARNESS_DIR, "_data") + os.sep
    return (p for p in _walk(HARNESS_DIR)
            if p.endswith(_HARNESS_SUFFIXES) and not p.startswith(data))


def harness_inputs() -> list[Path]:
    """The harness's own files a build reads (the Python that generates and packs, the
    tables, linker scripts and C): not an installed wheel's `_data/` (its sources and
    outputs, harness/paths.py), which are the build's inputs and outputs already."""
    return [Path(p) for p in _harness_inputs()]


def _stats(paths: Iterable[Path | str]) -> dict[str, list[int]] | None:
    out: dict[str, list[int]] = {}
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            return None
        out[str(p)] = [st.st_size, st.st_mtime_ns]
    return out


def stamp_path(out_dir: Path) -> Path:
    from .cache import cache_root

    where = sha256(str(out_dir.resolve()).encode()).hexdigest()[:24]
    return cache_root() / "stamps" / f"{where}.marshal"


def check_stamp(out_dir: Path, params: dict[str, Any], inputs: Sequence[Path | str]) -> Any | None:
    """The `result` stored by `write_stamp` if the parameters, every input and every
    output stat exactly as stamped; else None."""
    try:
        stamp = marshal.loads(stamp_path(out_dir).read_bytes())
    except (OSError, ValueError, EOFError, TypeError):   # none yet, or another Python's
        return None
    if not isinstance(stamp, dict) or stamp.get("format") != FORMAT \
            or stamp.get("params") != params:
        return None
    if stamp.get("inputs") != _stats(inputs):
        return None
    if stamp.get("outputs") != _stats(stamp.get("outputs", {})):
        return None
    return stamp.get("result")


def write_stamp(out_dir: Path, params: dict[str, Any], inputs: Sequence[Path | str],
                outputs: Iterable[Path], result: Any) -> bool:
    """Stamp a successful build (False, and no stamp, if an input is too new to trust
    or a file is gone)."""
    stamp = stamp_path(out_dir)
    stamp.unlink(missing_ok=True)
    ins, outs = _stats(inputs), _stats(outputs)
    if ins is None or outs is None:
        return False
    now = time.time_ns()
    if any(now - mtime < RACY_NS for _, mtime in ins.values()):
        return False
    data = {"format": FORMAT, "params": params, "inputs": ins, "outputs": outs,
            "result": result}
    tmp = stamp.with_name(f".{stamp.name}.{os.getpid()}.tmp")
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(marshal.dumps(data))
        tmp.replace(stamp)
    except OSError:
        tmp.unlink(missing_ok=True)
        return False
    return True
