"""Building guest code: the ziglang clang toolchain and a content-addressed cache."""

from .toolchain import ARCHES, RV32, RV64, Arch, CompileOptions, compile_object, link

__all__ = ["ARCHES", "RV32", "RV64", "Arch", "CompileOptions", "compile_object", "link"]
