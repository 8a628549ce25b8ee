"""The numbers of Unicorn 2.1's C API that privlab's Python passes to it: one place.

harness/machine/engine.py calls libunicorn with these; the native core's generated
header (harness/abi/native_layout.py) asserts each one against <unicorn/unicorn.h> and
<unicorn/riscv.h> at compile time, so a Unicorn whose numbers moved fails to build
instead of running with the wrong ones. (The unicorn package's own constant modules
would do as well, but importing any of them loads its whole Python binding.)
"""

from __future__ import annotations

__all__ = ["UNICORN_CONSTANTS"]

UC_ARCH_RISCV = 8
UC_MODE_RISCV32 = 1 << 2
UC_MODE_RISCV64 = 1 << 3

UC_PROT_READ = 1
UC_PROT_WRITE = 2
UC_PROT_EXEC = 4
UC_PROT_ALL = 7

UC_ERR_OK = 0
UC_ERR_READ_UNMAPPED = 6
UC_ERR_WRITE_UNMAPPED = 7
UC_ERR_FETCH_UNMAPPED = 8
UC_ERR_FETCH_PROT = 14
UC_ERR_EXCEPTION = 21

UC_MEM_FETCH_UNMAPPED = 21      # uc_mem_type: the access kind an unmapped fetch reports

UC_HOOK_CODE = 1 << 2
UC_HOOK_BLOCK = 1 << 3

UC_RISCV_REG_X0 = 1
UC_RISCV_REG_PC = 190
UC_RISCV_REG_PRIV = 191

UNICORN_CONSTANTS: dict[str, int] = {
    name: value for name, value in globals().items() if name.startswith("UC_")}
