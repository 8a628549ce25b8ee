"""The cross-compiler: clang from the `ziglang` wheel, for riscv64 and riscv32.

`python -m ziglang cc` is a complete clang + lld with no system packages needed. This
module knows the target flags and runs it; `compile_object`/`link` cache by content,
so rebuilding after editing one file recompiles only that file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..errors import BuildError
from .arch import ARCHES, RV32, RV64, Arch
from .cache import cache_root, content_key, write_if_changed

__all__ = ["ARCHES", "RV32", "RV64", "Arch", "CompileOptions", "compile_object",
           "compiler_identity", "link", "zig_cc", "zig_home"]


# Flags for bare-metal code. zig's clang turns on UBSan at -O0 by default, which would
# plant traps the kernel has no runtime for, so sanitizers are off explicitly.
BASE_FLAGS = (
    "-ffreestanding",
    "-fno-builtin",
    "-fno-sanitize=all",
    "-fno-stack-protector",
    "-fno-pic",
    "-mcmodel=medany",
    "-fno-omit-frame-pointer",
    "-fno-asynchronous-unwind-tables",
    "-fno-unwind-tables",
    "-g",
    "-Wall",
    "-Werror",
)


@dataclass(frozen=True)
class CompileOptions:
    """How to compile C for a target: its architecture, include directories, defines, flags
    and path prefixes to record."""
    arch: Arch
    include_dirs: Sequence[Path] = ()
    defines: Mapping[str, str | int] = field(default_factory=dict)
    cflags: Sequence[str] = ("-O2",)
    # Source directories and the names the output records for them (DWARF, __FILE__),
    # so an ELF does not depend on where the tree is checked out: its size, and with it
    # the initrd's layout and the instructions the kernel spends reading it, stay put.
    # When two entries match a path, the later one wins (clang's rule), so list the
    # enclosing directory before the ones inside it.
    prefix_map: Sequence[tuple[Path, str]] = ()

    def flags(self) -> list[str]:
        out = [*self.arch.target_flags(), *BASE_FLAGS, *self.cflags, *_location_flags()]
        out += [f"-ffile-prefix-map={Path(d).resolve()}={name}" for d, name in self.prefix_map]
        out += [f"-I{Path(d).resolve()}" for d in self.include_dirs]
        out += [f"-D{k}={v}" for k, v in sorted(self.defines.items())]
        return out


@cache
def zig_home() -> Path:
    """The installed `ziglang` package directory, which holds the `zig` binary and its
    `lib/` (clang's own headers). Found without importing it: importing runs zig."""
    spec = importlib.util.find_spec("ziglang")
    if spec is None or not spec.submodule_search_locations:
        raise BuildError("building a kernel needs zig, which is not installed "
                         f"(pip install 'privlab[build]', or pip install {_pinned_requirement()})")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def zig_cc() -> list[str]:
    """The compiler driver command: the `zig` binary of this interpreter's `ziglang`
    package, run directly (what `python -m ziglang cc` execs, without a Python start)."""
    return [str(zig_home() / "zig"), "cc"]


def _location_flags() -> list[str]:
    """Flags that keep the machine's paths out of every output.

    clang records its working directory (DW_AT_comp_dir) and the path of zig's header
    directory, which zig passes relative to the working directory. Every compile runs
    in `zig_home()` (see `_run`), so that directory is `lib/include` in every venv, and
    the working directory is recorded as `.`; a path under zig_home that is absolute
    after all is recorded under `zig/`.
    """
    return ["-fdebug-compilation-dir=.", f"-ffile-prefix-map={zig_home()}=zig"]


def _pinned_requirement() -> str:
    """`ziglang==X` as privlab's own metadata (pyproject.toml) pins it."""
    import importlib.metadata  # here: a build that is up to date never asks

    try:
        requires = importlib.metadata.requires("privlab") or []
    except importlib.metadata.PackageNotFoundError:
        requires = []
    for req in requires:
        if m := re.match(r"ziglang\s*==\s*([^\s;]+)", req.strip()):   # or in an extra
            return f"ziglang=={m.group(1)}"
    return "ziglang"


@cache
def compiler_identity() -> str:
    """What the build cache keys on for the compiler: the ziglang release and the
    SHA-256 of its zig binary, as the wheel's RECORD states it.

    A ziglang other than the one privlab pins is refused: another release generates
    other code, and with it other instret counts than every published trace.
    """
    import importlib.metadata

    home = zig_home()
    try:
        dist = importlib.metadata.distribution("ziglang")
    except importlib.metadata.PackageNotFoundError as e:
        raise BuildError(f"the ziglang package has no metadata: {e}") from e
    pinned = _pinned_requirement()
    if pinned != "ziglang" and pinned != f"ziglang=={dist.version}":
        raise BuildError(f"privlab is pinned to {pinned}, but ziglang {dist.version} is "
                         f"installed (pip install {pinned})")
    record = dist.read_text("RECORD") or ""
    digest = next((line.split(",")[1] for line in record.splitlines()
                   if line.startswith("ziglang/zig,")), "")
    if not digest:  # no RECORD (an unusual install): hash the binary itself
        digest = "sha256=" + hashlib.sha256((home / "zig").read_bytes()).hexdigest()
    return f"ziglang {dist.version} {digest}"


def run_compiler(cmd: list[str], what: str) -> str:
    """Run the compiler in zig_home() (see `_location_flags`): every path handed to it
    is absolute, so the caller's working directory never matters. Under a command
    line (harness/sigint.py `in_command`) in a process group of its own (zig runs
    clang and lld as children), stopped whole when privlab is interrupted; elsewhere
    (the grader's build child) in the caller's group, which the grader stops whole."""
    from ..children import supervised
    from ..sigint import in_command

    group = in_command()

    def start() -> subprocess.Popen[str]:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, cwd=zig_home(),
                                start_new_session=group)

    try:
        with supervised(start, group=group) as proc:  # interrupted: no compiler outlives it
            stdout, stderr = proc.communicate()
    except OSError as e:
        raise BuildError(f"{what}: {e}") from e
    output = stdout + stderr
    if proc.returncode != 0:
        raise BuildError(what, output)
    return output


def headers_of(opts: CompileOptions) -> list[Path]:
    return sorted(p for d in opts.include_dirs for p in Path(d).rglob("*.h"))


def _portable(flags: Sequence[str], prefix_map: Sequence[tuple[Path, str]]) -> list[str]:
    """The flags as the output records them: each directory of the prefix map by the
    name it is recorded as (the longest first), so the same sources compiled at
    another place (another grading slot, another checkout) share one cache entry: the
    object is the same bytes, since the map keeps every path out of it."""
    maps = sorted(((str(Path(d).resolve()), name) for d, name in prefix_map),
                  key=lambda m: len(m[0]), reverse=True)
    out = []
    for flag in flags:
        for real, name in maps:
            flag = flag.replace(real, f"<{name}>")
        out.append(flag)
    return out


def compile_object(source: Path, opts: CompileOptions) -> Path:
    """Compile one C or assembly (.S) file to a cached object file and return its path.

    The key covers the source, every header under the include directories, the flags
    and the compiler version, so editing any of them recompiles exactly what it must.
    """
    source = source.resolve()
    key = content_key(
        [compiler_identity(), *_portable(opts.flags(), opts.prefix_map), source.name, source,
         *headers_of(opts)]
    )
    obj = cache_root() / "obj" / key[:2] / f"{key}-{source.stem}.o"
    if obj.exists():
        return obj
    obj.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=obj.parent) as tmp:
        out = Path(tmp).resolve() / obj.name
        run_compiler([*zig_cc(), *opts.flags(), "-c", str(source), "-o", str(out)],
             f"compiling {source} failed")
        out.replace(obj)
    return obj


def link(objects: Sequence[Path], output: Path, arch: Arch, linker_script: Path,
         ldflags: Sequence[str] = ()) -> Path:
    """Link objects into a static ELF at `output` with the given linker script. The
    script's ENTRY(symbol) is the ELF's entry: zig's driver would otherwise set
    `_start`, and an ELF without one (the kernel enters at `_entry`) had entry 0,
    which OpenSBI's fw_dynamic and QEMU's -kernel hand on as the next stage."""
    linker_script = linker_script.resolve()
    entry = re.search(r"^\s*ENTRY\(\s*(\w+)\s*\)", linker_script.read_text(), re.M)
    if entry is not None:
        ldflags = [f"-Wl,--entry={entry[1]}", *ldflags]
    key = content_key([compiler_identity(), arch.name, linker_script, *ldflags, *objects])
    cached = cache_root() / "elf" / key[:2] / f"{key}-{output.name}"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cached.parent) as tmp:
            out = Path(tmp).resolve() / output.name
            run_compiler([*zig_cc(), *arch.target_flags(), "-nostdlib", "-static",
                  f"-T{linker_script}", *ldflags,
                  *map(str, objects), "-o", str(out)], f"linking {output.name} failed")
            out.replace(cached)
    return write_if_changed(output, cached.read_bytes())   # never half-written to a reader
