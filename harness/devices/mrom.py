"""The reset ROM (MROM) of QEMU's `virt` board, at PLATFORM_MROM_BASE.

QEMU 7.2 fills it at reset with a ten-word reset vector (it loads a0 = hart id,
a1 = the device tree and a2 = the address of the `fw_dynamic_info` that follows it,
then jumps to RAM) and, right after it, that `fw_dynamic_info`: the record OpenSBI's
fw_dynamic firmware reads to find the next stage (harness/machine/assemble.py writes
both). privlab starts the hart where the vector jumps, with the registers it would
have set, so the vector is never executed; it is there to be read, as on QEMU.

It is ROM: a guest's write changes nothing, as on QEMU.
"""

from __future__ import annotations

from ..abi.platform import PLATFORM

__all__ = ["FW_DYNAMIC_INFO_OFFSET", "Mrom", "reset_rom"]

# The reset vector, one instruction per word: auipc t0, 0; addi a2, t0, 40 (the
# fw_dynamic_info below); csrr a0, mhartid; then a1 and t0 loaded from the two
# address words (lw on RV32, ld on RV64); jr t0.
_VECTOR_HEAD = (0x00000297, 0x02828613, 0xF1402573)
_LOADS = {32: (0x0202A583, 0x0182A283), 64: (0x0202B583, 0x0182B283)}
_JR_T0 = 0x00028067
FW_DYNAMIC_INFO_OFFSET = 40   # ten words of vector; a2 = PLATFORM_MROM_BASE + this

# OpenSBI's fw_dynamic_info (include/sbi/fw_dynamic.h): six XLEN-wide words.
_FW_DYNAMIC_MAGIC = 0x4942534F   # "OSBI"
_FW_DYNAMIC_VERSION = 2
_NEXT_MODE_S = 1


def reset_rom(xlen: int, start: int, fdt: int, next_addr: int) -> bytes:
    """The ROM's bytes as QEMU 7.2 writes them: the vector jumping to `start` with the
    device tree at `fdt`, then the fw_dynamic_info naming `next_addr` (the kernel's
    entry) in S-mode on hart 0."""
    words = [*_VECTOR_HEAD, *_LOADS[xlen], _JR_T0,
             start & 0xFFFFFFFF, start >> 32 if xlen == 64 else 0,
             fdt & 0xFFFFFFFF, fdt >> 32 if xlen == 64 else 0]
    vector = b"".join(w.to_bytes(4, "little") for w in words)
    info = (_FW_DYNAMIC_MAGIC, _FW_DYNAMIC_VERSION, next_addr, _NEXT_MODE_S, 0, 0)
    return vector + b"".join(v.to_bytes(xlen // 8, "little") for v in info)


class Mrom:
    name = "mrom"

    def __init__(self) -> None:
        self.base = PLATFORM.mrom_base
        self.size = PLATFORM.mrom_size
        self.content = b""

    def read(self, offset: int, size: int) -> int:
        return int.from_bytes(self.content[offset:offset + size].ljust(size, b"\0"), "little")

    def write(self, offset: int, size: int, value: int) -> None:
        pass   # ROM
