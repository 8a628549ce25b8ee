"""The trace analysis in C (pairer.c, shape.c, grow.c, and jsonl.c, which formats
JSON Lines, beside this module): built by harness/native/clib.py as its own library,
without Unicorn, and loaded with its functions' signatures. It reads the event
records the native core writes (their layout and the pairing records are
harness/abi's, generated into trace_gen.h)."""

from __future__ import annotations

import ctypes
from functools import cache
from pathlib import Path

from ..abi.pairing import gen_header
from ..native.clib import CLibrary, built_library

__all__ = ["TRACE_LIBRARY", "load_trace_library"]

TRACE_LIBRARY = CLibrary("libprivlab_trace.so", Path(__file__).resolve().parent,
                         ("grow.c", "shape.c", "pairer.c", "jsonl.c"), ("grow.h",), "trace_gen.h",
                         gen_header, unicorn=False, what="the trace analysis (harness/trace)")


@cache
def load_trace_library() -> ctypes.CDLL:
    lib = ctypes.CDLL(str(built_library(TRACE_LIBRARY)))
    vp, u64, u32, i32 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int
    signatures: dict[str, tuple[object, list[object]]] = {
        "shaper_new": (vp, [ctypes.c_uint8]),
        "shaper_free": (None, [vp]),
        "shaper_run": (i32, [vp, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int64,
                             vp, vp, vp, vp, vp]),
        "shaper_paths": (u32, [vp]),
        "shaper_path": (None, [vp, u32, ctypes.POINTER(ctypes.c_int32),
                               ctypes.POINTER(ctypes.c_uint8)]),
        "shaper_depth": (u32, [vp]),
        "pairer_new": (vp, [ctypes.c_char_p, ctypes.c_size_t, u64, ctypes.c_uint]),
        "pairer_free": (None, [vp]),
        "pairer_own": (i32, [vp, u64, ctypes.c_int64]),
        "pairer_run": (i32, [vp, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int64, u32,
                             ctypes.POINTER(vp), ctypes.POINTER(ctypes.c_size_t),
                             ctypes.POINTER(vp), ctypes.POINTER(ctypes.c_size_t),
                             ctypes.POINTER(ctypes.c_int64)]),
        "jsonl_format": (ctypes.c_size_t, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int64,
                                           u32, vp, vp, ctypes.POINTER(ctypes.c_size_t)]),
        "jsonl_rows": (ctypes.c_size_t, [ctypes.c_char_p, ctypes.c_size_t, vp, u32, vp,
                                         ctypes.c_char_p, vp, ctypes.POINTER(ctypes.c_size_t)]),
        "jsonl_tails_new": (vp, []),
        "jsonl_tails_free": (None, [vp]),
        "jsonl_tails_clear": (None, [vp]),
        "jsonl_tails_put": (i32, [vp, u64, u64, u64, u32, ctypes.c_int64, ctypes.c_int64,
                                  ctypes.c_char_p]),
        "jsonl_flow": (ctypes.c_size_t, [vp, vp, ctypes.c_size_t, ctypes.c_int64,
                                         vp, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int64,
                                         ctypes.c_int64, vp, ctypes.c_size_t,
                                         vp, vp, ctypes.c_size_t, u32, vp, vp, vp,
                                         ctypes.c_size_t, vp, ctypes.c_size_t, vp]),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib
