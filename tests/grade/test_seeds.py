"""Graded tests on several harts under several scheduling seeds: lab.toml's `smp` and
`seeds`, the `smp` mark, and the failing seeds with their `privlab run` commands in
every report (harness/grade/seeds.py)."""

from __future__ import annotations

import json
import re
import shlex
from io import StringIO
from pathlib import Path
from typing import Any

import pytest

from privlab.cli.main import main, parse
from privlab.course.grade_one import GradeOptions, grade
from privlab.course.reports import write_reports
from privlab.grade.errors import GradeFailure
from privlab.grade.graded_boot import KernelRun
from privlab.grade.labs import load_lab
from privlab.grade.model import GradeReport
from privlab.grade.seeds import format_seeds, parse_seeds_option, seeds_option
from privlab.grade.under_test import KernelUnderTest
from privlab.paths import REPO_ROOT

# Each test logs, per call, the seed it was given and what the machine it booted was
# made with, so the grader's own test can see every seed reach a machine.
LAB_TESTS = '''
import json
from pathlib import Path
from typing import Any

import pytest

LOG = Path(__file__).with_name("calls.jsonl")


def log(name, kernel, run, **more):
    with LOG.open("a") as f:
        f.write(json.dumps({"test": name, "seed": kernel.smp_seed, "token": kernel.token,
                            "harts": run.machine.smp, "machine_seed": run.machine.smp_seed,
                            **more}) + "\\n")


@pytest.mark.points(2)
@pytest.mark.smp
def test_racy(privlab_kernel):
    run = privlab_kernel.run("hello", privlab_kernel.token)
    log("test_racy", privlab_kernel, run)
    if privlab_kernel.smp_seed == 2:
        run.fail("lost an update")
    run.expect_exit(0)


@pytest.mark.points(1)
@pytest.mark.smp
def test_steady(privlab_kernel):
    run = privlab_kernel.run("hello", privlab_kernel.token)
    log("test_steady", privlab_kernel, run)
    run.expect_exit(0)


@pytest.mark.points(1)
@pytest.mark.smp
def test_hangs_under_seed_1(privlab_kernel):
    budget = 200_000 if privlab_kernel.smp_seed == 1 else 150_000_000
    run = privlab_kernel.run("hello", privlab_kernel.token, max_insns=budget)
    log("test_hangs_under_seed_1", privlab_kernel, run)


@pytest.mark.points(1)
@pytest.mark.smp(3, seeds=[7, 11])
def test_own_harts_and_seeds(privlab_kernel, privlab_rng):
    run = privlab_kernel.run("hello", privlab_kernel.token)
    log("test_own_harts_and_seeds", privlab_kernel, run, drawn=privlab_rng.random())
    run.expect_exit(0)


@pytest.mark.points(1)
def test_once(privlab_kernel):
    run = privlab_kernel.run("hello", privlab_kernel.token)
    log("test_once", privlab_kernel, run)
    run.expect_exit(0)
'''

HIDDEN_TEST = '''
import json
from pathlib import Path
from typing import Any

import pytest


@pytest.mark.points(1)
@pytest.mark.smp
def test_hidden_racy(privlab_kernel):
    run = privlab_kernel.run("hello", privlab_kernel.token)
    with Path(__file__).with_name("calls.jsonl").open("a") as f:
        f.write(json.dumps([privlab_kernel.smp_seed, run.machine.smp]) + "\\n")
    if privlab_kernel.smp_seed == 0:
        run.fail("hidden race")
    run.expect_exit(0)
'''


def _lab(root: Path, toml: str) -> Path:
    lab = root / "racy"
    lab.mkdir(parents=True)
    (lab / "lab.toml").write_text(f'title = "racy"\nnumber = 91\nbase = false\n{toml}')
    return lab


def _calls(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _commands(output: str) -> list[str]:
    """The rerun commands the failure's summary lists, one per failing seed."""
    summary = output.split("\n\n", 1)[0]
    return [line.strip() for line in summary.splitlines() if line.startswith("    privlab run")]


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, GradeReport, Path]:
    """The lab above graded once (two xdist workers, as `privlab grade` runs), with a
    hidden test kept outside it, and its reports written."""
    root = tmp_path_factory.mktemp("seeds")
    lab = _lab(root, "smp = 2\nseeds = 5\n")
    (lab / "test_racy.py").write_text(LAB_TESTS)
    hidden = root / "staff"
    hidden.mkdir()
    (hidden / "test_hidden.py").write_text(HIDDEN_TEST)
    report = grade(GradeOptions(load_lab(lab), REPO_ROOT, hidden, jobs=2))
    write_reports(report, root / "out")
    return lab, report, root


def test_every_seed_reaches_its_own_machine_with_a_fresh_token_and_the_labs_harts(
        graded: tuple[Path, GradeReport, Path]) -> None:
    lab, _, _ = graded
    calls = _calls(lab / "calls.jsonl")
    racy = [c for c in calls if c["test"] == "test_racy"]
    assert [c["seed"] for c in racy] == [0, 1, 2, 3, 4]      # every seed, past the failing one
    assert all(c["machine_seed"] == c["seed"] and c["harts"] == 2 for c in racy)
    assert len({c["token"] for c in racy}) == 5
    own = [c for c in calls if c["test"] == "test_own_harts_and_seeds"]
    assert [(c["machine_seed"], c["harts"]) for c in own] == [(7, 3), (11, 3)]
    assert own[0]["drawn"] == own[1]["drawn"]              # the same parameters each seed
    once = [c for c in calls if c["test"] == "test_once"]
    assert [(c["machine_seed"], c["harts"]) for c in once] == [(0, 2)]
    hidden = _calls(lab.parent / "staff" / "calls.jsonl")
    assert hidden == [[s, 2] for s in range(5)]     # the lab's smp and seeds reach it
    # (seeds = 5 is not the default: the grader passes it to its test processes)


def test_a_test_failing_under_one_seed_scores_nothing_and_names_that_seed_and_its_command(
        graded: tuple[Path, GradeReport, Path]) -> None:
    lab, report, _ = graded
    tests = report.by_name()
    racy = tests["test_racy"]
    assert (racy.status, racy.score, racy.max_score) == ("failed", 0, 2)
    assert (racy.harts, racy.seeds, racy.failed_seeds) == (2, (0, 1, 2, 3, 4), (2,))
    token = next(c["token"] for c in _calls(lab / "calls.jsonl")
                 if c["test"] == "test_racy" and c["seed"] == 2)
    command = (f"privlab run --ram 32 --icount-shift 5 --smp 2 --smp-seed 2 "
               f"--boot-flag timer_hz=1000 --user hello {token}")
    lines = racy.output.splitlines()
    # The headline (the scoreboard's "why") is the reason, then the seeds
    assert lines[:5] == ["lost an update", "failed under scheduling seed 2 (1 of 5 on 2 harts)",
                         "  seed 2: lost an update", f"    {command}", "passed under 0, 1, 3, 4"]
    assert lines[6:8] == ["seed 2 in full:", "lost an update"]
    assert "on 2 harts under scheduling seed 2 and bootargs" in racy.output
    args = parse(shlex.split(command)[1:])                 # privlab's own parser takes it
    assert (args.command, args.smp, args.smp_seed, args.ram) == ("run", 2, 2, 32)
    assert (args.user, args.args, args.boot_flag) == ("hello", [token], ["timer_hz=1000"])
    assert (tests["test_steady"].score, tests["test_steady"].failed_seeds) == (1, ())
    assert tests["test_steady"].seeds == (0, 1, 2, 3, 4)
    assert (tests["test_once"].score, tests["test_once"].seeds) == (1, ())
    assert tests["test_own_harts_and_seeds"].score == 1
    hidden = tests["test_hidden_racy"]
    assert hidden.failed_seeds == (0,) and hidden.output.startswith(
        "hidden race\nfailed under scheduling seed 0 (1 of 5 on 2 harts)\n  seed 0: hidden race\n"
        "    privlab run --ram 32 --icount-shift 5 --smp 2 --smp-seed 0 ")
    assert report.points_line() == "Points 3/7"


def test_a_hang_under_one_seed_is_that_seeds_failure_and_the_others_still_run(
        graded: tuple[Path, GradeReport, Path]) -> None:
    lab, report, _ = graded
    hang = report.by_name()["test_hangs_under_seed_1"]
    assert hang.failed_seeds == (1,) and hang.score == 0
    first, second, third = hang.output.splitlines()[:3]
    # the why: where it hung, named
    hung = (r"the kernel did not finish the program: hang: still running after 200,0\d\d "
            r"instructions \(limit 200,000\) at 0x8[0-9a-f]+ \w+\+0x[0-9a-f]+ \S+\.[chS]:\d+")
    assert re.fullmatch(hung, first), first
    assert second == "failed under scheduling seed 1 (1 of 5 on 2 harts)"
    assert re.fullmatch(f"  seed 1: {hung}", third), third
    # The budget counts both harts' instructions, and so does the headline; the line
    # after it is the hart's own.
    assert re.search(r"^hang: still running after 200,0\d\d instructions \(limit 200,000\) "
                     r"at .*\n"
                     r"hart 0 of 2: pc 0x8[0-9a-f]+ .* in S-mode after its 199,\d{3} "
                     r"instructions$", hang.output, re.M), hang.output
    seen = [c["seed"] for c in _calls(lab / "calls.jsonl")
            if c["test"] == "test_hangs_under_seed_1"]
    assert seen == [0, 2, 3, 4]             # seed 1 failed inside run(); the later ones still ran


def test_the_scoreboards_why_is_the_failing_seeds_reason(
        graded: tuple[Path, GradeReport, Path]) -> None:
    """Not `failed under scheduling seed 2`: what went wrong under it."""
    from rich.console import Console

    from privlab.course.scoreboard import Scoreboard

    _, report, _ = graded
    out = StringIO()
    Console(width=200, file=out, color_system=None).print(Scoreboard(report))
    rows: dict[str, str] = {}
    name = ""
    for line in out.getvalue().splitlines():     # the why column folds: join its lines
        cells = [c.strip() for c in line.strip("│").split("│")]
        if len(cells) == 4:
            name = cells[0] or name
            rows[name] = f"{rows[name]} {cells[3]}" if name in rows else cells[3]
    assert rows["test_racy"] == "lost an update"
    assert re.fullmatch(r"the kernel did not finish the program: hang: still running after "
                        r"200,0\d\d instructions \(limit 200,000\) at 0x8[0-9a-f]+ ?\w+\+.*",
                        rows["test_hangs_under_seed_1"]), rows


def test_every_report_names_the_failing_seed_and_its_command(
        graded: tuple[Path, GradeReport, Path]) -> None:
    _, report, root = graded
    racy = report.by_name()["test_racy"]
    [command] = _commands(racy.output)
    assert "--smp 2 --smp-seed 2 " in command
    text = (root / "out" / "report.txt").read_text()
    assert "FAIL test_racy [0/2] (2 harts, seeds 0-4)\n" in text
    assert "PASS test_own_harts_and_seeds [1/1] (3 harts, seeds 7, 11)\n" in text
    assert "PASS test_once [1/1]\n" in text
    assert f"        {command}\n" in text
    results = json.loads((root / "out" / "results.json").read_text())
    shown = next(t for t in results["tests"] if t["name"] == "test_racy")
    assert shown["output"].startswith("lost an update\n"
                                      "failed under scheduling seed 2 (1 of 5 on 2 harts)")
    assert command in shown["output"]
    junit = (root / "out" / "junit.xml").read_text()
    assert ('<property name="seeds" value="0,1,2,3,4" />\n        '
            '<property name="failed_seeds" value="2" />') in junit


def test_a_seeds_rerun_command_boots_the_same_harts_and_interleaving(
        kernel: KernelUnderTest, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """`privlab run` with the command's words gives the grader's run: the same console
    and the same traps and xRETs, hart by hart."""
    kernel.smp, kernel.smp_seed = 2, 5
    run = kernel.run("hello", kernel.token, input=b"\n")   # privlab run reads no stdin
    assert (run.machine.smp, run.machine.smp_seed) == (2, 5)
    command = run.rerun_command()
    assert command == (f"privlab run --ram 32 --icount-shift 5 --smp 2 --smp-seed 5 "
                       f"--boot-flag timer_hz=1000 --input '\\n' --user hello {kernel.token}")
    assert "booted with 32 MiB of RAM on 2 harts under scheduling seed 5 " in run.diagnosis()
    trace = tmp_path / "t.jsonl"
    words = shlex.split(command)[1:]
    capfd.readouterr()
    assert main([words[0], "--trace-out", str(trace), *words[1:]]) == 0
    assert capfd.readouterr().out == run.output
    kinds = ("trap", "xret")
    theirs = [e for e in map(json.loads, trace.read_text().splitlines()) if e["kind"] in kinds]
    ours = [json.loads(line) for line in _jsonl(run)]
    assert theirs == [e for e in ours if e["kind"] in kinds] and theirs
    assert "--smp" not in kernel.run("hello", kernel.token, smp=1).rerun_command()


def _jsonl(run: KernelRun) -> list[str]:
    out = StringIO()
    run.machine.events.write_jsonl(out)
    return out.getvalue().splitlines()


def test_boot_refuses_harts_and_seeds_the_machine_does_not_take(kernel: KernelUnderTest) -> None:
    with pytest.raises(GradeFailure, match=r"^grader error: --smp must be 1 to 8 harts, not 9$"):
        kernel.boot("hello", smp=9)
    with pytest.raises(GradeFailure, match=r"^grader error: a scheduling seed must be an "
                                           r"integer from 0 to 2\^64-1, not -1$"):
        kernel.boot("hello", smp=2, smp_seed=-1)


def test_lab_toml_smp_and_seeds_are_read_with_their_defaults(tmp_path: Path) -> None:
    lab = _lab(tmp_path, "")
    assert (load_lab(lab).smp, load_lab(lab).seeds) == (1, (0, 1, 2, 3))
    (lab / "lab.toml").write_text('title = "t"\nsmp = 3\nseeds = 2\n')
    assert (load_lab(lab).smp, load_lab(lab).seeds) == (3, (0, 1))
    (lab / "lab.toml").write_text('title = "t"\nseeds = [42, 7, 18446744073709551615]\n')
    assert load_lab(lab).seeds == (42, 7, (1 << 64) - 1)


SEEDS_RULE = ("seeds must be a number of seeds from 1 to 64 or a list of 1 to 64 distinct "
              "integers from 0 to 2^64-1, not ")


@pytest.mark.parametrize(("line", "error"), [
    ("seeds = 0", SEEDS_RULE + "0"),
    ("seeds = 65", SEEDS_RULE + "65"),
    ("seeds = []", SEEDS_RULE + "[]"),
    ("seeds = [1, 1]", SEEDS_RULE + "[1, 1]"),
    ("seeds = [-1]", SEEDS_RULE + "[-1]"),
    ('seeds = "4"', SEEDS_RULE + "'4'"),
    ("seeds = true", SEEDS_RULE + "True"),
    ("smp = 9", "smp must be an integer from 1 to 8 harts, not 9"),
    ("smp = 0", "smp must be an integer from 1 to 8 harts, not 0"),
    ("smp = 2.0", "smp must be an integer from 1 to 8 harts, not 2.0"),
])
def test_bad_smp_or_seeds_in_lab_toml_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, error: str) -> None:
    lab = _lab(tmp_path, f"{line}\n")
    assert main(["grade", str(lab), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"privlab: {lab / 'lab.toml'}: {error}\n"
    assert not (tmp_path / "out").exists()


def test_seeds_read_as_a_count_or_a_list_and_print_as_ranges() -> None:
    assert parse_seeds_option("3") == (0, 1, 2)
    assert parse_seeds_option("9,4") == (9, 4)
    assert parse_seeds_option(seeds_option((5,))) == (5,)     # one seed, not a count
    assert parse_seeds_option(seeds_option((0, 7, 42))) == (0, 7, 42)
    with pytest.raises(ValueError, match="not a count or a list of seeds: 'x'"):
        parse_seeds_option("x")
    assert format_seeds((0, 1, 2, 3, 7, 9, 10)) == "0-3, 7, 9, 10"


def test_a_bad_smp_mark_fails_its_test_as_a_grader_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_marks='''
import pytest

@pytest.mark.points(1)
@pytest.mark.smp(seeds=0)
def test_no_seeds(): pass

@pytest.mark.points(1)
@pytest.mark.smp(9)
def test_too_many_harts(): pass
''')
    out = pytester.path / "results.json"
    pytester.runpytest("-q", "-p", "privlab.grade.plugin", "-p", "no:cacheprovider",
                       "--privlab-results", str(out))
    tests = {t["name"]: t for t in json.loads(out.read_text())["tests"]}
    assert tests["test_no_seeds"]["output"] == (
        "grader error: smp(seeds=...) must be a number of seeds from 1 to 64 or a list of "
        "1 to 64 distinct integers from 0 to 2^64-1, not 0")
    assert tests["test_too_many_harts"]["output"] == (
        "grader error: smp(harts=...) must be an integer from 1 to 8 harts, not 9")
    assert tests["test_no_seeds"]["score"] == 0
