"""One Unicorn engine (one hart's CPU), driven through libunicorn's C API.

A machine makes a dozen kinds of call into Unicorn: open, registers, memory maps,
device callbacks, emu_start/emu_stop, contexts. The unicorn package's Python binding
declares its whole API and loads importlib.resources when it is imported, about a
tenth of a bare `privlab run`'s start-up, so privlab declares just these calls on the
libunicorn the native core links (harness/native/library.py, whose handle resolves
them through its dependency) and takes their numbers from harness/abi/unicorn_abi.py,
which the core's build checks against Unicorn's headers.

A Python callback (a device, a hook) that raises stops the engine; `emu_start` raises
that exception once Unicorn has returned, as the binding does, and keeps it in
`hook_exception` meanwhile for runs the native core drives (harness/native/turns.c).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable

from ..abi.unicorn_abi import (
    UC_ARCH_RISCV,
    UC_HOOK_BLOCK,
    UC_HOOK_CODE,
    UC_MODE_RISCV32,
    UC_MODE_RISCV64,
)
from ..native.library import load_library

TYPE_CHECKING = False
if TYPE_CHECKING:
    import mmap
    from typing import Any

__all__ = ["Context", "Engine", "EngineError", "MmioRead", "MmioWrite"]

# (Any quoted: these aliases are made at run time, and typing is not loaded then)
MmioRead = Callable[["Engine", int, int, "Any"], int]
MmioWrite = Callable[["Engine", int, int, int, "Any"], None]
CodeHook = Callable[["Engine", int, int, "Any"], None]

_MMIO_READ = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint,
                              ctypes.c_void_p)
_MMIO_WRITE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint,
                               ctypes.c_uint64, ctypes.c_void_p)
_CODE_HOOK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32,
                              ctypes.c_void_p)


class EngineError(Exception):
    """A Unicorn call failed; `errno` is its uc_err."""

    def __init__(self, errno: int) -> None:
        self.errno = errno
        message = load_library().uc_strerror(errno)
        super().__init__(message.decode() if message else f"Unicorn error {errno}")


def _check(status: int) -> None:
    if status:
        raise EngineError(status)


class Context:
    """A saved CPU state (uc_context), freed with the object."""

    def __init__(self, lib: ctypes.CDLL, handle: ctypes.c_void_p) -> None:
        self._lib = lib           # held: at interpreter exit module globals may be gone
        self._handle = handle

    def __del__(self) -> None:
        if self._handle:
            self._lib.uc_context_free(self._handle)
            self._handle = ctypes.c_void_p()


class Engine:
    """A RISC-V Unicorn engine of `xlen` bits. `_uch` is its uc_engine handle, for the
    native core; `close()` releases it (uc_close) at once."""

    def __init__(self, xlen: int) -> None:
        self._lib = load_library()
        self._uch = ctypes.c_void_p()
        _check(self._lib.uc_open(UC_ARCH_RISCV, UC_MODE_RISCV64 if xlen == 64 else UC_MODE_RISCV32,
                                 ctypes.byref(self._uch)))
        self._kept: list[object] = []          # callbacks the C side calls: kept alive here
        self.hook_exception: BaseException | None = None

    def close(self) -> None:
        """uc_close now, not when the garbage collector reaches the engine: a machine
        sits in reference cycles (device callbacks), and each engine reserves 1 GiB of
        translation-cache address space until it is closed."""
        if self._uch:
            self._lib.uc_close(self._uch)
            self._uch = ctypes.c_void_p()
        self._kept.clear()

    def __del__(self) -> None:
        if getattr(self, "_uch", None):
            self.close()

    # -- running -------------------------------------------------------------------
    def emu_start(self, begin: int, until: int, timeout: int = 0, count: int = 0) -> None:
        self.hook_exception = None
        _check(self._lib.uc_emu_start(self._uch, begin, until, timeout, count))
        if self.hook_exception is not None:
            exc, self.hook_exception = self.hook_exception, None
            raise exc

    def emu_stop(self) -> None:
        _check(self._lib.uc_emu_stop(self._uch))

    def ctl_flush_tb(self) -> None:
        """Drop every translated block."""
        self._lib.engine_flush_tb(self._uch)

    # -- registers -----------------------------------------------------------------
    def reg_read(self, reg: int) -> int:
        value = ctypes.c_uint64()      # one per call: a debugger's thread reads too
        _check(self._lib.uc_reg_read(self._uch, reg, ctypes.byref(value)))
        return value.value

    def reg_write(self, reg: int, value: int) -> None:
        _check(self._lib.uc_reg_write(self._uch, reg, ctypes.byref(ctypes.c_uint64(value))))

    def context_save(self) -> Context:
        handle = ctypes.c_void_p()
        _check(self._lib.uc_context_alloc(self._uch, ctypes.byref(handle)))
        context = Context(self._lib, handle)
        _check(self._lib.uc_context_save(self._uch, handle))
        return context

    def context_restore(self, context: Context) -> None:
        _check(self._lib.uc_context_restore(self._uch, context._handle))

    # -- memory --------------------------------------------------------------------
    def mem_map(self, address: int, size: int, perms: int) -> None:
        _check(self._lib.uc_mem_map(self._uch, address, size, perms))

    def mem_map_ptr(self, address: int, size: int, perms: int, host_address: int) -> None:
        _check(self._lib.uc_mem_map_ptr(self._uch, address, size, perms, host_address))

    def mem_read(self, address: int, size: int) -> bytes:
        buf = ctypes.create_string_buffer(size)
        _check(self._lib.uc_mem_read(self._uch, address, buf, size))
        return buf.raw

    def mem_write(self, address: int, data: bytes | mmap.mmap) -> None:
        """Write `data` (bytes, or a writable mapping such as a mapped file's private
        copy, passed by address) to guest memory."""
        buf = data if isinstance(data, bytes) else (ctypes.c_char * len(data)).from_buffer(data)
        _check(self._lib.uc_mem_write(self._uch, address, buf, len(data)))

    def mmio_map(self, address: int, size: int, read: MmioRead, read_data: Any,
                 write: MmioWrite, write_data: Any) -> None:
        """Device memory: `read(engine, offset, size, read_data)` serves each load,
        `write(engine, offset, size, value, write_data)` each store."""
        def on_read(_uch: int, offset: int, width: int, _ud: int) -> int:
            try:
                return read(self, offset, width, read_data)
            except BaseException as e:
                self._stop_with(e)
                return 0

        def on_write(_uch: int, offset: int, width: int, value: int, _ud: int) -> None:
            try:
                write(self, offset, width, value, write_data)
            except BaseException as e:
                self._stop_with(e)

        read_fn, write_fn = _MMIO_READ(on_read), _MMIO_WRITE(on_write)
        self._kept += (read_fn, write_fn)
        _check(self._lib.uc_mmio_map(self._uch, address, size, read_fn, None, write_fn, None))

    def hook_add(self, kind: int, callback: CodeHook, user_data: Any = None, begin: int = 1,
                 end: int = 0) -> int:
        """A code or block hook, `callback(engine, address, size, user_data)`, on
        [begin, end] (begin > end: everywhere); returns its handle."""
        if kind not in (UC_HOOK_CODE, UC_HOOK_BLOCK):
            raise ValueError(f"hook kind {kind} is not a code or block hook")

        def on_code(_uch: int, address: int, size: int, _ud: int) -> None:
            try:
                callback(self, address, size, user_data)
            except BaseException as e:
                self._stop_with(e)

        fn = _CODE_HOOK(on_code)
        self._kept.append(fn)
        handle = ctypes.c_size_t()
        _check(self._lib.uc_hook_add(self._uch, ctypes.byref(handle), kind, fn, None,
                                     ctypes.c_uint64(begin), ctypes.c_uint64(end)))
        return handle.value

    def _stop_with(self, exc: BaseException) -> None:
        if self.hook_exception is None:
            self.hook_exception = exc
        self._lib.uc_emu_stop(self._uch)
