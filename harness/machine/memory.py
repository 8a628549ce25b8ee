"""Guest memory: RAM, physical access, and virtual access through the current satp."""

from __future__ import annotations

import ctypes
import mmap
from collections.abc import Callable

from ..abi.unicorn_abi import UC_PROT_ALL, UC_PROT_EXEC, UC_PROT_READ, UC_PROT_WRITE
from ..errors import BadInput, GuestError
from ..native.library import load_library
from .engine import Engine, EngineError
from .loader import ElfImage

__all__ = ["Memory"]

_PROT = {"r": UC_PROT_READ, "w": UC_PROT_WRITE, "x": UC_PROT_EXEC}

def _probe(fn: Callable[..., int], *args: object) -> int:
    """A translation for the host (debugger, inspectors): the native core does not
    apply PMP to it (harness/native/pmp.c, privlab_probe)."""
    lib = load_library()
    lib.privlab_probe(1)
    try:
        return fn(*args)
    finally:
        lib.privlab_probe(0)


class Memory:
    """RAM is host memory privlab owns (an anonymous mapping, zero-filled and paged in
    lazily), shared with Unicorn and with the native core, which reads code and page
    tables from it directly."""

    def __init__(self, uc: Engine, ram_base: int, ram_size: int) -> None:
        self._uc = uc
        self.ram_base = ram_base
        self.ram_size = ram_size
        # Private (not Python's default, shared) and in huge pages where the host allows
        # them: the bundled kernel touches every frame at boot, and 32,768 small-page
        # faults through the shmem page cache were a quarter of `privlab run --user
        # hello` (0.41 -> 0.31 s). Snapshots' dirty-page tracking
        # (harness/native/dirty.c) works the same on either.
        self._host = mmap.mmap(-1, ram_size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        if hasattr(mmap, "MADV_HUGEPAGE"):
            self._host.madvise(mmap.MADV_HUGEPAGE)
        self._host_view = ctypes.c_char.from_buffer(self._host)
        self.host_address = ctypes.addressof(self._host_view)
        uc.mem_map_ptr(ram_base, ram_size, UC_PROT_ALL, self.host_address)

    def close(self) -> None:
        """Give RAM back to the host (the machine's engines are gone): unmapped, or,
        while a view of it is still held somewhere (a snapshot, a device's DMA view),
        its pages dropped, so that only the address range stays until that view goes."""
        if self._host.closed:
            return
        self._host_view = None   # type: ignore[assignment]
        try:
            self._host.close()
        except BufferError:
            if hasattr(mmap, "MADV_DONTNEED"):
                self._host.madvise(mmap.MADV_DONTNEED)

    def attach(self, uc: Engine) -> None:
        """Translate through this engine's hart from now on (the current hart of a
        machine with several: they all map the same RAM)."""
        self._uc = uc

    @property
    def host(self) -> mmap.mmap:
        """RAM as host memory (a writable buffer; writing it bypasses Unicorn, so the
        caller flushes translations: harness/machine/snapshot.py)."""
        return self._host

    @property
    def ram_end(self) -> int:
        return self.ram_base + self.ram_size

    def in_ram(self, addr: int, size: int = 1) -> bool:
        return self.ram_base <= addr and addr + size <= self.ram_end

    def read(self, paddr: int, size: int) -> bytes:
        """Read RAM by physical address."""
        if not self.in_ram(paddr, size):
            raise GuestError(f"physical range {paddr:#x}+{size:#x} is not RAM")
        return self._uc.mem_read(paddr, size)

    def write(self, paddr: int, data: bytes | mmap.mmap) -> None:
        if not self.in_ram(paddr, len(data)):
            raise GuestError(f"physical range {paddr:#x}+{len(data):#x} is not RAM")
        self._uc.mem_write(paddr, data)

    def read_virtual(self, vaddr: int, size: int, access: str = "r") -> bytes:
        """Read through the current address translation and privilege, as a load (or a
        fetch, with access="x") by the hart would; GuestError if it would fault."""
        buf = ctypes.create_string_buffer(size)
        err = _probe(load_library().uc_vmem_read, self._uc._uch, vaddr, _PROT[access], buf,
                     size)
        if err:
            raise GuestError(f"virtual address {vaddr:#x} is not readable ({EngineError(err)})")
        return buf.raw

    def write_virtual(self, vaddr: int, data: bytes) -> None:
        """Write through the current address translation (page by page); GuestError if
        a page is not mapped or is not RAM. Callers that may change code or page tables
        must call Hart.sync() afterwards (Machine.write_virtual does)."""
        done = 0
        while done < len(data):
            va = vaddr + done
            chunk = min(len(data) - done, 0x1000 - (va & 0xFFF))
            pa = self.translate(va, "r")
            if pa is None:
                raise GuestError(f"virtual address {va:#x} is not mapped")
            self.write(pa, data[done:done + chunk])
            done += chunk

    def translate(self, vaddr: int, access: str = "r") -> int | None:
        """The physical address for vaddr under the current satp and privilege, or None."""
        out = ctypes.c_uint64()
        err = _probe(load_library().uc_vmem_translate, self._uc._uch, vaddr, _PROT[access],
                     ctypes.byref(out))
        return None if err else out.value

    def load(self, image: ElfImage) -> None:
        """Place an ELF's segments at their physical addresses, as QEMU's loader does."""
        for seg in image.segments:
            if not self.in_ram(seg.paddr, seg.memsz):
                raise BadInput(
                    f"{image.path}: segment at {seg.paddr:#x} ({seg.memsz:#x} bytes) lies "
                    f"outside RAM {self.ram_base:#x}-{self.ram_end:#x}")
            self._uc.mem_write(seg.paddr, seg.data + bytes(seg.memsz - len(seg.data)))
