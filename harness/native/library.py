"""The native core: the hart's C library (trap entry, interrupts, time, the event
log), compiled by harness/native/clib.py and loaded with its functions' signatures.
"""

from __future__ import annotations

import ctypes
from functools import cache
from pathlib import Path

from .clib import CLibrary, built_library

__all__ = ["HART_LIBRARY", "library_path", "load_library", "unicorn_signatures"]

SOURCE_DIR = Path(__file__).resolve().parent
SOURCES = ("regs.c", "decode.c", "fetch.c", "icount.c", "interrupt.c", "trapentry.c", "xret.c",
           "csrops.c", "events.c", "guard.c", "hooks.c", "hartapi.c", "snapshot.c",
           "dirty.c", "codesync.c", "pmp.c", "tlbflush.c", "tlbbank.c", "dispatch.c", "trigger.c",
           "hpm.c", "plt.c", "csrfast.c", "vtlb.c",
           "exitcheck.c", "chain.c", "tbcache.c", "fpu.c", "devaccess.c", "turns.c", "bitmanip.c")


def _gen_header() -> str:
    """privlab_gen.h's text (abi/native_layout.py, imported only to build: the command
    line checks the core's stamp before it needs the layouts)."""
    from ..abi.native_layout import gen_header

    return gen_header()


HART_LIBRARY = CLibrary("libprivlab_hart.so", SOURCE_DIR, SOURCES, ("hart.h",), "privlab_gen.h",
                        _gen_header, unicorn=True, what="the native core (harness/native)")


def unicorn_signatures() -> dict[str, tuple[object, list[object]]]:
    """libunicorn's own functions Python calls (harness/machine/engine.py), resolved
    through the core's handle, which links libunicorn: so they must be exported by the
    libunicorn of every host the core is built for (tests/native/test_macos_symbols.py)."""
    vp, u64, u32, i32 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int
    return {
        "uc_open": (i32, [i32, i32, ctypes.POINTER(vp)]),
        "uc_close": (i32, [vp]),
        "uc_strerror": (ctypes.c_char_p, [i32]),
        "uc_emu_start": (i32, [vp, u64, u64, u64, ctypes.c_size_t]),
        "uc_emu_stop": (i32, [vp]),
        "uc_reg_read": (i32, [vp, i32, vp]),
        "uc_reg_write": (i32, [vp, i32, vp]),
        "uc_mem_map": (i32, [vp, u64, ctypes.c_size_t, u32]),
        "uc_mem_map_ptr": (i32, [vp, u64, ctypes.c_size_t, u32, vp]),
        "uc_mem_read": (i32, [vp, u64, vp, ctypes.c_size_t]),
        "uc_mem_write": (i32, [vp, u64, ctypes.c_char_p, ctypes.c_size_t]),
        "uc_mmio_map": (i32, [vp, u64, ctypes.c_size_t, vp, vp, vp, vp]),
        "uc_hook_add": (i32, [vp, ctypes.POINTER(ctypes.c_size_t), i32, vp, vp, u64, u64]),
        "uc_context_alloc": (i32, [vp, ctypes.POINTER(vp)]),
        "uc_context_save": (i32, [vp, vp]),
        "uc_context_restore": (i32, [vp, vp]),
        "uc_context_free": (i32, [vp]),
        "uc_vmem_read": (i32, [vp, u64, i32, vp, ctypes.c_size_t]),
        "uc_vmem_translate": (i32, [vp, u64, i32, ctypes.POINTER(u64)]),
    }


def library_path() -> Path:
    """The hart library, built if needed."""
    return built_library(HART_LIBRARY)


@cache
def load_library() -> ctypes.CDLL:
    """The loaded native core, with its function signatures declared."""
    from .preload import preloaded_core

    lib = ctypes.CDLL(str(preloaded_core() or library_path()))
    vp, u64, u32, i32 = ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int
    signatures: dict[str, tuple[object, list[object]]] = {
        "hart_new": (vp, [vp, u32]),
        "hart_free": (None, [vp]),
        "hart_set_event_buffer": (None, [vp, vp, u32]),
        "hart_set_ram": (i32, [vp, vp, u64, u64]),
        "hart_set_tohost": (i32, [vp, u64, ctypes.c_uint]),
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
        "hart_vtlb_stop": (i32, [vp]),
        "hart_vtlb_on": (i32, []),
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
        "codesync_new": (vp, [vp, vp, u32, u64, u64]),
        "codesync_free": (None, [vp]),
        "codesync_run_begins": (None, [vp]),
        "codesync_turn_ended": (None, [vp, u32]),
        "codesync_turn_begins": (i32, [vp, u32]),
        "codesync_pending": (ctypes.c_int64, [vp, u32, vp, u64]),
        "codesync_set_pending": (None, [vp, u32, vp, ctypes.c_int64]),
        "codesync_flushes": (u64, [vp, u32]),
        "codesync_drops": (u64, [vp, u32]),
        "turns_chain": (i32, [vp, vp, vp]),
        "turns_draw": (None, [vp, ctypes.POINTER(u32), ctypes.POINTER(u64)]),
        "ram_tracker_free": (None, [vp]),
        "ram_tracker_pause": (i32, [vp]),
        "ram_tracker_resume": (i32, [vp]),
        "privlab_probe": (None, [i32]),
        "devaccess_clear": (None, []),
        "devaccess_region": (i32, [u64, u64]),
        "devaccess_rule": (i32, [u64, u64, u32, u32]),
        "devaccess_in_last": (ctypes.c_bool, [u64]),
        "hart_device_fetch_trap": (None, [vp, u64, u32, u64]),
        "dispatch_installed": (ctypes.c_bool, []),
        "tlbflush_count": (u64, [ctypes.c_bool]),
        "csrfast_count": (u64, [ctypes.c_bool]),
        "pmp_noexec_fills": (u64, []),
        "exitcheck_count": (u64, [ctypes.c_bool]),
        "chain_count": (u64, [ctypes.c_bool]),
        "tbcache_count": (u64, [ctypes.c_bool]),
        "fpu_exact": (ctypes.c_bool, []),
        "fpu_emulating": (ctypes.c_bool, []),
        "fpu_fingerprint": (u64, []),
        "guard_count": (u64, [ctypes.c_uint]),
        "tlbbank_count": (u64, [ctypes.c_uint]),
        "engine_flush_tb": (None, [vp]),
        **unicorn_signatures(),
    }
    for name, (restype, argtypes) in signatures.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib
