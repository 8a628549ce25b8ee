"""The Unicorn 2.1.4 behaviours the native core is built around, reproduced on bare
Unicorn with no core attached. Each test pins one fact of docs/unicorn.md, which says
what privlab does about it and where: if an upgrade changes a fact, its test fails and
the comment names the section (and so the workaround) to revisit."""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable

import pytest
from unicorn import Uc, UcError
from unicorn.riscv_const import (
    UC_RISCV_REG_MCAUSE,
    UC_RISCV_REG_MCOUNTEREN,
    UC_RISCV_REG_MEPC,
    UC_RISCV_REG_MIDELEG,
    UC_RISCV_REG_MIE,
    UC_RISCV_REG_MIP,
    UC_RISCV_REG_MSCRATCH,
    UC_RISCV_REG_MSTATUS,
    UC_RISCV_REG_MTVAL,
    UC_RISCV_REG_PC,
    UC_RISCV_REG_PRIV,
    UC_RISCV_REG_SATP,
    UC_RISCV_REG_SCAUSE,
    UC_RISCV_REG_SCOUNTEREN,
    UC_RISCV_REG_STVAL,
    UC_RISCV_REG_STVEC,
    UC_RISCV_REG_X5,
    UC_RISCV_REG_X6,
    UC_RISCV_REG_X7,
    UC_RISCV_REG_X10,
    UC_RISCV_REG_X11,
)
from unicorn.unicorn_const import (
    UC_ARCH_RISCV,
    UC_ERR_EXCEPTION,
    UC_ERR_FETCH_UNMAPPED,
    UC_ERR_INSN_INVALID,
    UC_ERR_READ_UNMAPPED,
    UC_ERR_WRITE_UNMAPPED,
    UC_HOOK_BLOCK,
    UC_HOOK_CODE,
    UC_HOOK_INSN_INVALID,
    UC_HOOK_INTR,
    UC_HOOK_MEM_FETCH_UNMAPPED,
    UC_HOOK_MEM_UNMAPPED,
    UC_MEM_FETCH_UNMAPPED,
    UC_MEM_READ_UNMAPPED,
    UC_MEM_WRITE_UNMAPPED,
    UC_MODE_RISCV32,
    UC_MODE_RISCV64,
    UC_PROT_READ,
)
from unicorn.unicorn_py3.unicorn import uclib

from machine.asm import build_asm
from privlab.abi.platform import PLATFORM, parse_define_lines
from privlab.abi.spec_header import render
from privlab.machine import load_elf

SPEC = parse_define_lines(render(64))   # the numbers riscv_gen.h gives the C side
RAM = PLATFORM.ram_base
ROOT = RAM + 0x10000   # a zeroed page: an Sv39 root table with no valid entry
SV39 = SPEC["SATP_MODE"]
MSTATUS_SIE = SPEC["MSTATUS_SIE"]
MSTATUS_MPP_S = SPEC["MSTATUS_MPP_S"]
MSTATUS_VS = SPEC["MSTATUS_VS"]
MSTATUS_FS = SPEC["MSTATUS_FS"]
MSTATUS_MPRV = SPEC["MSTATUS_MPRV"]
SSIP = SPEC["MIP_SSIP"]


def bare_unicorn(body: str) -> tuple[Uc, dict[str, int]]:
    image = load_elf(build_asm(body))
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    uc.mem_map(RAM, 1 << 20)
    for seg in image.segments:
        uc.mem_write(seg.paddr, seg.data)
    return uc, image.symbols


def run_catching(uc: Uc, hooks: dict[int, Callable[..., object]], start: int = RAM) -> int:
    """Run from `start` (the prologue, which writes mtvec, by default: start past it
    when running below M) for at most 200 instructions; the UcError code, or 0."""
    for kind, fn in hooks.items():
        uc.hook_add(kind, fn)
    try:
        uc.emu_start(start, RAM + 0x1000, count=200)
    except UcError as e:
        return int(e.errno)
    return 0


def stop_recording(seen: list[int]) -> Callable[[Uc, int, object], None]:
    """An exception hook that records the code Unicorn reports and stops."""
    def intr(uc: Uc, intno: int, _ud: object) -> None:
        seen.append(intno)
        uc.emu_stop()
    return intr


def test_exception_hook_sees_pc_of_faulting_instruction_plus_4_even_compressed() -> None:
    # docs/unicorn.md#epc-is-pc-minus-4. The instruction is a 16-bit zero (illegal).
    uc, sym = bare_unicorn("""
    .globl at
    at:
        .hword 0
        .hword 0
    """)
    seen: list[tuple[int, int]] = []

    def intr(uc: Uc, intno: int, _ud: object) -> None:
        seen.append((intno, uc.reg_read(UC_RISCV_REG_PC)))
        uc.emu_stop()

    run_catching(uc, {UC_HOOK_INTR: intr})
    assert seen == [(2, sym["at"] + 4)]


@pytest.mark.parametrize("priv", [0, 1, 3])
def test_every_ecall_is_reported_as_code_8_whatever_the_privilege(priv: int) -> None:
    # docs/unicorn.md#ecall-is-always-8: on_intr adds the privilege to get 8/9/11.
    uc, sym = bare_unicorn("""
    .globl at
    at:
        ecall
    """)
    uc.reg_write(UC_RISCV_REG_PRIV, priv)
    seen: list[int] = []
    run_catching(uc, {UC_HOOK_INTR: stop_recording(seen)}, start=sym["at"])
    assert seen == [8]


def test_ebreak_goes_to_the_invalid_instruction_hook_with_pc_at_the_ebreak() -> None:
    # docs/unicorn.md#ebreak-is-an-invalid-instruction. Declining (False) stops
    # emulation; accepting (True) without moving PC
    # runs the ebreak again. hooks.c on_invalid accepts and moves PC by delivering the
    # breakpoint trap, so execution continues in the trap vector.
    uc, sym = bare_unicorn("""
    .globl at
    at:
        ebreak
    """)
    pcs: list[int] = []

    def decline(uc: Uc, _ud: object) -> bool:
        pcs.append(uc.reg_read(UC_RISCV_REG_PC))
        return False

    assert run_catching(uc, {UC_HOOK_INSN_INVALID: decline}) == UC_ERR_INSN_INVALID
    assert pcs == [sym["at"]]
    uc, sym = bare_unicorn("ebreak")
    calls: list[int] = []
    run_catching(uc, {UC_HOOK_INSN_INVALID: lambda uc, _: (calls.append(1), True)[1]})
    assert len(calls) > 1


def test_unmapped_load_is_a_host_error_with_pc_at_the_instruction() -> None:
    # docs/unicorn.md#unmapped-memory-is-a-host-error: machine.py turns it into an
    # access fault at that pc.
    uc, sym = bare_unicorn("""
        li t0, 0x40000000
    .globl at
    at:
        lw t1, 0(t0)
    """)
    assert run_catching(uc, {}) == UC_ERR_READ_UNMAPPED
    assert uc.reg_read(UC_RISCV_REG_PC) == sym["at"]


@pytest.mark.parametrize(("bit", "kept"), [(20, True), (21, False), (22, False),
                                           (29, True), (30, True)])
def test_unicorn_keeps_tw_and_tsr_at_bits_29_and_30(bit: int, kept: bool) -> None:
    # docs/unicorn.md#mstatus-tw-tsr-misplaced: csrops.c keeps TW/TSR itself
    # (mstatus_extra). Bit 20 is TVM, which Unicorn keeps where the spec has it.
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    uc.reg_write(UC_RISCV_REG_MSTATUS, 1 << bit)
    assert bool(uc.reg_read(UC_RISCV_REG_MSTATUS) & (1 << bit)) is kept


def test_rdtime_is_illegal_even_in_m_mode() -> None:
    # docs/unicorn.md#rdtime-is-illegal: the core emulates time from instructions
    # retired.
    uc, _ = bare_unicorn("rdtime t0")
    seen: list[int] = []
    run_catching(uc, {UC_HOOK_INTR: lambda uc, n, _: (seen.append(n), uc.emu_stop())})
    assert seen == [2]


@pytest.mark.parametrize("priv", [0, 1])
def test_counter_reads_below_m_do_not_trap_whatever_mcounteren(priv: int) -> None:
    # docs/unicorn.md#counters-ignore-mcounteren. QEMU 5.0 (priv 1.10 and later) lets
    # every level read cycle/instret, so only the core's code hooks on counter reads
    # apply the guest's mcounteren/scounteren. The M-level mcycle read after them
    # is the first instruction that traps.
    uc, sym = bare_unicorn("""
    .globl at
    at:
        rdcycle t0
        rdinstret t1
    .globl mcycle_read
    mcycle_read:
        csrr t2, mcycle
    """)
    uc.reg_write(UC_RISCV_REG_MCOUNTEREN, 0)
    uc.reg_write(UC_RISCV_REG_SCOUNTEREN, 0)
    uc.reg_write(UC_RISCV_REG_PRIV, priv)
    seen: list[tuple[int, int]] = []

    def intr(uc: Uc, intno: int, _ud: object) -> None:
        seen.append((intno, uc.reg_read(UC_RISCV_REG_PC) - 4))
        uc.emu_stop()

    run_catching(uc, {UC_HOOK_INTR: intr}, start=sym["at"])
    assert seen == [(2, sym["mcycle_read"])]


def test_fp_csrs_cannot_be_read_through_the_register_api() -> None:
    """uc_reg_read of FCSR returns host bytes, not the CSR (so harness/native/regs.c
    maps no FP CSR and the API calls them unavailable): docs/unicorn.md#fp-csrs-unreadable."""
    from unicorn.riscv_const import UC_RISCV_REG_FCSR

    from privlab.abi.csr import Csr
    from privlab.machine import Machine
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    assert uc.reg_read(UC_RISCV_REG_FCSR) > 0xFF          # fcsr has 8 bits
    m = Machine(64)
    try:
        for csr in (Csr.FFLAGS, Csr.FRM, Csr.FCSR):
            with pytest.raises(KeyError, match="is not available"):
                m.hart.csr(csr)
    finally:
        m.close()


def test_exception_hook_runs_before_any_trap_csr_is_written() -> None:
    # docs/unicorn.md#no-trap-entry: trapentry.c take_trap writes all of these itself.
    uc, _ = bare_unicorn("""
    .globl at
    at:
        .hword 0
    """)
    uc.reg_write(UC_RISCV_REG_MEPC, 0x100)
    uc.reg_write(UC_RISCV_REG_MCAUSE, 9)
    uc.reg_write(UC_RISCV_REG_MTVAL, 0x1234)
    seen: list[tuple[int, ...]] = []

    def intr(uc: Uc, intno: int, _ud: object) -> None:
        seen.append((intno, uc.reg_read(UC_RISCV_REG_MEPC), uc.reg_read(UC_RISCV_REG_MCAUSE),
                     uc.reg_read(UC_RISCV_REG_MTVAL), uc.reg_read(UC_RISCV_REG_PRIV)))
        uc.emu_stop()

    run_catching(uc, {UC_HOOK_INTR: intr})
    assert seen == [(2, 0x100, 9, 0x1234, 3)]


def test_writing_pc_in_the_exception_hook_resumes_there() -> None:
    # docs/unicorn.md#no-trap-entry: redirect() in hooks.c delivers a trap this way.
    uc, sym = bare_unicorn("""
    .globl at
    at:
        .hword 0
        li a0, 1
    .globl vector
    vector:
        li a1, 2
    """)
    run_catching(uc, {UC_HOOK_INTR: lambda uc, n, _: uc.reg_write(UC_RISCV_REG_PC, sym["vector"])})
    assert (uc.reg_read(UC_RISCV_REG_X10), uc.reg_read(UC_RISCV_REG_X11)) == (0, 2)


def test_a_page_fault_leaves_the_faulting_address_in_no_register() -> None:
    # docs/unicorn.md#no-tval: decode.c exception_tval recomputes it. The load is
    # translated through an empty Sv39 table (MPRV with MPP = S), so it page-faults.
    uc, _ = bare_unicorn("""
        li t0, 0x40000008
    .globl at
    at:
        ld t1, 0(t0)
    """)
    uc.reg_write(UC_RISCV_REG_SATP, SV39 | (ROOT >> 12))
    uc.reg_write(UC_RISCV_REG_MSTATUS, MSTATUS_MPRV | MSTATUS_MPP_S)
    uc.reg_write(UC_RISCV_REG_MTVAL, 0x1234)
    uc.reg_write(UC_RISCV_REG_STVAL, 0x1234)
    seen: list[tuple[int, int, int]] = []

    def intr(uc: Uc, intno: int, _ud: object) -> None:
        seen.append((intno, uc.reg_read(UC_RISCV_REG_MTVAL), uc.reg_read(UC_RISCV_REG_STVAL)))
        uc.emu_stop()

    run_catching(uc, {UC_HOOK_INTR: intr})
    assert seen == [(13, 0x1234, 0x1234)]


def test_an_ebreak_hook_that_moves_pc_still_ends_the_run_with_uc_err_exception() -> None:
    # docs/unicorn.md#ebreak-is-an-invalid-instruction: on_invalid delivers the
    # breakpoint trap and returns true; machine.py's run loop restarts at the vector.
    uc, sym = bare_unicorn("""
    .globl at
    at:
        ebreak
    .globl vector
    vector:
        li a0, 1
    """)

    def take_trap(uc: Uc, _ud: object) -> bool:
        uc.reg_write(UC_RISCV_REG_PC, sym["vector"])
        return True

    assert run_catching(uc, {UC_HOOK_INSN_INVALID: take_trap}) == UC_ERR_EXCEPTION
    assert uc.reg_read(UC_RISCV_REG_PC) == sym["vector"]
    assert uc.reg_read(UC_RISCV_REG_X10) == 0


@pytest.mark.parametrize(("access", "error", "kind"), [
    ("lw t1, 0(t0)", UC_ERR_READ_UNMAPPED, UC_MEM_READ_UNMAPPED),
    ("sw t1, 0(t0)", UC_ERR_WRITE_UNMAPPED, UC_MEM_WRITE_UNMAPPED),
    ("jr t0", UC_ERR_FETCH_UNMAPPED, UC_MEM_FETCH_UNMAPPED),
])
def test_the_unmapped_hook_sees_the_access_kind_and_address(access: str, error: int,
                                                            kind: int) -> None:
    # docs/unicorn.md#unmapped-memory-is-a-host-error: hooks.c on_unmapped notes both;
    # hart_access_fault picks the cause from the kind.
    uc, _ = bare_unicorn(f"""
        li t0, 0x40000000
        {access}
    """)
    seen: list[tuple[int, int]] = []

    def unmapped(uc: Uc, kind: int, addr: int, size: int, value: int, _ud: object) -> bool:
        seen.append((kind, addr))
        return False

    assert run_catching(uc, {UC_HOOK_MEM_UNMAPPED: unmapped}) == error
    assert seen == [(kind, 0x40000000)]


def test_reg_read_of_an_m_csr_below_m_does_not_return_its_value() -> None:
    # docs/unicorn.md#csr-access-needs-m: regs.c csr_raw raises PRIV to M around it.
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    uc.reg_write(UC_RISCV_REG_MSCRATCH, 0x77)
    uc.reg_write(UC_RISCV_REG_PRIV, 1)
    assert uc.reg_read(UC_RISCV_REG_MSCRATCH) != 0x77
    uc.reg_write(UC_RISCV_REG_PRIV, 3)
    assert uc.reg_read(UC_RISCV_REG_MSCRATCH) == 0x77


def test_reg_write_of_an_m_csr_below_m_is_dropped() -> None:
    # docs/unicorn.md#csr-access-needs-m: regs.c set_csr_raw raises PRIV to M around it.
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    uc.reg_write(UC_RISCV_REG_MSCRATCH, 0x77)
    uc.reg_write(UC_RISCV_REG_PRIV, 1)
    uc.reg_write(UC_RISCV_REG_MSCRATCH, 0x99)
    uc.reg_write(UC_RISCV_REG_PRIV, 3)
    assert uc.reg_read(UC_RISCV_REG_MSCRATCH) == 0x77


def test_reg_write_of_mip_keeps_no_m_level_bit() -> None:
    # docs/unicorn.md#interrupts-in-unicorns-mip-bypass-the-hooks: MSIP/MTIP/MEIP can
    # only come from the core (interrupt.c mip_value).
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    uc.reg_write(UC_RISCV_REG_MIP, 0xFFF)
    assert uc.reg_read(UC_RISCV_REG_MIP) == 0x666   # SSIP/STIP/SEIP and the VS bits


def test_an_s_interrupt_pending_in_unicorns_mip_is_taken_with_no_hook() -> None:
    # docs/unicorn.md#interrupts-in-unicorns-mip-bypass-the-hooks: so the core keeps
    # Unicorn's mip at 0 and enters every interrupt itself (interrupt.c).
    uc, sym = bare_unicorn("""
    .globl at
    at:
        nop
        nop
    .align 4
    .globl vector
    vector:
        li a0, 1
    1:  j 1b
    """)
    uc.reg_write(UC_RISCV_REG_STVEC, sym["vector"])
    uc.reg_write(UC_RISCV_REG_MIDELEG, SSIP)
    uc.reg_write(UC_RISCV_REG_MIE, SSIP)
    uc.reg_write(UC_RISCV_REG_MSTATUS, MSTATUS_SIE)
    uc.reg_write(UC_RISCV_REG_MIP, SSIP)
    uc.reg_write(UC_RISCV_REG_PRIV, 1)
    seen: list[int] = []
    run_catching(uc, {UC_HOOK_INTR: stop_recording(seen)}, start=sym["at"])
    assert seen == []
    assert uc.reg_read(UC_RISCV_REG_X10) == 1
    uc.reg_write(UC_RISCV_REG_PRIV, 3)
    assert uc.reg_read(UC_RISCV_REG_SCAUSE) == (1 << 63) | 1


def test_rdinstret_in_m_mode_is_not_the_instruction_count() -> None:
    # docs/unicorn.md#counters-are-host-clock: csrops.c emulates every counter read.
    uc, _ = bare_unicorn("""
        rdinstret t0
        li t2, 10000
    1:  addi t2, t2, -1
        bnez t2, 1b
        rdinstret t1
    2:  j 2b
    """)
    uc.emu_start(RAM, RAM + 0x1000, count=20_020)
    retired_between = 2 + 2 * 10_000 + 1      # li (2), the loop, and the read itself
    delta = uc.reg_read(UC_RISCV_REG_X6) - uc.reg_read(UC_RISCV_REG_X5)
    assert abs(delta - retired_between) > 4


def test_writing_priv_drops_an_lr_reservation() -> None:
    # docs/unicorn.md#writing-priv-drops-the-reservation: regs.c set_priv writes PRIV
    # only while a trap or an emulated instruction ends the reservation anyway.
    results = []
    for write_priv in (False, True):
        uc, sym = bare_unicorn("""
            li t0, 0x80001000
            lr.d t1, (t0)
        .globl sc
        sc:
            sc.d t2, t1, (t0)
        """)
        if write_priv:
            uc.hook_add(UC_HOOK_CODE, lambda uc, *_: uc.reg_write(UC_RISCV_REG_PRIV, 3),
                        begin=sym["sc"], end=sym["sc"])
        run_catching(uc, {})
        results.append(uc.reg_read(UC_RISCV_REG_X7))
    assert results == [0, 1]      # sc succeeds (0), then fails (1)


def test_vmem_translate_has_no_binding_and_walks_with_the_current_privilege() -> None:
    # docs/unicorn.md#vmem-translate-through-ctypes: memory.py and fetch.c call it.
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    uc.mem_map(RAM, 1 << 20)
    leaf = ((RAM >> 12) << 10) | 0xCF      # 1 GiB page at VA 0 -> RAM; V R W X A D
    uc.mem_write(ROOT, leaf.to_bytes(8, "little"))
    uc.reg_write(UC_RISCV_REG_SATP, SV39 | (ROOT >> 12))
    translate = uclib.uc_vmem_translate
    translate.restype = ctypes.c_int
    translate.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int,
                          ctypes.POINTER(ctypes.c_uint64)]
    out = ctypes.c_uint64()
    assert not any("translate" in name for name in dir(Uc))
    assert translate(uc._uch, 0x1234, UC_PROT_READ, ctypes.byref(out)) == 0
    assert out.value == 0x1234                # M: bare
    uc.reg_write(UC_RISCV_REG_PRIV, 1)
    assert translate(uc._uch, 0x1234, UC_PROT_READ, ctypes.byref(out)) == 0
    assert out.value == RAM + 0x1234          # S: through satp


@pytest.mark.parametrize(("priv", "insn"), [
    (1, "csrr t0, mscratch"), (1, "mret"), (0, "sret"), (0, "wfi"),
])
def test_an_instruction_above_the_current_privilege_is_illegal(priv: int, insn: str) -> None:
    # docs/unicorn.md#privilege-checks-are-native: csrops.c and xret.c decline such
    # instructions and let Unicorn raise the exception.
    uc, sym = bare_unicorn(f"""
    .globl at
    at:
        {insn}
    """)
    uc.reg_write(UC_RISCV_REG_PRIV, priv)
    seen: list[int] = []
    run_catching(uc, {UC_HOOK_INTR: stop_recording(seen)}, start=sym["at"])
    assert seen == [2]


@pytest.mark.parametrize("insn", ["sh1add a0, a1, a2", "clz a0, a1", "clmul a0, a1, a2",
                                  "bseti a0, a1, 3", "rev8 a0, a1", "add.uw a0, a1, a2"])
def test_bit_manipulation_instructions_are_illegal(insn: str) -> None:
    # docs/unicorn.md#no-bit-manipulation: QEMU 7.2's default CPU has Zba, Zbb, Zbc and
    # Zbs; bitmanip.c does them from on_intr's illegal-instruction path.
    uc, _ = bare_unicorn(f"""
        .option arch, +zba, +zbb, +zbc, +zbs
        {insn}
    """)
    seen: list[int] = []
    run_catching(uc, {UC_HOOK_INTR: stop_recording(seen)})
    assert seen == [2]


def test_a_walk_ignores_the_reserved_bits_of_an_sv39_entry() -> None:
    # docs/unicorn.md#pte-reserved-bits: an entry with bit 63 set still maps its page;
    # QEMU 7.2 page-faults (pmp.c reserved_pte, tests/conformance/vm_reserved_bits.S).
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    uc.mem_map(RAM, 1 << 20)
    leaf = ((RAM >> 12) << 10) | 0xCF | (1 << 63)   # 1 GiB at VA 0 -> RAM, and bit 63
    uc.mem_write(ROOT, leaf.to_bytes(8, "little"))
    uc.reg_write(UC_RISCV_REG_SATP, SV39 | (ROOT >> 12))
    uc.reg_write(UC_RISCV_REG_PRIV, 1)
    translate = uclib.uc_vmem_translate
    translate.restype = ctypes.c_int
    translate.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int,
                          ctypes.POINTER(ctypes.c_uint64)]
    out = ctypes.c_uint64()
    assert translate(uc._uch, 0x1234, UC_PROT_READ, ctypes.byref(out)) == 0
    assert out.value == RAM + 0x1234


@pytest.mark.parametrize("csr", [0x30A, 0x10A, 0x320, 0xF15, 0x7A0, 0x7A1, 0x7A2, 0x7A4])
def test_csrs_newer_than_priv_1_10_are_illegal(csr: int) -> None:
    # docs/unicorn.md#csrs-newer-than-priv-1-10: menvcfg, senvcfg, mcountinhibit and
    # mconfigptr, which csrops.c emulates from on_intr's illegal-instruction path.
    uc, _ = bare_unicorn(f"csrr t0, {csr:#x}")
    seen: list[int] = []
    run_catching(uc, {UC_HOOK_INTR: stop_recording(seen)})
    assert seen == [2]


def test_unicorn_drops_mstatus_vs() -> None:
    # docs/unicorn.md#mstatus-vs-is-dropped: the core keeps VS in mstatus_extra.
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64)
    uc.reg_write(UC_RISCV_REG_MSTATUS, MSTATUS_VS | MSTATUS_FS)
    assert uc.reg_read(UC_RISCV_REG_MSTATUS) & (MSTATUS_VS | MSTATUS_FS) == MSTATUS_FS


def test_a_new_engine_starts_in_m_mode() -> None:
    # docs/unicorn.md#priv-register: hart_new assumes it (h->priv = PRV_M).
    assert Uc(UC_ARCH_RISCV, UC_MODE_RISCV64).reg_read(UC_RISCV_REG_PRIV) == 3


def test_register_calls_read_and_write_xlen_bytes() -> None:
    # docs/unicorn.md#register-width-is-xlen: regs.c passes a zeroed uint64_t.
    uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV32)
    uc.reg_write(UC_RISCV_REG_X10, 0x12345678)
    buf = ctypes.c_uint64(0xFFFFFFFF_FFFFFFFF)
    assert uclib.uc_reg_read(uc._uch, UC_RISCV_REG_X10, ctypes.byref(buf)) == 0
    assert buf.value == 0xFFFFFFFF_12345678


def test_a_code_hook_on_one_address_runs_first_and_a_pc_write_skips_the_instruction() -> None:
    # docs/unicorn.md#exact-address-code-hooks: on_code emulates CSR, xRET and wfi.
    uc, sym = bare_unicorn("""
        li t0, 5
    .globl at
    at:
        csrw mscratch, t0
    .globl after
    after:
        li a0, 1
    """)
    uc.hook_add(UC_HOOK_CODE, lambda uc, *_: uc.reg_write(UC_RISCV_REG_PC, sym["after"]),
                begin=sym["at"], end=sym["at"])
    run_catching(uc, {})
    assert (uc.reg_read(UC_RISCV_REG_MSCRATCH), uc.reg_read(UC_RISCV_REG_X10)) == (0, 1)


def test_a_code_hook_added_after_translation_runs_only_once_the_block_is_retranslated() -> None:
    # docs/unicorn.md#hooks-need-retranslation: on_block calls uc_ctl_remove_cache
    # when icount.c planted new hooks.
    uc, sym = bare_unicorn("""
    .globl block
    block:
        addi a0, a0, 1
    .globl mid
    mid:
        addi a1, a1, 1
        j block
    """)
    uc.emu_start(sym["block"], RAM + 0x1000, count=3)
    calls: list[int] = []
    uc.hook_add(UC_HOOK_CODE, lambda uc, addr, *_: calls.append(addr),
                begin=sym["mid"], end=sym["mid"])
    uc.emu_start(sym["block"], RAM + 0x1000, count=3)
    assert calls == []
    uc.ctl_remove_cache(sym["block"], sym["block"] + 12)
    uc.emu_start(sym["block"], RAM + 0x1000, count=3)
    assert calls == [sym["mid"]]


def instructions_a_step_runs_after_a_run(flush: bool) -> int:
    """Run a loop uncounted for three blocks, then start a one-instruction run at the
    loop's head (after flushing Unicorn's translations, or not); how many ran."""
    uc, sym = bare_unicorn("""
    .globl loop
    loop:
        addi a0, a0, 1
        addi a1, a1, 1
        j loop
    """)
    blocks = [0, 3]                  # stop after 3 blocks; later, a safety net

    def on_block(uc: Uc, _addr: int, _size: int, _ud: object) -> None:
        blocks[0] += 1
        if blocks[0] >= blocks[1]:
            uc.emu_stop()

    uc.hook_add(UC_HOOK_BLOCK, on_block)
    uc.emu_start(RAM, RAM + 0x1000)
    blocks[1] = blocks[0] + 5
    assert uc.reg_read(UC_RISCV_REG_PC) == sym["loop"]
    before = uc.reg_read(UC_RISCV_REG_X10)
    if flush:
        uc.ctl_flush_tb()
    uc.emu_start(sym["loop"], RAM + 0x1000, 0, 1)
    return int(uc.reg_read(UC_RISCV_REG_X10) - before)


def test_a_one_instruction_run_overruns_blocks_translated_by_an_uncounted_run() -> None:
    # docs/unicorn.md#counted-runs-need-fresh-translations: Machine.step flushes
    # Unicorn's translations after a run.
    assert instructions_a_step_runs_after_a_run(flush=False) > 1
    assert instructions_a_step_runs_after_a_run(flush=True) == 1


def test_mmio_callbacks_get_the_offset_size_and_value() -> None:
    # docs/unicorn.md#mmio-callbacks: Machine._map routes them to the devices.
    uc, _ = bare_unicorn("""
        li t0, 0x10000000
        li t1, 0xab
        sb t1, 3(t0)
        lw t2, 4(t0)
    """)
    log: list[tuple[object, ...]] = []

    def read(uc: Uc, offset: int, size: int, _ud: object) -> int:
        log.append(("r", offset, size))
        return 0x55

    def write(uc: Uc, offset: int, size: int, value: int, _ud: object) -> None:
        log.append(("w", offset, size, value))

    uc.mmio_map(0x10000000, 0x1000, read, None, write, None)
    run_catching(uc, {})
    assert log == [("w", 3, 1, 0xAB), ("r", 4, 4)]
    assert uc.reg_read(UC_RISCV_REG_X7) == 0x55


def seconds_storing(hook_range: tuple[int, int]) -> float:
    """Best of three timings of 400,000 stores in S-mode to a page mapped read-write (not
    executable) through Sv39, with an unmapped-memory hook over `hook_range`."""
    uc, sym = bare_unicorn("""
    .globl store_loop
    store_loop:
        li t1, 0xC0000000
    1:  sd zero, 0(t1)
        sd zero, 8(t1)
        addi t0, t0, -1
        bnez t0, 1b
    .globl store_done
    store_done:
        nop
    """)
    data = 0xC000_0000
    uc.mem_map(data, 1 << 20)
    code_leaf = ((RAM >> 12) << 10) | 0x4B     # 1 GiB at VA = PA = RAM: V R X A
    data_leaf = ((data >> 12) << 10) | 0xC7    # 1 GiB at VA = PA = data: V R W A D
    uc.mem_write(ROOT + 8 * (RAM >> 30), code_leaf.to_bytes(8, "little"))
    uc.mem_write(ROOT + 8 * (data >> 30), data_leaf.to_bytes(8, "little"))
    uc.reg_write(UC_RISCV_REG_SATP, SV39 | (ROOT >> 12))
    uc.reg_write(UC_RISCV_REG_PRIV, 1)
    uc.hook_add(UC_HOOK_MEM_UNMAPPED, lambda *_: False, None, *hook_range)
    best = float("inf")
    for _ in range(3):
        uc.reg_write(UC_RISCV_REG_X5, 200_000)
        start = time.perf_counter()
        uc.emu_start(sym["store_loop"], sym["store_done"])
        best = min(best, time.perf_counter() - start)
    return best


def test_a_memory_hook_whose_range_covers_ram_keeps_every_store_there_slow() -> None:
    # docs/unicorn.md#a-memory-hook-over-ram-slows-every-store: hart_set_ram bounds the
    # core's unmapped-memory hook to the addresses outside RAM. The gap measured here is
    # about 15x; the test asks for 3x so that a loaded machine does not make it flaky.
    outside = seconds_storing((0, RAM - 1))
    over = seconds_storing((0, (1 << 64) - 1))
    assert over > 3 * outside, (over, outside)


@pytest.mark.parametrize("guarded", [False, True])
def test_a_store_through_a_dirty_alias_leaves_the_old_translation_running(
        guarded: bool) -> None:
    # docs/unicorn.md#a-dirty-alias-hides-rewritten-code: guard.c covers every page
    # code has run on with a memory hook. `func` returns 1; the caller rewrites its first
    # instruction to return 2 through a second, read-write, mapping of the same physical
    # page whose TLB entry a store made dirty before func was translated.
    uc, sym = bare_unicorn("""
    .globl caller
    caller:
        li t1, 0xC0000000
        la t0, func
        li t3, 0x80000000
        sub t0, t0, t3
        add t1, t1, t0              // func's physical page, through the data mapping
        sw zero, 64(t1)             // that mapping's TLB entry: dirty
        call func                   // func translated: a0 = 1
        mv a1, a0
        li t2, 0x4509               // c.li a0, 2 (func's first instruction is c.li a0, 1)
        sh t2, 0(t1)                // rewrite func through the dirty alias
        call func
    .globl caller_done
    caller_done:
        nop
        .balign 4096
    .globl func
    func:
        li a0, 1
        ret
    """)
    alias = ((RAM >> 12) << 10) | 0xC7                 # 1 GiB at VA 0xC0000000 -> RAM: RW
    code = ((RAM >> 12) << 10) | 0x4B                  # 1 GiB at VA = PA = RAM: RX
    uc.mem_write(ROOT + 8 * (RAM >> 30), code.to_bytes(8, "little"))
    uc.mem_write(ROOT + 8 * 3, alias.to_bytes(8, "little"))
    uc.reg_write(UC_RISCV_REG_SATP, SV39 | (ROOT >> 12))
    uc.reg_write(UC_RISCV_REG_PRIV, 1)
    if guarded:
        page = sym["func"] & ~0xFFF
        uc.hook_add(UC_HOOK_MEM_FETCH_UNMAPPED, lambda *_: False, None, page, page + 0xFFF)
    uc.emu_start(sym["caller"], sym["caller_done"])
    first, second = uc.reg_read(UC_RISCV_REG_X11), uc.reg_read(UC_RISCV_REG_X10)
    assert uc.mem_read(sym["func"], 2) == (0x4509).to_bytes(2, "little")
    assert (first, second) == ((1, 2) if guarded else (1, 1))


# The facts below concern Unicorn's own PMP, which the native core replaces in the
# process that loads it (harness/native/pmp.c patches libunicorn's PLT). They are
# reproduced in a fresh interpreter that never loads the core.
PMP_PROBE = r"""
import sys
from unicorn import Uc, UcError
from unicorn.riscv_const import UC_RISCV_REG_PC, UC_RISCV_REG_PRIV
from unicorn.unicorn_const import UC_ARCH_RISCV, UC_HOOK_INTR, UC_MODE_RISCV32, UC_MODE_RISCV64
from privlab.machine import load_elf
from machine.asm import build_asm

arch, body, start_sym, priv = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
image = load_elf(build_asm(body, arch))
uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV64 if arch == "rv64" else UC_MODE_RISCV32)
ram = min(s.paddr for s in image.segments) & ~0xfffff
uc.mem_map(ram, 1 << 20)
for seg in image.segments:
    uc.mem_write(seg.paddr, seg.data)
seen = []
def intr(uc, intno, _ud):
    seen.append((intno, uc.reg_read(UC_RISCV_REG_PC)))
    uc.emu_stop()
uc.hook_add(UC_HOOK_INTR, intr)
try:
    uc.emu_start(ram, ram + 0x1000, count=200)
except UcError:
    pass
print(seen, image.symbols[start_sym])
"""


def unicorn_pmp_probe(arch: str, body: str, sym: str) -> tuple[list[tuple[int, int]], int]:
    """Run `body` on a bare Unicorn in a fresh interpreter: the exceptions it reported
    (code, PC in the hook) and the address of symbol `sym`."""
    import ast
    import subprocess
    import sys

    from machine.child_env import child_env
    out = subprocess.run([sys.executable, "-c", PMP_PROBE, arch, body, sym, "0"],
                         capture_output=True, text=True, env=child_env(), check=True).stdout
    seen, addr = out.rsplit(" ", 1)
    return ast.literal_eval(seen), int(addr)


def test_unicorns_rv32_napot_of_the_whole_34_bit_space_covers_4_bytes() -> None:
    # docs/unicorn.md#pmp-is-qemu-5: pmpaddr0 = 0x7fffffff (NAPOT, RWX) should cover
    # all of the 34-bit space; Unicorn's 32-bit arithmetic makes it [0, 3], so U's
    # first fetch (at `user`) is an instruction access fault (code 1).
    seen, _user = unicorn_pmp_probe("rv32", """
        li t0, 0x7fffffff
        csrw pmpaddr0, t0
        li t0, 0x1f
        csrw pmpcfg0, t0
        la t0, user
        csrw mepc, t0
        li t0, 0x1800
        csrc mstatus, t0
        mret
    .globl user
    user:
        addi a0, a0, 1
        ecall
    """, "user")
    assert [code for code, _pc in seen] == [1]


def test_unicorn_caches_a_pages_pmp_permissions_from_the_first_access() -> None:
    # docs/unicorn.md#pmp-permissions-cached-per-page: entry 0 over everything, R only;
    # M with MPRV = 1, MPP = S loads a word and then stores to it. The store should be
    # a store access fault (code 7); Unicorn filled the TLB entry with the page
    # table's RWX at the load and lets the store through: the ecall after it (code 8)
    # is the first exception.
    seen, _ = unicorn_pmp_probe("rv64", """
        li t0, -1
        csrw pmpaddr0, t0
        li t0, 0x19
        csrw pmpcfg0, t0
        li t0, 0x1800
        csrc mstatus, t0
        li t0, 0x20800
        csrs mstatus, t0
        la a0, word
        lw t1, 0(a0)
        sw t1, 0(a0)
        ecall
        .data
    .globl word
    word:
        .word 0
    """, "word")
    assert [code for code, _pc in seen] == [8]
