"""asm-offsets.h: C struct layouts as assembler constants, computed by the compiler.

`kernel/asm-offsets.c` expands ``DEFINE(NAME, offsetof(...))`` into inline assembly that
prints ``->NAME value`` into the compiler's assembly output. We compile it with ``-S``
(cached by content, like every object) and turn each marker into ``#define NAME value``.
So `struct trapframe` in trapframe.h is the only definition of the trap-frame layout.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import BuildError
from .cache import cache_root, content_key
from .toolchain import CompileOptions, compiler_identity, headers_of, run_compiler, zig_cc

__all__ = ["KernelLayout", "generate_asm_offsets", "kernel_layout", "parse_asm_offsets"]

_MARKER = re.compile(r"->([A-Z_][A-Z0-9_]*) #?(-?\d+)")


def parse_asm_offsets(assembly: str) -> dict[str, int]:
    """Every ``->NAME value`` marker in compiler-generated assembly."""
    return {name: int(value) for name, value in _MARKER.findall(assembly)}


def _compile_to_assembly(source: Path, opts: CompileOptions) -> str:
    source = source.resolve()
    key = content_key([compiler_identity(), "-S", *opts.flags(), source, *headers_of(opts)])
    out = cache_root() / "asm" / key[:2] / f"{key}-{source.stem}.s"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
            tmp_out = Path(tmp).resolve() / out.name
            run_compiler([*zig_cc(), *opts.flags(), "-Wno-unused-command-line-argument", "-S",
                          str(source), "-o", str(tmp_out)],
                         f"compiling {source} failed")
            tmp_out.replace(out)
    return out.read_text()


@dataclass(frozen=True)
class KernelLayout:
    """The kernel's virtual layout (kernel/memlayout.h), as the built kernel has it."""

    trampoline: int
    trapframe: int
    kstack0: int        # KSTACK(0): the lowest address of process slot 0's kernel stack
    kstack_stride: int  # KSTACK(0) - KSTACK(1): one stack and its guard page
    kstack_size: int
    # Threads 1..: THREAD_TRAPFRAME(1), and the distance to the next thread's block
    # (None for a kernel built before threads, a grader's older handout).
    thread_trapframe1: int | None = None
    thread_block: int | None = None
    thread_stack_size: int | None = None

    def trapframe_of(self, tid: int) -> int | None:
        """Where thread tid's trapframe is mapped (TRAPFRAME_OF in memlayout.h)."""
        if tid == 0:
            return self.trapframe
        if self.thread_trapframe1 is None or self.thread_block is None:
            return None
        return self.thread_trapframe1 - (tid - 1) * self.thread_block

    def thread_stack(self, tid: int) -> tuple[int, int] | None:
        """[low, high) of thread tid's user stack (tid >= 1), right below its trapframe."""
        top = self.trapframe_of(tid) if tid > 0 else None
        if top is None or self.thread_stack_size is None:
            return None
        return (top - self.thread_stack_size, top)

    def kernel_stack(self, addr: int) -> tuple[int, int] | None:
        """[low, high) of the kernel stack `addr` lies in (its top included: a frame
        pointer may hold it), or None below the stacks' guard pages."""
        slot = (self.kstack0 + self.kstack_size - addr) // self.kstack_stride
        low = self.kstack0 - slot * self.kstack_stride
        return (low, low + self.kstack_size) if slot >= 0 and low <= addr else None


def kernel_layout(kernel_elf: Path, xlen: int) -> KernelLayout:
    """The layout of the kernel built as `kernel_elf`, from the asm-offsets.h its build
    wrote beside it (harness/build/images.py: <out>/gen/asm-offsets.h)."""
    header = kernel_elf.parent / "gen" / "asm-offsets.h"
    try:
        text = header.read_text()
    except OSError as e:
        raise BuildError(f"{header}: cannot read the kernel's layout ({e.strerror})") from e
    found = {name: int(value) & ((1 << xlen) - 1) for name, value in
             re.findall(r"^#define (LAYOUT_\w+) (-?\d+)$", text, re.M)}
    try:
        k0, k1 = found["LAYOUT_KSTACK0"], found["LAYOUT_KSTACK1"]
        return KernelLayout(found["LAYOUT_TRAMPOLINE"], found["LAYOUT_TRAPFRAME"], k0, k0 - k1,
                            found["LAYOUT_KSTACK_SIZE"],
                            found.get("LAYOUT_THREAD_TRAPFRAME1"),
                            found.get("LAYOUT_THREAD_BLOCK_SIZE"),
                            found.get("LAYOUT_USTACK_SIZE"))
    except KeyError as e:
        raise BuildError(f"{header}: no {e.args[0]} (kernel/asm-offsets.c defines it)") from e


def generate_asm_offsets(source: Path, opts: CompileOptions) -> str:
    """The text of asm-offsets.h for `source` compiled with `opts`."""
    offsets = parse_asm_offsets(_compile_to_assembly(source, opts))
    if not offsets:
        raise BuildError(f"{source}: no ->NAME markers in the compiler output")
    lines = [f"// Generated from {source.name} by harness/build/asm_offsets.py: do not edit.",
             "#ifndef ASM_OFFSETS_H", "#define ASM_OFFSETS_H", ""]
    lines += [f"#define {name} {value}" for name, value in offsets.items()]
    lines += ["", "#endif // ASM_OFFSETS_H", ""]
    return "\n".join(lines)
