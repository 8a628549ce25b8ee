"""M-mode in the static pictures: the tour's stop in the firmware, `inspect --at` an
SBI call (machine CSRs first), and the `sbi:NAME` point, on RV64 and RV32."""

from __future__ import annotations

import re
from io import StringIO

import pytest

from privlab.api import Session
from privlab.api.points import parse_point, run_to
from privlab.build.images import Images
from privlab.cli.main import main
from privlab.cli.tour_cmd import tour
from privlab.errors import BadInput
from privlab.inspect import make_console
from privlab.paths import KERNEL_DIR

# mtrap_vector's first instruction: the TRAP_VECTOR expansion (trapvec.h) in mtrap.S.
VECTOR_LINE = 1 + (KERNEL_DIR / "firmware/mtrap.S").read_text().splitlines().index(
    "    TRAP_VECTOR mtrap               // mtrap(struct mframe *) in fwmain.c")
ARCHS = ("rv64", "rv32")
HEX = {"rv64": 16, "rv32": 8}


@pytest.fixture(scope="module", params=ARCHS)
def tour_text(request: pytest.FixtureRequest) -> tuple[str, str]:
    out = StringIO()
    assert tour(request.param, console=make_console(width=100, file=out, color=False)) == 0
    return request.param, out.getvalue()


def _section(text: str, n: int) -> str:
    start = text.index(f"\n{n}  ")
    return text[start:text.index(f"\n{n + 1}  ", start)]


def _rows(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def test_the_tour_stops_at_the_kernels_sbi_call_with_the_m_csrs(
        tour_text: tuple[str, str]) -> None:
    arch, text = tour_text
    m, n = _section(text, 4), HEX[arch]
    assert m.startswith("\n4  The kernel's write reaches the firmware, in M-mode")
    rows = _rows(m)
    # At mtvec, just after the kernel's ecall: S-mode became M-mode.
    head = next(r for r in rows if r.startswith("M-mode (was S-mode)"))
    assert re.fullmatch(r"M-mode \(was S-mode\)  pc 0x800002[0-9a-f]{2} mtrap_vector "
                        rf"kernel/firmware/mtrap\.S:{VECTOR_LINE}   2 changed \(\*\)", head)
    assert rows[rows.index(head) + 1] == "Machine"
    status = next(r for r in rows if r.startswith(" mstatus*"))
    assert "MPIE=1→0" in status and "MPP=U→S" in status and "  MIE=0  " in status
    assert f" mcause     0x{9:0{n}x}  supervisor_ecall  (exception 9)" in rows
    mepc = next(r for r in rows if r.startswith(" mepc*"))
    assert re.fullmatch(rf" mepc\*      0x{'0' * (n - 8)}802[0-9a-f]{{5}}  sbi_console_write\+0x1a "
                        r"kernel/sbi\.c:\d+  \(was 0x[0-9a-f]+\)", mepc)
    assert f" mtval      0x{0:0{n}x}  0" in rows
    assert "Supervisor" not in rows                     # nothing there changed


def test_the_tour_explains_mstatus_mcause_mepc_and_mtval(tour_text: tuple[str, str]) -> None:
    _, text = tour_text
    m = " ".join(_section(text, 4).split())             # the paragraphs, unwrapped
    assert ("a7 = 0x4442434e (\"DBCN\" in ASCII) and a6 = 0 (DBCN.WRITE), a0 = 14 bytes at "
            "physical address a1 = 0x802") in m
    assert ("medeleg does not delegate supervisor_ecall, so the hart enters M-mode at mtvec = "
            "mtrap_vector.") in m
    assert "mcause = 9, supervisor_ecall: an exception (the top bit is clear)" in m
    assert ("mepc = sbi_console_write+0x1a: the kernel's own ecall instruction, in S-mode "
            "code. The handler is the firmware's: mtrap_vector saves the registers and calls "
            "mtrap() (kernel/firmware/fwmain.c), which passes the call to sbi_handle() "
            "(kernel/firmware/sbicalls.c)") in m
    assert "mstatus: MPP = S, the level the trap came from, kept for mret; MPIE = 0" in m
    assert "mtval = 0: an ecall has no address or instruction to report." in m


def test_the_tours_mret_returns_to_s_after_the_ecall_then_sret_to_u(
        tour_text: tuple[str, str]) -> None:
    _, text = tour_text
    rows = _rows(_section(text, 4))
    head = next(r for r in rows if r.startswith("S-mode (was M-mode)"))
    assert re.fullmatch(r"S-mode \(was M-mode\)  pc 0x802[0-9a-f]+ sbi_console_write\+0x1e "
                        r"kernel/sbi\.c:\d+   1 changed \(\*\)", head)
    status = rows[rows.index(head) + 2]
    assert status.startswith(" mstatus*") and "MPIE=0→1" in status and "MPP=S→U" in status
    m = " ".join(_section(text, 4).split())
    assert ("mret took the hart from M-mode to S-mode (the MPP it found) at pc = mepc = "
            "sbi_console_write+0x1e, the ecall + 4; MIE took MPIE's value (0), MPIE became 1 "
            "and MPP U. a0 = 0 (SBI_SUCCESS), a1 = 14: the bytes written.") in m
    assert re.search(r"#\d+: the kernel finishes write\(\) and returns to hello by sret: "
                     r"S-mode to U-mode at pc = sepc = write\+0x8,", m)


def test_the_tour_mentions_mstatus_mcause_and_mepc(tour_text: tuple[str, str]) -> None:
    _, text = tour_text
    for csr in ("mstatus", "mcause", "mepc"):
        assert csr in text


@pytest.mark.parametrize("arch", ARCHS)
def test_inspect_at_an_sbi_call_shows_the_machine_csrs_first(
        arch: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--arch", arch, "--at", "sbi:DBCN.WRITE", "--user", "hello"]) == 0
    out, n = capsys.readouterr().out, HEX[arch]
    seq = 37 if arch == "rv64" else 39                 # as the tour and the docs number it
    assert re.match(r"At sbi:DBCN\.WRITE: M-mode  pc 0x800002[0-9a-f]{2} mtrap_vector "
                    r"kernel/firmware/mtrap\.S:\d+  instret \d+\n"
                    rf"event #{seq}: S → M  supervisor_ecall  sbi DBCN\.WRITE  pid 1\n", out)
    rows = _rows(out)
    csrs = rows.index("CSRs (* = changed by this event) " + "─" * 67)
    assert rows[csrs + 1].startswith("M-mode (was S-mode)  pc 0x800002")
    assert rows[csrs + 2] == "Machine"
    assert rows.index("Machine") < rows.index("Supervisor")
    assert f" mcause     0x{9:0{n}x}  supervisor_ecall  (exception 9)" in rows
    assert any(re.fullmatch(r" mstatus\*   0x[0-9a-f]+  SIE=0  MIE=0  SPIE=1  UBE=0  MPIE=1→0  "
                            r"SPP=U  VS=Off  MPP=U→S.*", r) for r in rows)
    assert any(re.fullmatch(r" mepc\*      0x[0-9a-f]+  sbi_console_write\+0x1a kernel/sbi\.c:"
                            r"\d+  \(was 0x[0-9a-f]+\)", r) for r in rows)
    assert "where it trapped: epc sbi_console_write+0x1a  kernel/sbi.c:22" in rows


def test_sbi_points_name_the_calls_as_the_trace_does(images: Images) -> None:
    s = Session.boot("hello", images=images, bundled_disk=False)
    notes = {}
    for point in ("sbi:BASE.PROBE_EXT", "sbi:TIME.SET_TIMER", "sbi:dbcn.write"):
        e = run_to(s, point).event
        assert e is not None and e.name == "supervisor_ecall"
        notes[point] = (e.seq, s.flow.notes[e.seq])
    assert [note for _, note in notes.values()] == [
        "sbi BASE.PROBE_EXT", "sbi TIME.SET_TIMER", "sbi DBCN.WRITE"]
    assert s.priv.letter == "M" and s.console == ""     # DBCN.WRITE has not printed yet
    s.close()


def test_sbi_point_grammar_and_an_unknown_call_is_one_line(images: Images) -> None:
    assert str(parse_point("sbi:DBCN.WRITE:2")) == "sbi:DBCN.WRITE:2"
    assert str(parse_point("sbi:*")) == "sbi:*"
    s = Session.boot("hello", images=images, bundled_disk=False)
    with pytest.raises(BadInput, match=r"^no SBI call named 'DBCN.WRTE' in "
                                       r"kernel/include/sbi\.h \(e\.g\. "):
        run_to(s, "sbi:DBCN.WRTE")
    s.close()
