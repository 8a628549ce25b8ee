"""The cross-compiler: clang from the `ziglang` wheel, for riscv64 and riscv32.

`python -m ziglang cc` is a complete clang + lld with no system packages needed. This
module knows the target flags and runs it; `compile_object`/`link` cache by content,
so rebuilding after editing one file recompiles only that file.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from harness.build.cache import cache_root, content_key
from harness.errors import BuildError

__all__ = ["ARCHES", "RV32", "RV64", "Arch", "CompileOptions", "compile_object", "link", "zig_cc"]


@dataclass(frozen=True)
class Arch:
    """A RISC-V target: integer base, M, A and C extensions, Zicsr, Zifencei; no FP."""

    name: str
    xlen: int
    triple: str
    cpu: str
    abi: str

    def target_flags(self) -> list[str]:
        return ["-target", self.triple, f"-mcpu={self.cpu}", f"-mabi={self.abi}"]


RV64 = Arch("rv64", 64, "riscv64-freestanding-none", "generic_rv64+m+a+c+zicsr+zifencei", "lp64")
RV32 = Arch("rv32", 32, "riscv32-freestanding-none", "generic_rv32+m+a+c+zicsr+zifencei", "ilp32")
ARCHES: dict[str, Arch] = {a.name: a for a in (RV64, RV32)}

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
    arch: Arch
    include_dirs: Sequence[Path] = ()
    defines: Mapping[str, str | int] = field(default_factory=dict)
    cflags: Sequence[str] = ("-O2",)
    # Source directories and the names the output records for them (DWARF, __FILE__),
    # so an ELF does not depend on where the tree is checked out: its size, and with it
    # the initrd's layout and the instructions the kernel spends reading it, stay put.
    prefix_map: Sequence[tuple[Path, str]] = ()

    def flags(self) -> list[str]:
        out = [*self.arch.target_flags(), *BASE_FLAGS, *self.cflags]
        out += [f"-ffile-prefix-map={d}={name}" for d, name in self.prefix_map]
        out += [f"-I{d}" for d in self.include_dirs]
        out += [f"-D{k}={v}" for k, v in sorted(self.defines.items())]
        return out


def zig_cc() -> list[str]:
    """The compiler driver command: this interpreter's `ziglang` package."""
    return [sys.executable, "-m", "ziglang", "cc"]


@cache
def compiler_version() -> str:
    out = _run([*zig_cc(), "--version"], "cannot run the ziglang compiler")
    return out.splitlines()[0] if out else "unknown"


def _run(cmd: list[str], what: str) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as e:
        raise BuildError(f"{what}: {e}") from e
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise BuildError(what, output)
    return output


def _headers(opts: CompileOptions) -> list[Path]:
    return sorted(p for d in opts.include_dirs for p in Path(d).rglob("*.h"))


def compile_object(source: Path, opts: CompileOptions) -> Path:
    """Compile one C or assembly (.S) file to a cached object file and return its path.

    The key covers the source, every header under the include directories, the flags
    and the compiler version, so editing any of them recompiles exactly what it must.
    """
    key = content_key(
        [compiler_version(), *opts.flags(), source.name, source, *_headers(opts)]
    )
    obj = cache_root() / "obj" / key[:2] / f"{key}-{source.stem}.o"
    if obj.exists():
        return obj
    obj.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=obj.parent) as tmp:
        out = Path(tmp) / obj.name
        _run([*zig_cc(), *opts.flags(), "-c", str(source), "-o", str(out)],
             f"compiling {source} failed")
        out.replace(obj)
    return obj


def link(objects: Sequence[Path], output: Path, arch: Arch, linker_script: Path,
         ldflags: Sequence[str] = ()) -> Path:
    """Link objects into a static ELF at `output` with the given linker script."""
    key = content_key([compiler_version(), arch.name, linker_script, *ldflags, *objects])
    cached = cache_root() / "elf" / key[:2] / f"{key}-{output.name}"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cached.parent) as tmp:
            out = Path(tmp) / output.name
            _run([*zig_cc(), *arch.target_flags(), "-nostdlib", "-static",
                  f"-T{linker_script}", *ldflags,
                  *map(str, objects), "-o", str(out)], f"linking {output.name} failed")
            out.replace(cached)
    output.parent.mkdir(parents=True, exist_ok=True)
    if not output.exists() or output.read_bytes() != cached.read_bytes():
        shutil.copyfile(cached, output)
    return output
