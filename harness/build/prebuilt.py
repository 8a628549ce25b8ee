"""What a wheel carries already built: the images of its bundled sources and its native
libraries, each used only while the sources it was built from are unchanged.

`packaging/stage.py` builds them into the wheel's `privlab/_data/` and writes beside
each a manifest (`prebuilt.json`) holding a digest of everything the build read, by
name relative to its tree, so the digest is the same wherever the package is
installed. At run time `images_in` and `library_in` recompute that digest; a match
means the files beside it are exactly what a build here would make (builds are
byte-identical wherever they run), so nothing is compiled and zig is not needed.
Anything else (an edited kernel source in the install, `privlab build` asking for
listings) builds into the cache instead (`build_home`): an installed package is never
written to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from ..digest import sha256
from ..paths import DATA_DIR, INSTALLED, PACKAGE_DIR

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["MANIFEST", "build_home", "digest", "images_in", "is_packaged", "library_in",
           "write_manifest"]

MANIFEST = "prebuilt.json"
FORMAT = 1


def digest(named: Iterable[tuple[str, Path | str | bytes]]) -> str:
    """SHA-256 over (name, content) pairs: a Path is read, str and bytes are taken
    as they are. Names keep the digest independent of where the trees lie."""
    h = sha256()
    for name, part in named:
        data = part.read_bytes() if isinstance(part, Path) else (
            part.encode() if isinstance(part, str) else part)
        h.update(b"%d:%s%d:" % (len(name), name.encode(), len(data)))
        h.update(data)
    return h.hexdigest()


def _named(root: Path, prefix: str, files: Iterable[Path]) -> list[tuple[str, Path]]:
    return [(f"{prefix}/{p.relative_to(root).as_posix()}", p) for p in files]


def image_inputs(kernel_dir: Path, userland_dir: Path) -> list[tuple[str, Path]]:
    """What an images build reads (stamp.input_files without zig), by portable name."""
    from .stamp import HARNESS_DIR, harness_inputs, tree

    return [*_named(kernel_dir, "kernel", tree(kernel_dir)),
            *_named(userland_dir, "userland", tree(userland_dir)),
            *_named(HARNESS_DIR, "privlab", harness_inputs())]


def write_manifest(where: Path, key: str, result: Any) -> None:
    import json  # here, as in the readers: a run that finds its stamp reads no manifest

    (where / MANIFEST).write_text(json.dumps({"format": FORMAT, "digest": key,
                                              "result": result}, indent=1) + "\n")


def _manifest(where: Path, key: str) -> Any | None:
    import json

    try:
        data = json.loads((where / MANIFEST).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("digest") != key:
        return None
    return data.get("result")


def images_in(out: Path, kernel_dir: Path, userland_dir: Path) -> list[str] | None:
    """The user programs of the prebuilt images in `out`, if `out` holds some built
    from exactly these sources (without listings); else None."""
    if not (out / MANIFEST).is_file():
        return None
    result = _manifest(out, digest(image_inputs(kernel_dir, userland_dir)))
    if not isinstance(result, dict) or not isinstance(result.get("users"), list):
        return None
    users = [str(u) for u in result["users"]]
    wanted = [out / "firmware.elf", out / "kernel.elf", out / "initrd.cpio", out / "fs.img",
              *(out / "user" / f"{u}.elf" for u in users)]
    return users if all(p.is_file() for p in wanted) else None


def library_in(name: str,
               key_parts: Callable[[], Sequence[tuple[str, Path | str]]]) -> Path | None:
    """The packaged native library `name`, if it was built from exactly `key_parts()`."""
    where = DATA_DIR / "native"
    if not (where / name).is_file() or not (where / MANIFEST).is_file():
        return None
    import json

    try:
        data = json.loads((where / MANIFEST).read_bytes())
    except (OSError, ValueError):
        return None
    libs = data.get("libraries") if isinstance(data, dict) else None
    if not isinstance(libs, dict) or libs.get(name) != digest(key_parts()):
        return None
    return where / name


def is_packaged(out: Path) -> bool:
    """Whether `out` lies inside the installed package (never written to)."""
    return INSTALLED and out.resolve().is_relative_to(PACKAGE_DIR)


def build_home(out: Path) -> Path:
    """Where a build that would go to `out` inside the package goes instead: the same
    place under the cache's `build/` (`_data/build/rv64` there: `build/_data/build/rv64`)."""
    from .cache import cache_root

    return cache_root() / "build" / out.resolve().relative_to(PACKAGE_DIR)
