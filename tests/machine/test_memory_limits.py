"""The memory one grading may take: PRIVLAB_GRADE_MEMORY sets the address
space of each test process (16 GiB without it), and a guest run that reaches it fails
its test in one line naming the limit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from privlab.course.confinement import limits_for_tests
from privlab.errors import BadInput
from privlab.grade.memlimit import GRADE_MEMORY_ENV, grade_memory, memory_line
from privlab.grade.plugin import _failure_text

TESTS = Path(__file__).resolve().parents[1]


def test_a_test_process_gets_16_gib_without_the_variable(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.delenv(GRADE_MEMORY_ENV, raising=False)
    assert limits_for_tests().address_space == grade_memory() == 16 << 30


@pytest.mark.parametrize(("text", "size"), [("8G", 8 << 30), ("6144M", 6 << 30),
                                            ("3GiB", 3 << 30), ("1T", 1 << 40)])
def test_the_variable_sets_the_address_space(monkeypatch: pytest.MonkeyPatch, text: str,
                                              size: int) -> None:
    monkeypatch.setenv(GRADE_MEMORY_ENV, text)
    assert limits_for_tests().address_space == size


@pytest.mark.parametrize(("text", "message"), [
    ("plenty", "PRIVLAB_GRADE_MEMORY='plenty': not a size (try 8G or 6144M)"),
    ("512M", "PRIVLAB_GRADE_MEMORY='512M': below the least a test process needs, 2 GiB"),
])
def test_a_bad_setting_is_one_line(monkeypatch: pytest.MonkeyPatch, text: str,
                                   message: str) -> None:
    monkeypatch.setenv(GRADE_MEMORY_ENV, text)
    with pytest.raises(BadInput) as e:
        limits_for_tests()
    assert str(e.value) == message


def test_a_memory_error_in_a_test_is_reported_in_one_line() -> None:
    def hog() -> None:
        raise MemoryError
    call = pytest.CallInfo.from_call(hog, when="call")
    text = _failure_text(call, None)  # type: ignore[arg-type]
    assert text == memory_line()
    assert "\n" not in text and text.startswith("the run ran out of memory: ")


def test_a_guest_that_reaches_the_limit_ends_in_the_one_line() -> None:
    """fresh_pages with an unbounded history under a 3 GiB limit: the page store's next
    arena cannot be mapped, and the run ends in the line the grade report shows."""
    env = dict(os.environ, **{GRADE_MEMORY_ENV: "3G"},
               PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, str(TESTS / "machine" / "memory_hog.py")],
                       env=env, capture_output=True, text=True, timeout=300, check=False)
    assert (p.returncode, p.stdout, p.stderr) == (
        1, "the run ran out of memory: the grader's limit of 3 GiB per test process "
           "(raise it with PRIVLAB_GRADE_MEMORY, e.g. PRIVLAB_GRADE_MEMORY=6G)\n", "")


ENGINES = """
import sys
from privlab.course.confinement import limits_for_tests
from privlab.grade.memlimit import memory_line
from privlab.machine import Machine
limits_for_tests().apply()
try:
    Machine(64, smp=2)
except MemoryError:
    print(memory_line())
    sys.exit(1)
"""


def test_a_machine_whose_engines_do_not_fit_ends_in_the_one_line() -> None:
    """Two harts need two 1 GiB translation caches, past a 2 GiB limit. Unicorn itself
    would print "Could not allocate dynamic translator buffer" and exit the process
    with status 1 (a test process gone with no result); the machine finds there is no
    room first and raises MemoryError, which the grade plugin reports in one line."""
    env = dict(os.environ, **{GRADE_MEMORY_ENV: "2G"})
    p = subprocess.run([sys.executable, "-c", ENGINES], env=env, capture_output=True,
                       text=True, timeout=120, check=False)
    assert (p.returncode, p.stdout, p.stderr) == (
        1, "the run ran out of memory: the grader's limit of 2 GiB per test process "
           "(raise it with PRIVLAB_GRADE_MEMORY, e.g. PRIVLAB_GRADE_MEMORY=4G)\n", "")
