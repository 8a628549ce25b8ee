"""Compile the native core for the host with ziglang's clang, once per content.

The library links against the `libunicorn.so.2` shipped in the unicorn wheel, the same
file the Python binding has already loaded, so both share one engine. The output is
cached under a key covering the C sources, the generated header, the Unicorn headers
and the compiler's identity: the first run on a machine compiles (about a second once
zig's own caches exist), later runs load the cached file.
"""

from __future__ import annotations

import ctypes
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import unicorn

from ..abi.native_layout import gen_header
from ..build.cache import cache_root, content_key
from ..build.toolchain import compiler_identity, zig_cc, zig_home
from ..errors import NativeBuildError

__all__ = ["library_path", "load_library"]

SOURCE_DIR = Path(__file__).resolve().parent
SOURCES = ("regs.c", "decode.c", "fetch.c", "icount.c", "interrupt.c", "trap.c", "xret.c",
           "csrops.c", "events.c", "guard.c", "hooks.c", "snapshot.c",
           "dirty.c", "codesync.c", "pmp.c", "tlbflush.c", "tlbbank.c", "dispatch.c", "trigger.c",
           "hpm.c", "grow.c", "shape.c", "pairer.c", "plt.c", "csrfast.c",
           "exitcheck.c", "chain.c", "tbcache.c", "fpu.c")
CFLAGS = ("-O2", "-g", "-shared", "-fPIC", "-std=c11", "-Wall", "-Wextra", "-Werror",
          "-Wno-unused-parameter", "-fvisibility=default")


def _unicorn_dirs() -> tuple[Path, Path]:
    root = Path(unicorn.__file__).resolve().parent
    return root / "include", root / "lib"


_STAMP_PARAMS = {"cflags": list(CFLAGS)}


def _stamp_inputs(include: Path, libdir: Path) -> list[Path]:
    """What the library is made from, for the up-to-date stamp (harness/build/stamp.py):
    its C files, the Python that generates its header (harness/abi), Unicorn's headers
    and library, and zig."""
    from ..build.stamp import HARNESS_DIR, zig_binary

    abi = sorted((HARNESS_DIR / "abi").glob("*.py"))
    return [*(SOURCE_DIR / name for name in SOURCES), SOURCE_DIR / "hart.h", *abi,
            include / "unicorn" / "unicorn.h", include / "unicorn" / "riscv.h",
            libdir / "libunicorn.so.2", *zig_binary()]


def library_path() -> Path:
    """Build the library if needed and return its path. When nothing it is made from
    has changed size or mtime since it was built here, the stamp answers without
    hashing the sources or asking for zig's package metadata (a tenth of a second of
    every command's start-up; issue 13)."""
    from ..build.stamp import check_stamp, write_stamp

    include, libdir = _unicorn_dirs()
    inputs, stamp_dir = _stamp_inputs(include, libdir), cache_root() / "native"
    stamped = check_stamp(stamp_dir, _STAMP_PARAMS, inputs)
    if isinstance(stamped, str) and Path(stamped).is_file():
        return Path(stamped)
    out = _build(include, libdir)
    write_stamp(stamp_dir, _STAMP_PARAMS, inputs, [out], str(out))
    return out


def _build(include: Path, libdir: Path) -> Path:
    """The content-keyed build: compile unless this content was compiled before."""
    header = gen_header()
    sources = [SOURCE_DIR / name for name in SOURCES]
    key = content_key([
        compiler_identity(), " ".join(CFLAGS), header, SOURCE_DIR / "hart.h", *sources,
        include / "unicorn" / "unicorn.h", include / "unicorn" / "riscv.h",
    ])
    out = cache_root() / "native" / key / "libprivlab_hart.so"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        gen_dir = Path(tmp)
        (gen_dir / "privlab_gen.h").write_text(header)
        built = gen_dir / out.name
        cmd = [*zig_cc(), *CFLAGS, f"-I{gen_dir}", f"-I{include}",
               f"-I{SOURCE_DIR}", *map(str, sources), str(libdir / "libunicorn.so.2"),
               f"-Wl,-rpath,{libdir}", "-o", str(built)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=zig_home())
        if proc.returncode != 0:
            raise NativeBuildError(
                "cannot build the native core (harness/native):\n" + proc.stdout + proc.stderr
            )
        built.replace(out)
    return out


@cache
def load_library() -> ctypes.CDLL:
    """The loaded native core, with its function signatures declared."""
    lib = ctypes.CDLL(str(library_path()))
    vp, u64, u32, i32 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int
    signatures: dict[str, tuple[object, list[object]]] = {
        "hart_new": (vp, [vp, u32]),
        "hart_free": (None, [vp]),
        "hart_set_event_buffer": (None, [vp, vp, u32]),
        "hart_set_ram": (i32, [vp, vp, u64, u64]),
        "hart_resume": (None, [vp]),
        "hart_code_written": (i32, [vp, vp, ctypes.c_int64]),
        "hart_guard_ranges": (ctypes.c_int64, [vp, vp, u64]),
        "hart_unmapped_range": (i32, [vp, u32, ctypes.POINTER(u64), ctypes.POINTER(u64)]),
        "hart_sync": (None, [vp]),
        "hart_update": (None, [vp]),
        "hart_check_interrupts": (i32, [vp]),
        "hart_wfi_wake": (i32, [vp]),
        "hart_access_fault": (None, [vp, u64]),
        "hart_stopped_at": (None, [vp, u64]),
        "hart_read_csr": (i32, [vp, u32, ctypes.POINTER(u64)]),
        "hart_write_csr": (i32, [vp, u32, u64]),
        "hart_set_breakpoint": (i32, [vp, u64, i32]),
        "hart_skip_breakpoint_once": (None, [vp, u64]),
        "hart_set_watch": (i32, [vp, u32, u64, u64, u32]),
        "hart_skip_watch_once": (None, [vp, u64]),
        "hart_step_begin": (None, [vp]),
        "hart_step_end": (None, [vp]),
        "hart_mtime": (u64, [vp]),
        "hart_mip": (u64, [vp]),
        "hart_hook_count": (ctypes.c_size_t, [vp]),
        "hart_in_block": (ctypes.c_int, [vp]),
        "hart_snap_size": (ctypes.c_size_t, []),
        "hart_snap_save": (None, [vp, vp]),
        "hart_snap_restore": (None, [vp, vp]),
        "ram_page_hashes": (None, [vp, u64, vp]),
        "ram_hash_diff": (u64, [vp, vp, u64, vp]),
        "ram_hash_list": (None, [vp, vp, u64, vp]),
        "ram_copy_pages": (None, [vp, vp, vp, u64]),
        "ram_tracker_new": (vp, [vp, u64]),
        "ram_tracker_scan": (ctypes.c_int64, [vp, vp, u64]),
        "ram_tracker_scan_range": (ctypes.c_int64, [vp, u64, u64, vp, u64]),
        "codesync_scan": (ctypes.c_int64, [vp, vp, u32, u32, u64, u64, vp, u64]),
        "ram_tracker_free": (None, [vp]),
        "ram_tracker_pause": (i32, [vp]),
        "ram_tracker_resume": (i32, [vp]),
        "privlab_probe": (None, [i32]),
        "dispatch_installed": (ctypes.c_bool, []),
        "tlbflush_count": (u64, [ctypes.c_bool]),
        "csrfast_count": (u64, [ctypes.c_bool]),
        "pmp_noexec_fills": (u64, []),
        "exitcheck_count": (u64, [ctypes.c_bool]),
        "chain_count": (u64, [ctypes.c_bool]),
        "tbcache_count": (u64, [ctypes.c_bool]),
        "fpu_exact": (ctypes.c_bool, []),
        "fpu_fingerprint": (u64, []),
        "guard_count": (u64, [ctypes.c_uint]),
        "tlbbank_count": (u64, [ctypes.c_uint]),
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
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib
