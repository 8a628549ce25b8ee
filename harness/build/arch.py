"""The two RISC-V targets privlab builds for, apart from the toolchain that builds
for them: a run whose images are built already needs the names, not the compiler."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ARCHES", "RV32", "RV64", "Arch"]


@dataclass(frozen=True)
class Arch:
    """A RISC-V target: integer base, M, A and C extensions, Zicsr, Zifencei; no FP."""

    name: str
    xlen: int
    triple: str
    cpu: str
    abi: str

    def target_flags(self) -> list[str]:
        return ["-target", self.triple, f"-mcpu={self.cpu}", f"-mabi={self.abi}"]


RV64 = Arch("rv64", 64, "riscv64-freestanding-none", "generic_rv64+m+a+c+zicsr+zifencei", "lp64")
RV32 = Arch("rv32", 32, "riscv32-freestanding-none", "generic_rv32+m+a+c+zicsr+zifencei", "ilp32")
ARCHES: dict[str, Arch] = {a.name: a for a in (RV64, RV32)}
