"""Building guest code: the ziglang clang toolchain and a content-addressed cache.

The names load on first use (PEP 562): a run whose images are built already reads the
cache (harness/build/cache.py, stamp.py) without loading the toolchain.
"""

from __future__ import annotations

from ..lazyload import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .arch import ARCHES, RV32, RV64, Arch
    from .toolchain import CompileOptions, compile_object, link

__all__ = ["ARCHES", "RV32", "RV64", "Arch", "CompileOptions", "compile_object", "link"]

__getattr__ = lazy_exports(__name__, globals(), {
    **dict.fromkeys(("ARCHES", "RV32", "RV64", "Arch"), "arch"),
    **dict.fromkeys(("CompileOptions", "compile_object", "link"), "toolchain"),
})
