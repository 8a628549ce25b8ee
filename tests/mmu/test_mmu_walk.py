"""The page-table walker on hand-built tables: every fault it can report, superpages,
Sv32, and the WalkView rendering (golden text at width 100)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest
from fakes import FakeMemory, pte
from rich.console import RenderableType

from privlab.abi.csr import Csr, Exc, Priv, csr_fields
from privlab.inspect import WalkView
from privlab.mmu import Access, FaultKind, TranslationContext, context_from_status, walk

ROOT, L1, L0 = 0x8000_1000, 0x8000_2000, 0x8000_3000
SATP = (8 << 60) | (ROOT >> 12)
U, S = TranslationContext(Priv.U), TranslationContext(Priv.S)


@pytest.fixture
def mem() -> FakeMemory:
    m = FakeMemory()
    m.pte(ROOT, 0, pte(L1, "v"))
    m.pte(L1, 0, pte(L0, "v"))
    m.pte(L0, 16, pte(0x8001_0000, "vrxuad"))     # user text
    m.pte(L0, 17, pte(0x8001_1000, "vrwuad"))     # user data
    m.pte(L0, 18, pte(0x8001_2000, "vrwad"))      # kernel page
    m.pte(L0, 19, pte(0x8001_3000, "vwuad"))      # W without R: reserved
    m.pte(L0, 21, pte(0x8001_5000, "vru"))        # A and D clear
    m.pte(L0, 22, pte(0x8001_6000, "v"))          # non-leaf at level 0
    m.pte(L0, 23, pte(0x8001_7000, "vxuad"))      # execute-only
    m.pte(ROOT, 2, pte(0x8000_0000, "vrwxad"))    # 1 GiB identity superpage
    m.pte(ROOT, 3, pte(0x8020_0000, "vrad"))      # misaligned superpage
    m.pte(ROOT, 4, pte(L1, "vu"))                 # U in a non-leaf: reserved
    m.pte(ROOT, 5, pte(0x8000_0000, "vrad") | 1 << 54)   # a reserved bit
    m.pte(L1, 1, pte(0x1000, "v"))                # next table outside RAM
    return m


def test_user_load_walks_three_levels_to_the_frame_plus_offset(mem: FakeMemory) -> None:
    w = walk(mem, SATP, 0x10123, Access.READ, U)
    assert w.ok and w.pa == 0x8001_0123
    assert [(s.level, s.index, s.pte_addr) for s in w.steps] == [
        (2, 0, ROOT), (1, 0, L1), (0, 16, L0 + 16 * 8)]


@pytest.mark.parametrize(("va", "access", "ctx", "kind", "cause"), [
    (0x12000, Access.READ, U, FaultKind.NOT_USER, Exc.LOAD_PAGE_FAULT),
    (0x11000, Access.READ, S, FaultKind.USER_PAGE_FROM_S, Exc.LOAD_PAGE_FAULT),
    (0x10000, Access.EXECUTE, TranslationContext(Priv.S, sum=True),
     FaultKind.EXEC_USER_PAGE_FROM_S, Exc.EXEC_PAGE_FAULT),
    (0x10000, Access.WRITE, U, FaultKind.NOT_WRITABLE, Exc.STORE_PAGE_FAULT),
    (0x11000, Access.EXECUTE, U, FaultKind.NOT_EXECUTABLE, Exc.EXEC_PAGE_FAULT),
    (0x17000, Access.READ, U, FaultKind.NOT_READABLE, Exc.LOAD_PAGE_FAULT),
    (0x13000, Access.READ, U, FaultKind.WRITE_WITHOUT_READ, Exc.LOAD_PAGE_FAULT),
    (0x14000, Access.READ, U, FaultKind.INVALID, Exc.LOAD_PAGE_FAULT),
    (0x16000, Access.READ, U, FaultKind.NO_LEAF, Exc.LOAD_PAGE_FAULT),
    (0xC000_0000, Access.READ, S, FaultKind.MISALIGNED_SUPERPAGE, Exc.LOAD_PAGE_FAULT),
    (0x1_0000_0000, Access.READ, S, FaultKind.NONLEAF_RESERVED, Exc.LOAD_PAGE_FAULT),
    (0x1_4000_0000, Access.WRITE, S, FaultKind.RESERVED_BITS, Exc.STORE_PAGE_FAULT),
    (0x20_0000, Access.EXECUTE, S, FaultKind.PTE_NOT_RAM, Exc.FAULT_FETCH),
    (0x80_0000_0000, Access.READ, S, FaultKind.NOT_CANONICAL, Exc.LOAD_PAGE_FAULT),
])
def test_each_fault_is_reported_as_a_value_with_its_cause(
        mem: FakeMemory, va: int, access: Access, ctx: TranslationContext, kind: FaultKind,
        cause: Exc) -> None:
    w = walk(mem, SATP, va, access, ctx)
    assert w.pa is None and w.fault is not None
    assert (w.fault.kind, w.fault.cause) == (kind, cause)


def test_sum_lets_s_mode_load_from_a_user_page(mem: FakeMemory) -> None:
    assert walk(mem, SATP, 0x11008, Access.READ, TranslationContext(Priv.S, sum=True)).pa \
        == 0x8001_1008


def test_mxr_makes_an_execute_only_page_readable(mem: FakeMemory) -> None:
    assert walk(mem, SATP, 0x17004, Access.READ, TranslationContext(Priv.U, mxr=True)).pa \
        == 0x8001_7004


def test_gigapage_takes_low_bits_from_the_virtual_address(mem: FakeMemory) -> None:
    w = walk(mem, SATP, 0x8012_3456, Access.EXECUTE, S)
    assert w.pa == 0x8012_3456 and len(w.steps) == 1 and w.page_size == 1 << 30


def test_clear_accessed_bit_is_set_by_hardware_not_a_fault(mem: FakeMemory) -> None:
    w = walk(mem, SATP, 0x15000, Access.READ, U)
    assert w.pa == 0x8001_5000 and w.notes == ("the hardware sets A in this PTE",)


def test_bare_satp_and_m_mode_do_not_translate(mem: FakeMemory) -> None:
    assert walk(mem, 0, 0x1234, Access.READ, S).pa == 0x1234
    assert walk(mem, SATP, 0x1234, Access.READ, TranslationContext(Priv.M)).steps == ()


def test_mprv_makes_m_mode_loads_use_mpp_but_not_fetches() -> None:
    f = {x.name: x for x in csr_fields(Csr.MSTATUS, 64)}
    mstatus = f["MPRV"].insert(0, 1, 64) | f["SUM"].insert(0, 1, 64)
    assert context_from_status(Priv.M, mstatus, Access.READ, 64) == \
        TranslationContext(Priv.U, sum=True)
    assert context_from_status(Priv.M, mstatus, Access.EXECUTE, 64).priv == Priv.M


def test_sv32_two_levels_and_a_4_mib_megapage() -> None:
    m = FakeMemory()
    root, l0 = 0x8000_4000, 0x8000_5000
    m.pte(root, 0, pte(l0, "v"), 4)
    m.pte(l0, 16, pte(0x8002_0000, "vrwuad"), 4)
    m.pte(root, 0x200, pte(0x8000_0000, "vrxad"), 4)
    satp = (1 << 31) | (root >> 12)
    w = walk(m, satp, 0x10ABC, Access.WRITE, U, xlen=32)
    assert w.pa == 0x8002_0ABC and [s.pte_addr for s in w.steps] == [root, l0 + 16 * 4]
    assert walk(m, satp, 0x8033_3333, Access.EXECUTE, S, xlen=32).pa == 0x8033_3333


def test_walk_view_of_a_translation(mem: FakeMemory,
                                    render: Callable[[RenderableType], str]) -> None:
    assert [x.rstrip() for x in render(WalkView(walk(mem, SATP, 0x10123, Access.READ, U)))
            .splitlines()] == [
        "translate 0x10123  load from U-mode  SUM=0 MXR=0",
        "satp 0x8000000000080001  Sv39  ASID 0  root table 0x80001000",
        "VPN[2]=0  VPN[1]=0  VPN[0]=16  offset=0x123",
        " level  index      PTE address  PTE         rwxugad  meaning",
        " 2      VPN[2]=0   0x80001000   0x20000801  -------  next table at 0x80002000",
        " 1      VPN[1]=0   0x80002000   0x20000c01  -------  next table at 0x80003000",
        " 0      VPN[0]=16  0x80003080   0x200040db  r-xu-ad  leaf: 4 KiB page at 0x80010000",
        "✓ pa 0x80010123",
    ]


def test_walk_view_names_the_check_that_faulted(
        mem: FakeMemory, render: Callable[[RenderableType], str]) -> None:
    assert [x.rstrip() for x in render(WalkView(walk(mem, SATP, 0x12008, Access.WRITE, U)))
            .splitlines()] == [
        "translate 0x12008  store from U-mode  SUM=0 MXR=0",
        "satp 0x8000000000080001  Sv39  ASID 0  root table 0x80001000",
        "VPN[2]=0  VPN[1]=0  VPN[0]=18  offset=0x8",
        " level  index      PTE address  PTE         rwxugad  meaning",
        " 2      VPN[2]=0   0x80001000   0x20000801  -------  next table at 0x80002000",
        " 1      VPN[1]=0   0x80002000   0x20000c01  -------  next table at 0x80003000",
        " 0      VPN[0]=18  0x80003090   0x200048c7  rw---ad  U-mode access to a page without U",
        "✗ store_page_fault (cause 15): level 0: U-mode access to a page without U",
    ]


def test_walk_view_colours_the_offending_flag(
        mem: FakeMemory, render_ansi: Callable[[RenderableType], str]) -> None:
    out = render_ansi(WalkView(walk(mem, SATP, 0x12008, Access.WRITE, U)))
    # rw---ad: the '-' in the U column carries the fault style (bold #c0392b)
    assert "\x1b[1;38;2;192;57;43m-\x1b[0m" in out


@pytest.mark.parametrize(("mode", "levels", "va", "bad"), [
    (9, 4, 0x0000_7fff_fff0_0123, 0x00ff_0000_0000_0000),    # Sv48: bit 47 sign-extends
    (9, 4, 0xffff_8000_0000_0123, 0x0000_8000_0000_0000),
    (10, 5, 0x00ff_0000_0000_0123, 0x0100_0000_0000_0000),   # Sv57: bit 56 does
])
def test_sv48_and_sv57_walk_one_and_two_levels_more(mode: int, levels: int, va: int,
                                                    bad: int) -> None:
    """The schemes the hart walks as QEMU 7.2 does beside Sv39 (vm_deeper.S): the walk
    reads `levels` entries to a 4 KiB page; an address not sign-extended from the
    scheme's top bit is refused before any table is read."""
    m = FakeMemory()
    tables = [0x8000_1000 + 0x1000 * k for k in range(levels)]
    for level, (table, below) in enumerate(itertools.pairwise(tables)):
        m.pte(table, (va >> (12 + 9 * (levels - 1 - level))) & 511, pte(below, "v"))
    m.pte(tables[-1], (va >> 12) & 511, pte(0x8002_0000, "vrwad"))
    satp = (mode << 60) | (tables[0] >> 12)
    w = walk(m, satp, va, Access.READ, S)
    assert w.ok and w.pa == 0x8002_0000 | (va & 0xfff)
    assert [s.level for s in w.steps] == list(range(levels - 1, -1, -1))
    refused = walk(m, satp, bad, Access.READ, S)
    assert refused.fault is not None and refused.fault.kind is FaultKind.NOT_CANONICAL
    assert (refused.fault.cause, refused.steps) == (Exc.LOAD_PAGE_FAULT, ())
