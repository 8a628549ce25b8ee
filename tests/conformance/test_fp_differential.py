"""F/D on privlab against QEMU 7.2, instruction by instruction.

fpdiff.generate builds one program of several thousand cases (every F/D instruction
over edge operands: signed zeros, subnormals, infinities, quiet and signalling NaNs,
operands not NaN-boxed, integers at the conversions' limits; every static rounding
mode, dyn under every frm, reserved rm and frm), seeded so a run is reproducible. Each
case's result register, fflags, mstatus.FS after it and trap cause are printed one
line per case; QEMU 7.2's lines and privlab's must be identical.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from privlab.build.baremetal import build_baremetal
from privlab.build.toolchain import ARCHES
from privlab.machine import Machine, Stop, load_elf
from privlab.machine.assemble import boot_bare
from privlab.qemu import qemu_binary, run_qemu

from .fpdiff import BOX, F32, UNBOXED, Case, generate

SEED = 43
"""The seed of the random operands and rounding-mode choices (the edge operands are
always all there); any seed must pass."""


def _requires_qemu(arch: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(qemu_binary(ARCHES[arch]) is None,
                              reason=f"qemu-system-riscv{ARCHES[arch].xlen} is not installed")


ARCH_PARAMS = [pytest.param(a, marks=_requires_qemu(a), id=a) for a in ("rv64", "rv32")]


def _build(arch: str, seed: int, tmp: Path) -> tuple[Path, list[Case]]:
    source, cases = generate(ARCHES[arch].xlen, seed)
    path = tmp / "fpdiff.S"
    path.write_text(source)
    return build_baremetal([path], ARCHES[arch], tmp / "fpdiff.elf", listings=False), cases


@pytest.mark.parametrize("arch", ARCH_PARAMS)
def test_every_fp_case_matches_qemu(arch: str, tmp_path: Path) -> None:
    elf, cases = _build(arch, SEED, tmp_path)
    reference = run_qemu(elf, ARCHES[arch], timeout_s=60)
    assert reference.exit_status == 0, reference.stderr
    want = reference.console.decode().splitlines()
    assert len(want) == len(cases)

    image = load_elf(elf)
    m = Machine(image.xlen)
    boot_bare(m, image)
    result = m.run(max_insns=50_000_000)
    assert result.stop is Stop.HALT and result.exit_status == 0, result.message
    got = m.console.text().splitlines()
    assert len(got) == len(cases)

    differ = [f"{c.describe()}: QEMU {w} privlab {g}"
              for c, w, g in zip(cases, want, got, strict=False) if w != g]
    assert not differ, f"{len(differ)} of {len(cases)} cases differ:\n" + "\n".join(differ[:40])


@pytest.mark.parametrize("arch", ARCH_PARAMS)
def test_qemu_gives_the_spec_values_the_suite_is_read_against(arch: str, tmp_path: Path) -> None:
    # The output format and the reference together: a few cases whose lines the spec
    # fixes exactly (result bits, fflags NV=0x10 NX=0x01, FS 3 = Dirty, 1 = Initial,
    # trap 0x102 = illegal instruction).
    elf, cases = _build(arch, SEED, tmp_path)
    lines = run_qemu(elf, ARCHES[arch], timeout_s=60).console.decode().splitlines()
    by_case = dict(zip(((c.name, c.rm, c.operands) for c in cases), lines, strict=False))
    snan, one = BOX | F32["snan"], BOX | F32["+1"]
    for ops in ((snan, one), (one, snan)):
        assert by_case[("fmax.s", "-", ops)] == "ffffffff3f800000 1003 00000000"  # 1.0, NV, Dirty
    fmv = by_case[("fmv.s", "-", (UNBOXED["unboxed1"], UNBOXED["unboxed1"]))]
    assert fmv == "ffffffff7fc00000 0003 00000000"    # the canonical NaN, boxed
    reserved = [line for c, line in zip(cases, lines, strict=False) if c.rm in ("rm5", "rm6")]
    assert reserved and all(line.endswith(" 0001 00000102") for line in reserved)


def test_the_program_is_the_same_for_the_same_seed_and_covers_every_rounding_mode() -> None:
    first, cases = generate(64, SEED)
    again, _ = generate(64, SEED)
    other, _ = generate(64, SEED + 1)
    assert first == again and first != other
    rms = {c.rm for c in cases}
    assert {"rne", "rtz", "rdn", "rup", "rmm", "rm5", "rm6"} <= rms
    assert {f"dyn:{k}" for k in range(8)} <= rms
    names = {c.name for c in cases}
    for sfx in ("s", "d"):
        for op in ("fadd", "fsub", "fmul", "fdiv", "fsqrt", "fmin", "fmax", "fsgnj", "fsgnjn",
                   "fsgnjx", "feq", "flt", "fle", "fclass", "fmadd", "fmsub", "fnmsub",
                   "fnmadd", "fcvt.w", "fcvt.wu", "fcvt.l", "fcvt.lu"):
            assert f"{op}.{sfx}" in names, f"{op}.{sfx}"
    assert {"fmv.w.x", "fmv.x.w", "fmv.d.x", "fmv.x.d", "fcvt.s.d", "fcvt.d.s"} <= names
    assert not {"fcvt.l.s", "fmv.x.d"} & {c.name for c in generate(32, SEED)[1]}
