"""`privlab grade` and `privlab lab` from the command line."""

from __future__ import annotations

import csv
import json
import os
import shlex
import shutil
from pathlib import Path

import pytest

from privlab.cli.main import main
from privlab.course import batch
from privlab.course.grade_one import GradeOptions, grade
from privlab.grade.labs import find_lab
from privlab.grade.model import GradeReport, TestResult
from privlab.paths import KERNEL_DIR

FAST = "test_counts_exactly_the_calls_made or test_base_runs"


def _submission(root: Path, broken: bool = False) -> Path:
    shutil.copytree(KERNEL_DIR, root / "kernel")
    if broken:
        path = root / "kernel" / "taskinfo.c"
        path.write_text(path.read_text() + "\nint oops(void) { return missing; }\n")
    return root


def test_grade_prints_points_last_writes_reports_and_exits_0_for_full_marks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sub = _submission(tmp_path / "alice")
    status = main(["grade", "taskinfo", "--submission", str(sub), "-k", FAST,
                   "--out", str(tmp_path / "out")])
    lines = capsys.readouterr().out.strip().splitlines()
    assert status == 0 and lines[-1] == "Points 4/4"
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["score"] == 4 and len(results["tests"]) == 3  # build + 2 tests
    assert (tmp_path / "out" / "junit.xml").is_file()
    assert (tmp_path / "out" / "kernel.elf").read_bytes()[:4] == b"\x7fELF"


def test_grade_of_a_broken_build_exits_1_with_the_compiler_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sub = _submission(tmp_path / "bob", broken=True)
    status = main(["grade", "taskinfo", "--submission", str(sub), "-k", FAST,
                   "--out", str(tmp_path / "out"), "--details"])
    out = capsys.readouterr().out
    assert status == 1 and out.strip().splitlines()[-1] == "Points 0/4"
    assert "FAIL" in out
    report = (tmp_path / "out" / "report.txt").read_text()
    assert "use of undeclared identifier 'missing'" in report
    assert not (tmp_path / "out" / "kernel.elf").exists()


def test_unknown_lab_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["grade", "no-such-lab"]) == 2
    assert "no lab 'no-such-lab'" in capsys.readouterr().err


def test_batch_grades_every_submission_and_writes_a_gradebook(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subs = tmp_path / "subs"
    _submission(subs / "alice")
    _submission(subs / "bob", broken=True)
    status = main(["grade", "taskinfo", "--submissions", str(subs), "-k", FAST,
                   "--out", str(tmp_path / "grades"), "--jobs", "2"])
    assert status == 0
    assert "graded 2 submissions (1 did not build)" in capsys.readouterr().out
    rows = list(csv.DictReader((tmp_path / "grades" / "gradebook.csv").open()))
    assert [(r["submission"], r["score"], r["built"]) for r in rows] == [
        ("alice", "4", "yes"), ("bob", "0", "no")]
    for name in ("alice", "bob"):
        assert (tmp_path / "grades" / name / "results.json").is_file()


def test_lab_handout_strips_every_labs_solution_and_copies_its_page(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lab", "handout", "mmap", "-o", str(tmp_path / "h")]) == 0
    out = capsys.readouterr().out
    assert "kernel/mmap.c" in out and "kernel/sched.c" in out
    mmap = (tmp_path / "h" / "kernel" / "mmap.c").read_text()
    assert "SOLUTION" not in mmap and "uvmmap_zeroed" not in mmap
    assert "SOLUTION" not in (tmp_path / "h" / "kernel" / "sched.c").read_text()  # stride's
    assert (tmp_path / "h" / "LAB-mmap.md").is_file()
    assert main(["lab", "handout", "mmap", "-o", str(tmp_path / "h")]) == 2  # not empty


def test_lab_list_names_all_six_labs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lab", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("taskinfo", "mmap", "stride", "vmprint", "backtrace", "trap"):
        assert name in out


def test_hidden_tests_from_a_separate_directory_are_graded_after_published(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hidden = tmp_path / "staff" / "hidden"
    hidden.mkdir(parents=True)
    (hidden / "test_staff_only.py").write_text(
        "import pytest\n\n\n"
        "@pytest.mark.points(5)\n"
        "def test_hello_from_staff(privlab_kernel):\n"
        "    run = privlab_kernel.run('hello', privlab_kernel.token)\n"
        "    run.expect_output(privlab_kernel.token)\n")
    status = main(["grade", "taskinfo", "--submission", str(_submission(tmp_path / "carol")),
                   "--hidden", str(hidden), "-k", "test_counts_exactly or staff",
                   "--out", str(tmp_path / "out")])
    assert status == 0 and capsys.readouterr().out.strip().endswith("Points 8/8")
    tests = json.loads((tmp_path / "out" / "results.json").read_text())["tests"]
    staff = [t for t in tests if t["name"] == "test_hello_from_staff"]
    assert staff and staff[0]["visibility"] == "after_published" and staff[0]["score"] == 5


def test_a_hidden_test_can_bring_its_own_user_program(tmp_path: Path) -> None:
    from privlab.build.images import build_images
    from privlab.course.submission_build import build_submission, staging_slot
    from privlab.grade.under_test import KernelUnderTest
    from privlab.paths import REPO_ROOT

    elf = tmp_path / "secret.elf"
    shutil.copyfile(build_images("rv64", listings=False).users["hello"], elf)
    with staging_slot() as slot:
        built = build_submission(REPO_ROOT, slot)
        assert built.images is not None
        kernel = KernelUnderTest(built.images)
        run = kernel.run(str(elf), kernel.token)
        run.expect_text(f"argv[1] = {kernel.token}")
        kernel.close()


def test_batch_turns_a_grader_error_into_that_submissions_failed_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever goes wrong grading one submission, the others are graded and every
    submission has a report and a gradebook row."""

    def fake_grade(options: GradeOptions) -> GradeReport:
        if options.submission.name == "bob":
            raise RuntimeError("disk on fire")
        return GradeReport("taskinfo", str(options.submission))

    monkeypatch.setattr(batch, "grade", fake_grade)
    monkeypatch.setattr(batch, "LOCAL_PROCESSES", False)  # fake_grade lives here
    subs = tmp_path / "subs"
    for name in ("alice", "bob", "carol"):
        (subs / name).mkdir(parents=True)
    result = batch.grade_batch(GradeOptions(find_lab("taskinfo"), subs), subs, tmp_path / "g",
                               workers=2)
    assert [(n, r.notes) for n, r in result.reports] == [
        ("alice", []), ("bob", ["grader error: RuntimeError: disk on fire"]), ("carol", [])]
    bob = json.loads((tmp_path / "g" / "bob" / "results.json").read_text())
    assert bob["score"] == 0 and "disk on fire" in bob["output"]
    rows = list(csv.DictReader(result.gradebook.open()))
    assert [(r["submission"], r["built"], r["notes"]) for r in rows] == [
        ("alice", "yes", "0"), ("bob", "no", "1"), ("carol", "yes", "0")]


def test_hidden_tests_named_like_the_labs_own_are_graded_and_a_broken_one_is_one_note(
        tmp_path: Path) -> None:
    """Staff naturally call their hidden file test_taskinfo.py, like the lab's: it was
    an import clash, and its tests silently left the score (max_score shrank). A hidden
    file that does not import is one note naming the error, not the whole pytest log
    once per test process."""
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "test_taskinfo.py").write_text(
        "import pytest\n\n\n"
        "@pytest.mark.points(5)\n"
        "def test_staff_hello(privlab_kernel):\n"
        "    run = privlab_kernel.run('hello', privlab_kernel.token)\n"
        "    run.expect_output(privlab_kernel.token)\n")
    (hidden / "test_broken.py").write_text("def test_oops(:\n")
    spec = find_lab("taskinfo")
    report = grade(GradeOptions(spec, _submission(tmp_path / "dan"), hidden, jobs=2,
                                keyword="test_counts_exactly or staff or oops"))
    assert report.by_name()["test_staff_hello"].score == 5
    assert report.max_score == 8
    assert len(report.notes) == 1, report.notes
    note = report.notes[0]
    assert "test_broken.py" in note and "SyntaxError" in note
    assert "FAILURES" not in note and "passed" not in note


def test_batch_logs_a_line_per_submission_and_prints_names_verbatim(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Not on a terminal (a log file, CI), the progress bar shows only at the end: each
    submission gets its own line as it is graded. A name like '[red]eve' is shown as
    it is (it was read as markup and printed as 'eve')."""

    def fake_grade(options: GradeOptions) -> GradeReport:
        return GradeReport("taskinfo", str(options.submission),
                           [TestResult("test_t", 2, 2, "passed", ran=True)])

    monkeypatch.setattr(batch, "grade", fake_grade)
    monkeypatch.setattr(batch, "LOCAL_PROCESSES", False)  # fake_grade lives here
    subs = tmp_path / "subs"
    for name in ("alice", "[red]eve"):
        (subs / name).mkdir(parents=True)
    assert main(["grade", "taskinfo", "--submissions", str(subs), "--jobs", "1",
                 "--out", str(tmp_path / "g")]) == 0
    out = capsys.readouterr().out
    assert "[1/2] [red]eve: 2/2\n[2/2] alice: 2/2\n" in out  # sorted: "[" < "a"


def test_a_directory_without_kernel_is_graded_and_its_reports_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """On Gradescope a student's upload without kernel/ must still produce
    results.json (it exited 2 and wrote nothing: 'the autograder failed'); only a
    directory that does not exist is bad input."""
    (tmp_path / "upload").mkdir()
    status = main(["grade", "taskinfo", "--submission", str(tmp_path / "upload"), "-k", FAST,
                   "--out", str(tmp_path / "out")])
    assert status == 1 and capsys.readouterr().out.strip().splitlines()[-1] == "Points 0/4"
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert "no kernel/ directory" in results["tests"][0]["output"]
    assert main(["grade", "taskinfo", "--submission", str(tmp_path / "nowhere")]) == 2
    assert "nowhere: no such directory" in capsys.readouterr().err


def test_a_k_that_matches_no_test_is_bad_input_not_full_marks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A typo in a Classroom command's -k graded nothing, printed Points 0/0 and exited
    0: every student passed it."""
    status = main(["grade", "taskinfo", "--submission", str(_submission(tmp_path / "eve")),
                   "-k", "test_count_exactly_the_calls", "--out", str(tmp_path / "out")])
    assert status == 2
    assert "-k 'test_count_exactly_the_calls' matches no test of taskinfo" in (
        capsys.readouterr().err)


def test_batch_never_grades_the_directory_its_reports_go_to(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`cd submissions && privlab grade LAB --submissions .` puts the reports in
    ./privlab-grade/: the next run graded that directory as a submission, a bogus
    gradebook row."""

    def fake_grade(options: GradeOptions) -> GradeReport:
        return GradeReport("taskinfo", str(options.submission))

    monkeypatch.setattr(batch, "grade", fake_grade)
    monkeypatch.setattr(batch, "LOCAL_PROCESSES", False)  # fake_grade lives here
    subs = tmp_path / "subs"
    (subs / "alice").mkdir(parents=True)
    (subs / "privlab-grade" / "taskinfo" / "alice").mkdir(parents=True)
    monkeypatch.chdir(subs)
    assert main(["grade", "taskinfo", "--submissions", "."]) == 0
    assert "graded 1 submissions" in capsys.readouterr().out
    with Path("privlab-grade/taskinfo/gradebook.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["submission"] for r in rows] == ["alice"]


def test_batch_grades_a_submission_whose_name_is_not_utf8(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Submission directories come from students' uploads: a name that is not UTF-8
    crashed the whole batch (its report could not be written, and the exception left
    the worker)."""

    def fake_grade(options: GradeOptions) -> GradeReport:
        return GradeReport("taskinfo", str(options.submission),
                           [TestResult("test_t", 1, 0, "failed", "why", ran=True)])

    monkeypatch.setattr(batch, "grade", fake_grade)
    monkeypatch.setattr(batch, "LOCAL_PROCESSES", False)  # fake_grade lives here
    subs = tmp_path / "subs"
    subs.mkdir()
    os.mkdir(os.path.join(os.fsencode(subs), b"caf\xe9"))
    assert main(["grade", "taskinfo", "--submissions", str(subs),
                 "--out", str(tmp_path / "g")]) == 0
    assert "[1/1] caf\\xe9: 0/1" in capsys.readouterr().out
    rows = list(csv.DictReader((tmp_path / "g" / "gradebook.csv").open()))
    assert [r["submission"] for r in rows] == ["caf\\xe9"]


def test_a_failures_rerun_command_boots_the_same_machine(
        capfd: pytest.CaptureFixture[str]) -> None:
    """The diagnosis of a failed test ends with a `privlab run` line; run as given, it
    prints what the graded machine printed."""
    from privlab.course.submission_build import build_submission, staging_slot
    from privlab.grade.under_test import KernelUnderTest
    from privlab.paths import REPO_ROOT

    with staging_slot() as slot:
        built = build_submission(REPO_ROOT, slot)
        assert built.images is not None
        kernel = KernelUnderTest(built.images)
        run = kernel.run("hello", kernel.token, "two", flags=("vmprint",),
                         input=b"x\n")
        command = run.rerun_command()
        assert command in run.diagnosis()
        kernel.close()
    assert command.startswith("privlab run --ram 32 --icount-shift 5 --boot-flag vmprint "
                              "--boot-flag timer_hz=")
    assert command.endswith(f"--input 'x\\n' --user hello {kernel.token} two")
    capfd.readouterr()
    assert main(shlex.split(command)[1:]) == 0
    assert capfd.readouterr().out == run.output


def test_the_rerun_command_boots_the_graded_kernel_not_privlabs(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A handout's failure suggests a `privlab run --src HANDOUT ...` that boots the
    handout's kernel, wherever it is typed: it prints what the graded machine printed
    (here the student's own vmprint header), not what privlab's solution prints."""
    from privlab.course.submission_build import build_submission, staging_slot
    from privlab.grade.under_test import KernelUnderTest

    handout = tmp_path / "h"
    assert main(["lab", "handout", "vmprint", "-o", str(handout)]) == 0
    vmprint = handout / "kernel" / "vmprint.c"
    vmprint.write_text(vmprint.read_text().replace(
        "void vmprint(pagetable_t pt) {\n",
        "void vmprint(pagetable_t pt) {\n  printf(\"my table %p\\n\", (void *)pt);\n"))
    with staging_slot() as slot:
        built = build_submission(handout, slot)
        assert built.images is not None
        kernel = KernelUnderTest(built.images)
        run = kernel.run("hello", kernel.token, flags=("vmprint",), input=b"\n")
        command = run.rerun_command()
        kernel.close()
    assert command.startswith(f"privlab run --src {handout.resolve()} --ram 32 "
                              "--icount-shift 5 --boot-flag vmprint --boot-flag timer_hz=1000 "
                              "--input '\\n' --user hello ")
    assert run.output.startswith("my table 0x")
    capfd.readouterr()
    assert main(shlex.split(command)[1:]) == 0
    out, err = capfd.readouterr()
    assert out == run.output
    assert err.splitlines()[0].startswith(f"privlab: using {handout.resolve()}: ")


def test_the_labs_clock_reaches_each_boot_and_the_rerun_command(
        capfd: pytest.CaptureFixture[str]) -> None:
    """KernelUnderTest(icount_shift=N) (a lab.toml's icount_shift) boots every machine
    at 2^N ns per instruction: a program that waits 20 ms of guest time by get_time and
    yield retires many times fewer instructions at N = 4, and the rerun command says so."""
    from privlab.course.submission_build import build_submission, staging_slot
    from privlab.grade.under_test import KernelUnderTest
    from privlab.paths import REPO_ROOT

    with staging_slot() as slot:
        built = build_submission(REPO_ROOT, slot)
        assert built.images is not None
        normal = KernelUnderTest(built.images, icount_shift=0)
        coarse = KernelUnderTest(built.images, icount_shift=4)
        slow, fast = (k.run("sleep", "20", input=b"\n") for k in (normal, coarse))
        ratio = slow.machine.hart.state.instret / fast.machine.hart.state.instret
        command = fast.rerun_command()
        normal.close()
        coarse.close()
    assert fast.machine.icount_shift == 4 and slow.machine.icount_shift == 0
    assert 8 < ratio < 16        # 16x for the waiting, less for boot and printing
    assert command.startswith("privlab run --ram 32 --icount-shift 4 ")
    assert slow.rerun_command().startswith("privlab run --ram 32 --icount-shift 0 ")
    capfd.readouterr()
    assert main(shlex.split(command)[1:]) == 0
    assert capfd.readouterr().out == fast.output == "sleep: 20 ms\n"


def test_grade_takes_the_v_that_pytests_assertion_messages_advertise(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A plain assert comparing lists fails with pytest's "Use -v to get more diff":
    `privlab grade -v` (and -vv, which pytest asks for next) give those longer diffs.
    The report reads the same where CI=... is set (CI systems, Gradescope workers), which
    pytest otherwise takes as a reason to print whole diffs."""
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("BUILD_NUMBER", "17")
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "test_lists.py").write_text(
        "import pytest\n\n\n"
        "@pytest.mark.points(1)\n"
        "def test_lists(privlab_kernel):\n"
        "    assert [f'line {i}' for i in range(40)] == [f'line {i}' for i in range(41)]\n")
    sub = _submission(tmp_path / "s")
    outputs = []
    for flags in ([], ["-v"], ["-vv"]):
        out = tmp_path / f"out{len(flags)}"
        assert main(["grade", "taskinfo", "--submission", str(sub), "--hidden", str(hidden),
                     "-k", "test_lists", "--out", str(out), *flags]) == 1
        report = json.loads((out / "results.json").read_text())
        outputs.append(next(t["output"] for t in report["tests"] if t["name"] == "test_lists"))
    capsys.readouterr()
    quiet, verbose, whole = outputs
    assert "Use -v to get more diff" in quiet
    assert "Full diff:" in verbose and "use '-vv' to show" in verbose
    assert "Full diff:" in whole and "-v" not in whole.replace("--seed", "")
