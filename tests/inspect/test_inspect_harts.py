"""`privlab inspect` on several harts (--smp, --hart N), its process table's wait
channels, and its stop messages with every code address named."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from rich.console import RenderableType

from privlab.api import Session
from privlab.build.images import Images
from privlab.cli.diagnose import Namer, channel_namer
from privlab.cli.main import main
from privlab.inspect import ProcessTableView

NAMED = r"0x[0-9a-f]+ \w+(\+0x[0-9a-f]+)? \S+\.[chS]:\d+"
FORKTREE = ["--smp", "2", "--at", "syscall:waitpid", "--user", "forktree", "2"]


def _head(out: str) -> str:
    """The lines before the first section (the registers), as one line of single
    spaces (the terminal's width wraps them)."""
    return re.sub(r"\s+", " ", out.split("Registers ─", 1)[0])


def _reached(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Which hart reaches FORKTREE's point first (the schedule decides), and the output."""
    assert main(["inspect", *FORKTREE]) == 0
    out = capsys.readouterr().out
    found = re.match(r"At syscall:waitpid: hart (\d) of 2 ", out)
    assert found, out
    return int(found[1]), out


def test_under_smp_it_names_the_hart_it_stopped_on_and_every_harts_pc(
        capsys: pytest.CaptureFixture[str]) -> None:
    k, out = _reached(capsys)
    head = _head(out)
    assert re.search(rf"^At syscall:waitpid: hart {k} of 2 S-mode pc 0x3ffffff000 uservec "
                     rf"kernel/trampoline\.S:\d+ instret \d+ \(hart {k}'s own; all harts "
                     rf"\d+, as --at instret:N counts\)", head), head
    lines = out.splitlines()
    assert f"stopped on hart {k}, which reached the point; --hart N shows another" in lines
    harts = [line for line in lines if re.match(r"  hart \d  ", line)]
    assert [h[:8] for h in harts] == ["  hart 0", "  hart 1"]
    assert all(re.fullmatch(rf"  hart \d  [MSU]-mode  pc {NAMED}", h) for h in harts), harts
    assert re.search(r"^event #\d+: U → S  user_ecall  waitpid\(\d+, ", out, re.M)
    assert "CSRs (* = changed by this event)" in out


def test_hart_n_shows_that_hart_and_says_which_one_reached_the_point(
        capsys: pytest.CaptureFixture[str]) -> None:
    k, _ = _reached(capsys)
    other = 1 - k
    assert main(["inspect", "--hart", str(other), *FORKTREE]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"At syscall:waitpid: hart {other} of 2  ")
    assert (f"stopped on hart {k}, which reached the point; --hart {other} shows "
            f"hart {other}") in out
    shown = re.search(rf"^  hart {other}  [MSU]-mode  pc 0x([0-9a-f]+) (\S+)", out, re.M)
    assert shown, out
    # the registers and code are the other hart's: its pc, not the reaching hart's uservec
    assert re.search(rf"^[MSU]-mode  pc 0x0*{shown[1]}$", out, re.M), out
    assert f"where the hart is: pc {shown[2]}" in out
    assert re.search(rf"^event #\d+: U → S  \(on hart {k}\)  user_ecall  waitpid", out, re.M)
    assert "changed by this event" not in out      # the event is the other hart's


def test_hart_out_of_range_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--hart", "1", "--user", "hello"]) == 2
    assert capsys.readouterr().err == \
        "privlab: --hart 1: the machine has one hart, 0 (--smp N for more)\n"
    assert main(["inspect", "--hart", "2", "--smp", "2", "--user", "hello"]) == 2
    assert capsys.readouterr().err == "privlab: --hart 2: the machine has harts 0 to 1\n"


def test_the_instret_of_the_header_is_what_at_instret_counts(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The header's `all harts N` is the machine's count: --at instret:N stops there,
    and the hart it stopped on has its own (smaller) count."""
    k, out = _reached(capsys)
    head = _head(out)
    own, total = map(int, re.search(rf"instret (\d+) \(hart {k}'s own; all harts (\d+)",
                                    head).groups())  # type: ignore[union-attr]
    assert own < total
    assert main(["inspect", "--smp", "2", "--at", f"instret:{total}", "--user",
                 "forktree", "2"]) == 0
    head = _head(capsys.readouterr().out)
    assert re.search(rf"all harts {total}, as --at instret:N counts", head), head


def test_a_budget_stop_names_every_code_address_user_ones_too(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", "--at", "syscall:exit", "--max-insns", "3000000",
                 "--user", "forktree", "2"]) == 124
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert re.fullmatch(rf"privlab: never reached syscall:exit: instruction budget of "
                        rf"3000000 exhausted at pc {NAMED} in [MSU]-mode", first), first
    assert "processes:" in err
    epcs = re.findall(r" epc (.*) tval", err)
    assert epcs and all(re.fullmatch(NAMED, e) for e in epcs), err
    assert any("userland/forktree.c:" in e for e in epcs), err


def test_the_process_table_names_a_wait_channel_by_its_symbol(
        images: Images, render: Callable[[RenderableType], str]) -> None:
    """`sleep -b 5000` sleeps in sys_sleep on clock.c's `sleepers`: named, not an address
    (the view `privlab inspect` shows, with diagnose.py's names)."""
    s = Session.boot("sleep", args=["-b", "5000"], images=images)
    try:
        s.run_until_syscall("sleep")
        for _ in range(100):                # until its first wait (deterministic)
            s.run(10_000)
            table = s.processes()
            if table.processes[0].state == "SLEEPING":
                break
        assert [p.state for p in table.processes] == ["SLEEPING"]
        kernel = s.info.kernel_info
        assert kernel is not None
        view = ProcessTableView(table, None, channel_namer(
            kernel, s.machine, table.processes, Namer(s.info, s.machine)))
        lines = render(view).splitlines()
        assert lines[0].split()[-3:] == ["waits", "on", "holds"]
        assert re.fullmatch(r"\s+0\s+1\s+0\s+SLEEPING\s+sleep\s+-\s+0x[0-9a-f]+\s+0\s+"
                            r"sleepers\s*", lines[1]), lines
    finally:
        s.close()


def test_trace_under_smp_counts_instret_as_at_instret_does(
        capsys: pytest.CaptureFixture[str]) -> None:
    """One meaning: a row's instret under --smp is every hart's instructions before it
    (the legend says so), and --at instret:N with a hart 1 row's count stops there, on
    hart 1, at that row's instruction; with one hart nothing changes and no legend."""
    assert main(["trace", "--smp", "2", "--user", "forktree", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("instret: instructions all harts had retired before the row, the "
                        "count --at instret:N uses (privlab inspect also shows the hart's "
                        "own)")
    assert lines[1].split()[:3] == ["seq", "instret", "hart"]
    rows = [line.split() for line in lines[2:] if re.match(r"\s+\d+\s+\d+\s+\d+ ", line)]
    counts = [int(r[1]) for r in rows]
    assert counts == sorted(counts)          # one clock: the rows of both harts in order
    sret = next(r for r in rows if r[2] == "1" and "sret" in r and "pid" in r)
    assert main(["inspect", "--smp", "2", "--at", f"instret:{sret[1]}", "--user",
                 "forktree", "2"]) == 0
    head = _head(capsys.readouterr().out)
    own, total = map(int, re.search(r"instret (\d+) \(hart 1's own; all harts (\d+)",
                                    head).groups())  # type: ignore[union-attr]
    assert total == int(sret[1]) and own < total
    assert re.search(r"pc 0x[0-9a-f]+ userret\+0x[0-9a-f]+ ", head.splitlines()[0]), head
    assert main(["trace", "--user", "hello"]) == 0       # one hart: one count, no legend
    assert capsys.readouterr().out.splitlines()[0].split()[:3] == ["seq", "instret", "U"]


def test_the_tours_boot_section_folds_repeated_rows() -> None:
    """The boot's ~15 disk interrupts (s_external at sleep, then sret) are a row or two
    with a count, not a screenful; --unfold shows each."""
    from io import StringIO

    from privlab.cli.tour_cmd import tour
    from privlab.inspect import make_console

    def boot_rows(unfold: bool) -> list[str]:
        out = StringIO()
        assert tour(console=make_console(width=100, file=out, color=False),
                    unfold=unfold) == 0
        section = out.getvalue().split("1  Boot: M-mode to S-mode to U-mode", 1)[1]
        section = section.split("2  hello's write()", 1)[0]
        return [line for line in section.splitlines() if re.match(r"\s+\d+\s+\d+\s", line)]

    folded = boot_rows(False)
    counts = [int(m[1]) for line in folded if (m := re.search(r"s_external .* \u00d7(\d+)$", line))]
    assert counts and all(n > 1 for n in counts), folded
    assert len(folded) <= 10, folded
    unfolded = boot_rows(True)
    assert sum(1 for line in unfolded if "s_external" in line) == sum(counts), unfolded
