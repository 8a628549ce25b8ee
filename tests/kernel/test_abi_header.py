"""riscv_gen.h, generated from privlab/abi, is the one C and assembler definition of the
privileged spec's numbers: right by the spec, assembler-safe, and restated nowhere."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from privlab.abi.platform import parse_define_lines
from privlab.abi.spec_header import render
from privlab.build.asm_offsets import KernelLayout, kernel_layout
from privlab.build.images import Images
from privlab.paths import REPO_ROOT

# Values read off the privileged spec v1.12 (tables 3.6 and 4.x, figures 3.6, 4.18):
# an oracle written independently of harness/abi/csr.py and paging.py.
SPEC_VALUES = {
    "PRV_U": 0, "PRV_S": 1, "PRV_M": 3,
    "CSR_MSTATUS": 0x300, "CSR_SATP": 0x180, "CSR_SCAUSE": 0x142, "CSR_MTVEC": 0x305,
    "MSTATUS_SIE": 1 << 1, "MSTATUS_MIE": 1 << 3, "MSTATUS_SPIE": 1 << 5,
    "MSTATUS_MPIE": 1 << 7, "MSTATUS_SPP": 1 << 8, "MSTATUS_MPP": 3 << 11,
    "MSTATUS_MPP_SHIFT": 11, "MSTATUS_MPP_S": 1 << 11, "MSTATUS_MPP_M": 3 << 11,
    "MSTATUS_MPRV": 1 << 17, "MSTATUS_SUM": 1 << 18, "MSTATUS_MXR": 1 << 19,
    "MSTATUS_TVM": 1 << 20, "MSTATUS_TW": 1 << 21, "MSTATUS_TSR": 1 << 22,
    "SSTATUS_SPP": 1 << 8, "SSTATUS_SUM": 1 << 18,
    "IRQ_S_SOFTWARE": 1, "IRQ_M_SOFTWARE": 3, "IRQ_S_TIMER": 5, "IRQ_M_TIMER": 7,
    "IRQ_S_EXTERNAL": 9, "IRQ_M_EXTERNAL": 11, "MIP_SSIP": 1 << 1, "MIP_STIP": 1 << 5,
    "MIP_MTIP": 1 << 7,
    "MIP_SEIP": 1 << 9, "MIE_MTIE": 1 << 7, "SIE_STIE": 1 << 5,
    "CAUSE_MISALIGNED_FETCH": 0, "CAUSE_FAULT_FETCH": 1, "CAUSE_ILLEGAL_INSTRUCTION": 2,
    "CAUSE_BREAKPOINT": 3, "CAUSE_MISALIGNED_LOAD": 4, "CAUSE_FAULT_LOAD": 5,
    "CAUSE_MISALIGNED_STORE": 6, "CAUSE_FAULT_STORE": 7, "CAUSE_USER_ECALL": 8,
    "CAUSE_SUPERVISOR_ECALL": 9, "CAUSE_MACHINE_ECALL": 11, "CAUSE_EXEC_PAGE_FAULT": 12,
    "CAUSE_LOAD_PAGE_FAULT": 13, "CAUSE_STORE_PAGE_FAULT": 15,
    "COUNTEREN_CY": 1, "COUNTEREN_TM": 2, "COUNTEREN_IR": 4,
    "PMP_R": 1, "PMP_W": 2, "PMP_X": 4, "PMP_A_TOR": 1 << 3, "PMP_A_NAPOT": 3 << 3,
    "PMP_L": 1 << 7,
    "PAGE_SHIFT": 12, "PAGE_SIZE": 4096, "PTE_V": 1, "PTE_R": 2, "PTE_W": 4, "PTE_X": 8,
    "PTE_U": 16, "PTE_G": 32, "PTE_A": 64, "PTE_D": 128, "PTE_PPN_SHIFT": 10,
    "SV39_MODE": 8, "SV39_LEVELS": 3, "SV39_VPN_BITS": 9,
    "SV32_MODE": 1, "SV32_LEVELS": 2, "SV32_VPN_BITS": 10,
}
XLEN_VALUES = {
    64: {"CAUSE_INTERRUPT": 1 << 63, "CAUSE_IRQ_S_TIMER": (1 << 63) | 5,
         "SATP_MODE": 8 << 60, "SATP_MODE_SHIFT": 60, "SATP_PPN": (1 << 44) - 1,
         "PT_LEVELS": 3, "PT_INDEX_BITS": 9, "MSTATUS_SD": 1 << 63},
    32: {"CAUSE_INTERRUPT": 1 << 31, "CAUSE_IRQ_S_TIMER": (1 << 31) | 5,
         "SATP_MODE": 1 << 31, "SATP_MODE_SHIFT": 31, "SATP_PPN": (1 << 22) - 1,
         "PT_LEVELS": 2, "PT_INDEX_BITS": 10, "MSTATUS_SD": 1 << 31},
}


@pytest.mark.parametrize("xlen", [64, 32])
def test_the_generated_header_has_the_specs_values(xlen: int) -> None:
    defines = parse_define_lines(render(xlen))
    expected = {**SPEC_VALUES, **XLEN_VALUES[xlen]}
    assert {name: defines.get(name) for name in expected} == expected


@pytest.mark.parametrize("xlen", [64, 32])
def test_the_kernels_copy_on_write_bit_is_one_of_the_software_bits(xlen: int) -> None:
    """PTE_COW is the kernel's, not the spec's: it must lie inside RSW (bits 8-9),
    which the hart ignores, so a COW page translates exactly as its R/W/X say."""
    defines = parse_define_lines(render(xlen))
    assert defines["PTE_RSW"] == 0x300 and defines["PTE_RSW_SHIFT"] == 8
    assert defines["PTE_COW"] == 1 << 8
    assert defines["PTE_COW"] & defines["PTE_RSW"] == defines["PTE_COW"]


def test_rv32_has_no_rv64_only_fields() -> None:
    rv32, rv64 = parse_define_lines(render(32)), parse_define_lines(render(64))
    assert "MSTATUS_UXL" in rv64 and "MSTATUS_UXL" not in rv32


def test_outside_the_c_only_block_every_line_is_a_plain_integer_define() -> None:
    text = render(64)
    assembler_part = text.split("#ifndef __ASSEMBLER__")[0]
    for line in assembler_part.splitlines():
        assert line == "" or line.startswith(("/*", " *", "#ifndef RISCV_GEN_H",
                                              "#define RISCV_GEN_H")) \
            or re.fullmatch(r"#define [A-Z][A-Z0-9_]* (0x[0-9a-f]+|\d+)", line), line


def test_host_values_are_64_bits_wide() -> None:
    host = render(None, host=True)
    assert "#define MSTATUS_UXL 0x300000000ull" in host
    assert "#define CAUSE_USER_ECALL 8\n" in host
    assert "CAUSE_INTERRUPT" not in host   # XLEN-dependent: not in the neutral header


def test_the_build_writes_the_header_it_compiles_with(images: Images) -> None:
    assert (images.out_dir / "gen" / "riscv_gen.h").read_text() == render(images.arch.xlen)


def test_assembler_accepts_the_header(tmp_path: Path) -> None:
    from privlab.build.toolchain import RV64, CompileOptions, compile_object

    (tmp_path / "riscv_gen.h").write_text(render(64))
    src = tmp_path / "uses.S"
    src.write_text('#include "riscv_gen.h"\n'
                   "    li t0, MSTATUS_MPP_S | MSTATUS_MPIE\n"
                   "    li t1, CAUSE_INTERRUPT | IRQ_S_TIMER\n")
    assert compile_object(src, CompileOptions(RV64, include_dirs=(tmp_path,))).exists()


def _generated_names() -> set[str]:
    return set(parse_define_lines(render(64))) | set(parse_define_lines(render(32))) \
        | set(parse_define_lines(render(None, host=True)))


def test_no_c_or_assembler_source_restates_a_generated_number() -> None:
    names = _generated_names()
    files = subprocess.run(["git", "ls-files", "kernel", "userland", "tests/conformance",
                            "harness/native", "benchmarks", "labs"],
                           cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    restated = []
    for rel in files.split():
        if not rel.endswith((".c", ".h", ".S")):
            continue
        for n, line in enumerate((REPO_ROOT / rel).read_text().splitlines(), 1):
            m = re.match(r"\s*#\s*define\s+([A-Z][A-Z0-9_]*)\b", line)
            if m and m[1] in names:
                restated.append(f"{rel}:{n}: {m[1]}")
    assert restated == []


def test_the_kernel_layout_is_read_from_the_built_kernel(images: Images,
                                                         images32: Images) -> None:
    rv64 = kernel_layout(images.kernel, 64)
    assert (rv64.trampoline, rv64.trapframe) == (0x3FFFFFF000, 0x3FFFFFE000)
    # KSTACK(i) = TRAMPOLINE - (i + 1) * (KSTACK_SIZE + PGSIZE), KSTACK_SIZE two pages
    assert (rv64.kstack0, rv64.kstack_stride, rv64.kstack_size) == \
        (0x3FFFFFF000 - 3 * 4096, 3 * 4096, 2 * 4096)
    rv32 = kernel_layout(images32.kernel, 32)
    assert (rv32.trampoline, rv32.kstack0) == (0xFFFFF000, 0xFFFFF000 - 3 * 4096)


def test_a_kernel_stack_is_found_from_any_address_in_it_top_included() -> None:
    layout = KernelLayout(0x3FFFFFF000, 0x3FFFFFE000, 0x3FFFFFC000, 0x3000, 0x2000)
    assert layout.kernel_stack(0x3FFFFFC000) == (0x3FFFFFC000, 0x3FFFFFE000)
    assert layout.kernel_stack(0x3FFFFFE000) == (0x3FFFFFC000, 0x3FFFFFE000)   # the top
    assert layout.kernel_stack(0x3FFFFF9000) == (0x3FFFFF9000, 0x3FFFFFB000)   # slot 1
    assert layout.kernel_stack(0x3FFFFFB800) is None                           # a guard page
