"""Compile a C library for the host with ziglang's clang, once per content.

One recipe for privlab's two libraries: the hart core (harness/native, linked against
the unicorn wheel's `libunicorn.so.2`, the file the Python binding has already loaded,
so both share one engine) and the trace analysis (harness/trace, plain C). Each is
cached under a key covering its C files, its generated header, the Unicorn headers it
includes and the compiler's identity: the first run on a machine compiles, later runs
load the cached file. An up-to-date stamp (harness/build/stamp.py) answers "nothing
changed" from file sizes and times, without hashing anything.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..build.cache import cache_root, content_key
from ..build.prebuilt import library_in
from ..errors import NativeBuildError

__all__ = ["CFLAGS", "PACKAGED_CFLAGS", "CLibrary", "built_library", "compile_library",
           "packaged_key", "stamped_library"]

_BUILD_TRIES = 3             # builds a changing source gets before giving up
CFLAGS = ("-O2", "-g", "-shared", "-fPIC", "-std=c11", "-Wall", "-Wextra", "-Werror",
          "-Wno-unused-parameter", "-fvisibility=default")
# A wheel's copy (packaging/stage.py): no debug information, which would record the
# build's temporary directory and the builder's paths, and stripped.
PACKAGED_CFLAGS = (*(f for f in CFLAGS if f != "-g"), "-g0", "-s")


def installed_unicorn() -> Path:
    """The installed unicorn package's directory, found without importing it (its
    Python binding is not used: harness/machine/engine.py)."""
    spec = importlib.util.find_spec("unicorn")
    if spec is None or not spec.submodule_search_locations:
        raise NativeBuildError("the unicorn package is not installed (pip install privlab)")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def unicorn_dirs() -> tuple[Path, Path]:
    root = installed_unicorn()
    return root / "include", root / "lib"


def libunicorn_name() -> str:
    """The Unicorn wheel's shared library: a Mach-O dylib on macOS, else an ELF."""
    return "libunicorn.2.dylib" if sys.platform == "darwin" else "libunicorn.so.2"


@dataclass(frozen=True)
class CLibrary:
    """A shared library: `sources` and `headers` in `source_dir`, a generated header
    (`gen_name`, its text from `gen_text()`), and whether it links against Unicorn."""

    name: str
    source_dir: Path
    sources: tuple[str, ...]
    headers: tuple[str, ...]
    gen_name: str
    gen_text: Callable[[], str]
    unicorn: bool
    what: str                     # for messages: "the native core (harness/native)"

    def files(self) -> list[Path]:
        return [self.source_dir / n for n in (*self.sources, *self.headers)]

    def unicorn_files(self) -> list[Path]:
        if not self.unicorn:
            return []
        include, libdir = unicorn_dirs()
        return [include / "unicorn" / "unicorn.h", include / "unicorn" / "riscv.h",
                libdir / libunicorn_name()]


def _stamp_inputs(lib: CLibrary) -> list[Path]:
    """What the library is made from: its C files, the Python that generates its header
    (harness/abi), Unicorn's headers and library if it links them, and zig."""
    from ..build.stamp import HARNESS_DIR, zig_binary

    abi = sorted((HARNESS_DIR / "abi").glob("*.py"))
    return [*lib.files(), *abi, *lib.unicorn_files(), *zig_binary()]


def built_library(lib: CLibrary) -> Path:
    """Build `lib` if needed and return its path: a wheel's own copy when it was built
    from these very sources (harness/build/prebuilt.py), else the cached build."""
    from ..build.stamp import write_stamp

    ready = stamped_library(lib)
    if ready is not None:
        return ready
    stamp_dir, params, inputs = _stamp_of(lib)
    out = library_in(lib.name, lambda: packaged_key(lib)) or _build(lib)
    write_stamp(stamp_dir, params, inputs, [out], str(out))
    return out


def stamped_library(lib: CLibrary) -> Path | None:
    """`lib`'s path if the stamp of its last build still holds (nothing it is made
    from has changed since), else None: built_library without the build."""
    from ..build.stamp import check_stamp

    stamped = check_stamp(*_stamp_of(lib))
    if isinstance(stamped, str) and Path(stamped).is_file():
        return Path(stamped)
    return None


def _stamp_of(lib: CLibrary) -> tuple[Path, dict[str, object], list[Path]]:
    """The directory, parameters and inputs of `lib`'s build stamp (check_stamp's
    arguments)."""
    params: dict[str, object] = {"cflags": list(CFLAGS), "library": lib.name}
    # A stamp per install (its sources' place names it): installs sharing one cache
    # (a checkout's venv and a wheel's) would otherwise each find the other's stamp
    # and work out the library's key again, 0.03-0.06 s, at every run that alternates.
    stamp_dir = cache_root() / "native" / lib.name / str(lib.source_dir).lstrip("/")
    return stamp_dir, params, _stamp_inputs(lib)


def packaged_key(lib: CLibrary, unicorn_root: Path | None = None) -> list[tuple[str, Path | str]]:
    """What a packaged copy of `lib` is built from, by portable name (prebuilt.py):
    the packaged flags, the generated header, its C files, and Unicorn's version and
    headers when it links them (`unicorn_root`: another platform's unicorn package)."""
    parts: list[tuple[str, Path | str]] = [
        ("cflags", " ".join(PACKAGED_CFLAGS)), ("library", lib.name),
        (lib.gen_name, lib.gen_text()), *((f"src/{p.name}", p) for p in lib.files())]
    if lib.unicorn:
        include = (unicorn_root or installed_unicorn()) / "include"
        parts += [("unicorn", _unicorn_version()),
                  ("unicorn.h", include / "unicorn" / "unicorn.h"),
                  ("riscv.h", include / "unicorn" / "riscv.h")]
    return parts


def _unicorn_version() -> str:
    import importlib.metadata

    return importlib.metadata.version("unicorn")


def _key(lib: CLibrary, header: str) -> str:
    from ..build.toolchain import compiler_identity  # here: a built library never asks

    return content_key([compiler_identity(), " ".join(CFLAGS), lib.name, header, *lib.files(),
                        *lib.unicorn_files()[:2]])


def _build(lib: CLibrary) -> Path:
    """The content-keyed build: compile unless this content was compiled before. The
    key is taken again after compiling: a source edited while the compiler ran (an
    editor saving, a checkout) would otherwise be cached under the key of content it
    was not built from, and every later run would load a library whose structs disagree
    with its own header. Such a build is thrown away and done again."""
    import tempfile

    link: list[str] = []
    if lib.unicorn:
        libdir = unicorn_dirs()[1]
        link = [str(libdir / libunicorn_name()), f"-Wl,-rpath,{libdir}"]
    for _ in range(_BUILD_TRIES):
        header = lib.gen_text()
        key = _key(lib, header)
        out = cache_root() / "native" / key / lib.name
        if out.exists():
            return out
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
            staged = Path(tmp) / lib.name
            compile_library(lib, staged, header, CFLAGS, unicorn_dirs()[0], link)
            if _key(lib, lib.gen_text()) == key:
                staged.replace(out)
                return out
    raise NativeBuildError(f"cannot build {lib.what}: its sources changed during each of "
                           f"{_BUILD_TRIES} builds; run again once they are saved")


def compile_library(lib: CLibrary, out: Path, header: str, cflags: Sequence[str],
                    unicorn_include: Path, link: Sequence[str],
                    target: Sequence[str] = ()) -> None:
    """Compile `lib` to `out` (written whole or not at all) with `cflags`, linking
    `link` when it uses Unicorn; `target` is zig's `-target T` for another host."""
    import subprocess
    import tempfile

    from ..build.toolchain import zig_cc, zig_home

    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        gen_dir = Path(tmp)
        (gen_dir / lib.gen_name).write_text(header)
        built = gen_dir / out.name
        include_flags = [f"-I{gen_dir}", f"-I{lib.source_dir}"]
        if lib.unicorn:
            include_flags.append(f"-I{unicorn_include}")
        cmd = [*zig_cc(), *target, *cflags, *include_flags,
               *(str(lib.source_dir / n) for n in lib.sources),
               *(link if lib.unicorn else ()), "-o", str(built)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=zig_home())
        if proc.returncode != 0:
            raise NativeBuildError(f"cannot build {lib.what}:\n" + proc.stdout + proc.stderr)
        built.replace(out)
