"""asm-offsets.h: C struct layouts as assembler constants, computed by the compiler.

`kernel/asm-offsets.c` expands ``DEFINE(NAME, offsetof(...))`` into inline assembly that
prints ``->NAME value`` into the compiler's assembly output. We compile it with ``-S``
(cached by content, like every object) and turn each marker into ``#define NAME value``.
So `struct trapframe` in trapframe.h is the only definition of the trap-frame layout.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from harness.build.cache import cache_root, content_key
from harness.build.toolchain import CompileOptions, _headers, _run, compiler_identity, zig_cc
from harness.errors import BuildError

__all__ = ["generate_asm_offsets", "parse_asm_offsets"]

_MARKER = re.compile(r"->([A-Z_][A-Z0-9_]*) #?(-?\d+)")


def parse_asm_offsets(assembly: str) -> dict[str, int]:
    """Every ``->NAME value`` marker in compiler-generated assembly."""
    return {name: int(value) for name, value in _MARKER.findall(assembly)}


def _compile_to_assembly(source: Path, opts: CompileOptions) -> str:
    source = source.resolve()
    key = content_key([compiler_identity(), "-S", *opts.flags(), source, *_headers(opts)])
    out = cache_root() / "asm" / key[:2] / f"{key}-{source.stem}.s"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
            tmp_out = Path(tmp).resolve() / out.name
            _run([*zig_cc(), *opts.flags(), "-Wno-unused-command-line-argument", "-S", str(source),
                  "-o", str(tmp_out)],
                 f"compiling {source} failed")
            tmp_out.replace(out)
    return out.read_text()


def generate_asm_offsets(source: Path, opts: CompileOptions) -> str:
    """The text of asm-offsets.h for `source` compiled with `opts`."""
    offsets = parse_asm_offsets(_compile_to_assembly(source, opts))
    if not offsets:
        raise BuildError(f"{source}: no ->NAME markers in the compiler output")
    lines = [f"// Generated from {source.name} by harness/abi/asm_offsets.py: do not edit.",
             "#ifndef ASM_OFFSETS_H", "#define ASM_OFFSETS_H", ""]
    lines += [f"#define {name} {value}" for name, value in offsets.items()]
    lines += ["", "#endif // ASM_OFFSETS_H", ""]
    return "\n".join(lines)
