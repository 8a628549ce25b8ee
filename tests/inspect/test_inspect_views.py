"""Golden renderings (width 100, plain text) of every inspector view built from fixed
data, as rich's own tests do, plus the styles that carry meaning."""

from __future__ import annotations

import struct
from collections.abc import Callable

from fakes import FakeMemory, pte
from rich.console import RenderableType

from privlab.abi.csr import Csr, Priv
from privlab.inspect import (
    CsrPanel,
    CsrSnapshot,
    Disassembly,
    Instruction,
    PageTableTree,
    ProcessTableView,
    RegisterSnapshot,
    RegisterView,
    RoundTripView,
    TrapFrameView,
)
from privlab.kernelinfo import (
    ArrayType,
    BaseType,
    EnumType,
    Location,
    Member,
    PointerType,
    Process,
    ProcessTable,
    StructType,
    StructValue,
    decode_value,
)
from privlab.mmu import read_page_table

Render = Callable[[RenderableType], str]


def lines(text: str) -> list[str]:
    return [x.rstrip() for x in text.splitlines()]


_SYMS = {0x3FFFFFF000: ("uservec", "kernel/trampoline.S", 25), 0x10E5A: ("write", "usys.S", 18)}


def symbolize(addr: int) -> Location:
    for base, (name, file, line) in _SYMS.items():
        if base <= addr < base + 8:
            return Location(addr, "test", name, addr - base, file, line)
    return Location(addr)


def _csrs(priv: Priv, pc: int, sstatus: int, sepc: int, scause: int) -> CsrSnapshot:
    return CsrSnapshot(64, priv, pc, (
        (Csr.SSTATUS, sstatus), (Csr.STVEC, 0x3FFFFFF000), (Csr.SEPC, sepc),
        (Csr.SCAUSE, scause), (Csr.STVAL, 0), (Csr.SATP, 0x8000000000087F36),
        (Csr.MEDELEG, 0xB1FF), (Csr.MCAUSE, 0x8000000000000007)))


BEFORE = _csrs(Priv.U, 0x10E5A, 0x200000022, 0x10000, 0)
AFTER = _csrs(Priv.S, 0x3FFFFFF000, 0x200000020, 0x10E5A, 8)


def test_csr_panel_marks_what_the_ecall_changed(render: Render) -> None:
    assert lines(render(CsrPanel(AFTER, BEFORE, symbolize, title="At the ecall"))) == [
        "At the ecall  S-mode (was U-mode)  pc 0x3ffffff000 uservec kernel/trampoline.S:25   "
        "3 changed (*)",
        "Supervisor",
        " sstatus*   0x0000000200000020  SIE=1→0  SPIE=1  UBE=0  SPP=U  VS=Off  FS=Off  XS=Off  "
        "SUM=0  MXR=0",
        "                                UXL=64  SD=0",
        " stvec      0x0000003ffffff000  BASE=0x3ffffff000 MODE=direct uservec "
        "kernel/trampoline.S:25",
        " sepc*      0x0000000000010e5a  write usys.S:18  (was 0x10000)",
        " scause*    0x0000000000000008  user_ecall  (exception 8)  (was 0x0)",
        " stval      0x0000000000000000  0",
        " satp       0x8000000000087f36  MODE=Sv39  ASID=0  PPN=0x87f36  root table at 0x87f36000",
        "Machine",
        " medeleg    0x000000000000b1ff  delegated to S: misaligned_fetch, fault_fetch, "
        "illegal_instruction,",
        "                                breakpoint, misaligned_load, fault_load, "
        "misaligned_store,",
        "                                fault_store, user_ecall, exec_page_fault, "
        "load_page_fault,",
        "                                store_page_fault",
        " mcause     0x8000000000000007  m_timer  (interrupt 7)",
    ]


def test_csr_panel_highlights_changed_fields_only(render_ansi: Render) -> None:
    out = render_ansi(CsrPanel(AFTER, BEFORE, symbolize))
    changed = "\x1b[1;30;48;2;244;162;97m"      # bold black on the "changed" colour
    assert f"{changed}SIE=1→0\x1b[0m" in out
    assert f"{changed}SPIE" not in out and f"{changed}stvec" not in out


def test_csr_panel_counts_only_the_changes_it_shows(render: Render) -> None:
    """A machine CSR that changed is not counted when the machine rows are hidden."""
    after = CsrSnapshot(64, Priv.S, AFTER.pc, tuple(
        (c, 0x8000000000000001 if c == Csr.MCAUSE else v) for c, v in AFTER.values))
    full = render(CsrPanel(after, BEFORE, symbolize))
    supervisor = render(CsrPanel(after, BEFORE, symbolize, machine=False))
    assert "4 changed (*)" in full and full.count("* ") == 4
    assert "3 changed (*)" in supervisor and supervisor.count("* ") == 3


def test_csr_panel_without_a_previous_point_marks_nothing(render: Render) -> None:
    assert "*" not in render(CsrPanel(AFTER, None, symbolize, machine=False))


_FIRMWARE = {0x80000228: ("mtrap_vector", "kernel/firmware/mtrap.S", 16),
             0x80205E28: ("sbi_console_write", "kernel/sbi.c", 58)}


def symbolize_firmware(addr: int) -> Location:
    for base, (name, file, line) in _FIRMWARE.items():
        if base <= addr < base + 0x40:
            return Location(addr, "test", name, addr - base, file, line)
    return Location(addr)


def _sbi_call(xlen: int, priv: Priv, pc: int, mstatus: int, mepc: int) -> CsrSnapshot:
    """The hart at the kernel's DBCN ecall (S) or just after it, at mtvec (M)."""
    return CsrSnapshot(xlen, priv, pc, (
        (Csr.SEPC, 0x1128C), (Csr.SCAUSE, 8), (Csr.MSTATUS, mstatus), (Csr.MTVEC, 0x80000228),
        (Csr.MEPC, mepc), (Csr.MCAUSE, 9), (Csr.MTVAL, 0)))


def test_csr_panel_at_an_m_mode_trap_shows_the_machine_csrs_first(render: Render) -> None:
    before = _sbi_call(64, Priv.S, 0x80205E42, 0xA00000080, 0x80205E70)
    after = _sbi_call(64, Priv.M, 0x80000228, 0xA00000800, 0x80205E42)
    assert lines(render(CsrPanel(after, before, symbolize_firmware))) == [
        "M-mode (was S-mode)  pc 0x80000228 mtrap_vector kernel/firmware/mtrap.S:16   "
        "2 changed (*)",
        "Machine",
        " mstatus*   0x0000000a00000800  SIE=0  MIE=0  SPIE=0  UBE=0  MPIE=1→0  SPP=U  VS=Off  "
        "MPP=U→S",
        "                                FS=Off  XS=Off  MPRV=0  SUM=0  MXR=0  TVM=0  TW=0  TSR=0  "
        "UXL=64",
        "                                SXL=64  SBE=0  MBE=0  SD=0",
        " mtvec      0x0000000080000228  BASE=0x80000228 MODE=direct mtrap_vector "
        "kernel/firmware/mtrap.S:16",
        " mepc*      0x0000000080205e42  sbi_console_write+0x1a kernel/sbi.c:58  (was 0x80205e70)",
        " mcause     0x0000000000000009  supervisor_ecall  (exception 9)",
        " mtval      0x0000000000000000  0",
        "Supervisor",
        " sepc       0x000000000001128c",
        " scause     0x0000000000000008  user_ecall  (exception 8)",
    ]


def test_csr_panel_on_rv32_decodes_mstatus_without_the_rv64_fields(render: Render) -> None:
    before = _sbi_call(32, Priv.S, 0x80205E42, 0x80, 0x80205E70)
    after = _sbi_call(32, Priv.M, 0x80000228, 0x800, 0x80205E42)
    out = lines(render(CsrPanel(after, before, symbolize_firmware, supervisor=False,
                                only=(Csr.MSTATUS, Csr.MEPC))))
    assert out == [
        "M-mode (was S-mode)  pc 0x80000228 mtrap_vector kernel/firmware/mtrap.S:16   "
        "2 changed (*)",
        "Machine",
        " mstatus*   0x00000800  SIE=0  MIE=0  SPIE=0  UBE=0  MPIE=1→0  SPP=U  VS=Off  MPP=U→S  "
        "FS=Off",
        "                        XS=Off  MPRV=0  SUM=0  MXR=0  TVM=0  TW=0  TSR=0  SD=0",
        " mepc*      0x80205e42  sbi_console_write+0x1a kernel/sbi.c:58  (was 0x80205e70)",
    ]


def test_csr_panel_in_s_mode_keeps_the_supervisor_csrs_first(render: Render) -> None:
    back = _sbi_call(64, Priv.S, 0x80205E46, 0xA00000080, 0x80205E46)
    out = lines(render(CsrPanel(back, None, symbolize_firmware)))
    assert out.index("Supervisor") < out.index("Machine")


def test_page_table_tree_folds_runs_and_fully_mapped_tables(render: Render) -> None:
    m = FakeMemory()
    root, l1, l0, l1b = 0x8000_1000, 0x8000_2000, 0x8000_3000, 0x8000_4000
    m.pte(root, 0, pte(l1, "v"))
    m.pte(l1, 0, pte(l0, "v"))
    for i in range(16, 19):                                     # contiguous frames
        m.pte(l0, i, pte(0x8001_0000 + (i - 16) * 0x1000, "vrxuad"))
    m.pte(l0, 19, pte(0x8002_0000, "vrwuad"))                   # scattered frames
    m.pte(l0, 20, pte(0x8001_8000, "vrwuad"))
    m.pte(l0, 22, pte(0x8003_0000, "vrwuad"))                   # after a hole
    m.pte(root, 2, pte(l1b, "v"))
    for j in range(4):                                          # four full identity tables
        t = 0x8010_0000 + j * 0x1000
        m.pte(l1b, j, pte(t, "v"))
        for k in range(512):
            m.pte(t, k, pte(0x8000_0000 + j * 0x20_0000 + k * 0x1000, "vrwad"))
    m.pte(l1b, 4, pte(0x8080_0000, "vrwxad"))                   # a 2 MiB megapage
    m.pte(root, 255, pte(0x8000_5000, "v"))
    m.pte(0x8000_5000, 511, pte(0x8000_6000, "v"))
    m.pte(0x8000_6000, 511, pte(0x8020_0000, "vrxad"))
    table = read_page_table(m, (8 << 60) | (root >> 12), 64)
    assert lines(render(PageTableTree(table))) == [
        "satp 0x8000000000080001  Sv39  ASID 0  root table 0x80001000",
        "├── [0]       0x0000000000-0x003fffffff  → level 1 table 0x80002000",
        "│   └── [0]       0x0000000000-0x00001fffff  → level 0 table 0x80003000",
        "│       ├── [16-18]   0x0000010000-0x0000012fff  r-xu-ad    12 KiB  "
        "pa 0x80010000-0x80012fff",
        "│       ├── [19-20]   0x0000013000-0x0000014fff  rw-u-ad     8 KiB  "
        "pa 0x80020000… scattered",
        "│       └── [22]      0x0000016000-0x0000016fff  rw-u-ad     4 KiB  pa 0x80030000",
        "├── [2]       0x0080000000-0x00bfffffff  → level 1 table 0x80004000",
        "│   ├── [0-3]     0x0080000000-0x00807fffff  rw---ad     8 MiB  identity  "
        "(4 level-0 tables)",
        "│   └── [4]       0x0080800000-0x00809fffff  rwx--ad     2 MiB  identity",
        "└── [255]     0x3fc0000000-0x3fffffffff  → level 1 table 0x80005000",
        "    └── [511]     0x3fffe00000-0x3fffffffff  → level 0 table 0x80006000",
        "        └── [511]     0x3ffffff000-0x3fffffffff  r-x--ad     4 KiB  pa 0x80200000",
        "2056 leaf PTEs in 6 ranges map 10268 KiB; flags r w x u g a d, - = clear",
    ]


def test_sv32_tree_leaves_room_for_four_digit_indexes(render: Render) -> None:
    m = FakeMemory()
    root, l0 = 0x8000_1000, 0x8000_2000
    m.pte(root, 1023, pte(l0, "v"), 4)
    for i in range(1014, 1022):
        m.pte(l0, i, pte(0x8001_0000 + (i - 1014) * 0x1000, "vrwuad"), 4)
    table = read_page_table(m, (1 << 31) | (root >> 12), 32)
    assert lines(render(PageTableTree(table))) == [
        "satp 0x80080001  Sv32  ASID 0  root table 0x80001000",
        "└── [1023]      0xffc00000-0xffffffff  → level 0 table 0x80002000",
        "    └── [1014-1021] 0xffff6000-0xffffdfff  rw-u-ad    32 KiB  pa 0x80010000-0x80017fff",
        "8 leaf PTEs in 1 range map 32 KiB; flags r w x u g a d, - = clear",
    ]


_U64, _I32 = BaseType("unsigned long", 8, False), BaseType("int", 4, True)
_PROC = StructType("proc", 64, (
    Member("state", 0, EnumType("procstate", 4, ((0, "UNUSED"), (2, "RUNNABLE"),
                                                 (3, "RUNNING")))),
    Member("pid", 4, _I32), Member("parent", 8, PointerType("struct proc", 8)),
    Member("name", 16, ArrayType(BaseType("char", 1, False, True), 16)),
    Member("pagetable", 32, _U64), Member("trapframe", 40, _U64),
    Member("kstack", 48, _U64), Member("brk", 56, _U64)))


def _proc(state: int, pid: int, name: str, pt: int, base: int) -> StructValue:
    data = struct.pack("<iiQ16sQQQQ", state, pid, 0, name.encode(), pt, pt + 0x4000,
                       0x3FFFFFC000 - pid * 0x3000, 0x13000)
    v = decode_value(_PROC, data, 0, base)
    assert isinstance(v, StructValue)
    return v


def test_process_table_marks_the_running_process(render: Render) -> None:
    table = ProcessTable((Process(0, _proc(2, 1, "sh", 0x87F36000, 0x8020_9000)),
                          Process(1, _proc(3, 2, "hello", 0x87F10000, 0x8020_9040), 1)), 1)
    assert lines(render(ProcessTableView(table))) == [
        "Processes",
        "    slot  pid  state     name   parent  pagetable   trapframe   kstack        brk",
        "       0    1  RUNNABLE  sh          -  0x87f36000  0x87f3a000  0x3fffff9000  0x13000",
        " ▶     1    2  RUNNING   hello       1  0x87f10000  0x87f14000  0x3fffff6000  0x13000",
    ]


def test_trap_frame_lists_kernel_fields_then_registers(render: Render) -> None:
    names = ["kernel_satp", "kernel_sp", "epc", "ra", "sp", "a0", "a1", "a7"]
    t = StructType("trapframe", 64, tuple(Member(n, i * 8, _U64) for i, n in enumerate(names)))
    frame = decode_value(t, struct.pack("<8Q", 0x8000000000087FFF, 0x3FFFFFE000, 0x10E5E,
                                        0x108E4, 0x3FFFFFDD50, 14, 0x3FFFFFDD58, 64),
                         0, 0x87F3A000)
    assert isinstance(frame, StructValue)
    assert lines(render(TrapFrameView(frame, "pid 2 (hello)"))) == [
        "pid 2 (hello)  struct trapframe at 0x87f3a000",
        "  kernel_satp   0x8000000000087fff",
        "  kernel_sp     0x0000003fffffe000",
        "  epc           0x0000000000010e5e",
        " ra  0x00000000000108e4  sp  0x0000003fffffdd50  a0  0x000000000000000e  "
        "a1  0x0000003fffffdd58",
        " a7  0x0000000000000040",
    ]


def test_registers_by_abi_name_with_changes_starred(render: Render) -> None:
    x = [0, 0x108E4, 0x3FFFFFDD50] + [0] * 7 + [1, 0x3FFFFFDD58, 14] + [0] * 4 + [64] + [0] * 14
    before = list(x)
    before[17] = 0
    out = lines(render(RegisterView(RegisterSnapshot(64, Priv.S, 0x3FFFFFF000, tuple(x)),
                                    RegisterSnapshot(64, Priv.U, 0x10E5A, tuple(before)))))
    assert out[0] == "Registers  S-mode  pc 0x0000003ffffff000"
    assert out[5] == ("    a6  0000000000000000    a7*  0000000000000040     s2  "
                      "0000000000000000     s3  0000000000000000")
    assert len(out) == 9 and sum("*" in line for line in out) == 1


def test_round_trip_marks_a_register_the_trap_path_did_not_restore(render: Render) -> None:
    """A timer interrupt from U whose return hands back a kernel value in t0: the trap
    lab's bug, shown beside the value the user code had."""
    x = [0, 0x10B36, 0x3FFFFFDD50, 0, 0, 0x2A] + [0] * 26
    after = list(x)
    after[5] = 0x80209F00
    out = lines(render(RoundTripView(RegisterSnapshot(64, Priv.U, 0x10230, tuple(x)),
                                     RegisterSnapshot(64, Priv.U, 0x10230, tuple(after)),
                                     12, 15)))
    assert out[:4] == [
        "       trap #12          sret #15                trap #12          sret #15",
        "   pc  0000000000010230  0000000000010230    ra  0000000000010b36  0000000000010b36",
        "   sp  0000003fffffdd50  0000003fffffdd50    gp  0000000000000000  0000000000000000",
        "   tp  0000000000000000  0000000000000000   t0*  000000000000002a  0000000080209f00",
    ]
    assert out[16] == ("   t5  0000000000000000  0000000000000000    t6  0000000000000000"
                       "  0000000000000000")
    assert out[17:] == ["* differs: t0"]


def test_round_trip_of_a_system_call_differs_in_pc_and_a0_only(render: Render) -> None:
    x = [0] * 32
    x[10], x[17] = 1, 64
    after = list(x)
    after[10] = 14
    trip = RoundTripView(RegisterSnapshot(32, Priv.U, 0x1128C, tuple(x)),
                         RegisterSnapshot(32, Priv.U, 0x11290, tuple(after)), 6, 9)
    out = lines(render(trip))
    assert trip.differing() == ["pc", "a0"]
    assert out[1] == "  pc*  0001128c  00011290    ra  00000000  00000000"
    assert out[-1] == "* differs: pc, a0"


def test_round_trip_names_the_return_instruction(render: Render) -> None:
    """A bare-metal program's U-mode returns with mret; nothing differs here."""
    regs = RegisterSnapshot(32, Priv.U, 0x80001000, (0,) * 32)
    out = lines(render(RoundTripView(regs, regs, 3, 4, "mret")))
    assert out[0] == "       trap #3   mret #4         trap #3   mret #4"
    assert out[-1] == "every register came back as it was at the trap"


def test_disassembly_marks_the_pc_and_labels_symbols(render: Render) -> None:
    insns = [Instruction(0x10E56, bytes.fromhex("93080004"), "addi a7, zero, 0x40", "write"),
             Instruction(0x10E5A, bytes.fromhex("73000000"), "ecall"),
             Instruction(0x10E5E, bytes.fromhex("8280"), "c.jr ra")]
    assert lines(render(Disassembly(insns, 0x10E5A, "where it trapped", "usys.S:18"))) == [
        "where it trapped  usys.S:18",
        "write:",
        "  0x10e56  04000893  addi a7, zero, 0x40",
        "▶ 0x10e5a  00000073  ecall",
        "  0x10e5e  8082      c.jr ra",
    ]
