"""The pytest plugin on its own: points, groups, requires, results, hidden tests,
and handouts (no kernel needed)."""

from __future__ import annotations

import json
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from privlab.course.handout import strip_solutions
from privlab.errors import BadInput

PLUGIN = "privlab.grade.plugin"

TESTS = '''
import pytest

pytestmark = pytest.mark.points(1)

def test_default_points(): pass

@pytest.mark.points(4)
def test_parent(): assert 1 == 2, "parent broke"

@pytest.mark.points(2)
@pytest.mark.requires("test_parent")
def test_child(): pass

@pytest.mark.points(6)
class TestGroup:
    """the group"""
    def test_one(self): pass
    def test_two(self): assert False
    @pytest.mark.points(2)
    def test_three(self): pass

@pytest.mark.points(3, all_or_nothing=True)
class TestStrict:
    def test_x(self): pass
    def test_y(self): raise RuntimeError("grader bug")
'''


class Session:
    """A directory of test files, run in-process by pytest's own `pytester` with the
    plugin enabled as `privlab grade` enables it (`-p privlab.grade.plugin`)."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.path = pytester.path

    def write(self, name: str, text: str) -> Path:
        target = self.path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        return target

    def run(self, *args: str, rootdir: Path | None = None
            ) -> tuple[dict[str, dict[str, object]], str]:
        out = self.path / "results.json"
        out.unlink(missing_ok=True)  # a run that dies must not pass with the last one's
        result = self.pytester.runpytest(
            str(self.path), "-q", "-p", PLUGIN, "-p", "no:cacheprovider",
            "--rootdir", str(rootdir or self.path), "--privlab-results", str(out), *args)
        stdout = result.stdout.str()
        data = json.loads(out.read_text())
        assert data["complete"] is True, stdout + result.stderr.str()
        return {t["name"]: t for t in data["tests"]}, stdout


@pytest.fixture
def session(pytester: pytest.Pytester) -> Session:
    return Session(pytester)


def test_points_groups_and_requires_are_recorded(session: Session) -> None:
    session.write("test_lab.py", TESTS)
    tests, stdout = session.run()
    assert tests["test_default_points"]["score"] == 1
    assert tests["test_parent"]["max_score"] == 4 and tests["test_parent"]["score"] == 0
    assert "parent broke" in str(tests["test_parent"]["output"])
    child = tests["test_child"]
    assert child["score"] == 0 and child["status"] == "failed"
    assert "requires test_parent" in str(child["output"])
    assert [tests[n]["max_score"] for n in ("test_one", "test_two", "test_three")] == [2, 2, 2]
    assert tests["test_one"]["group"] == "the group" and tests["test_one"]["score"] == 2
    assert tests["test_y"]["all_or_nothing"] is True
    assert "grader error in this test" in str(tests["test_y"]["output"])
    # 1 + 0 + 0 + (2 + 0 + 2) + 0 (strict group: test_y failed) of 1+4+2+6+3
    assert "Points 5/16" in stdout.splitlines()


def test_hidden_directory_is_collected_only_when_named(session: Session) -> None:
    session.write("test_public.py", "def test_p(): pass\n")
    session.write("lab.toml", 'title = "a lab"\n')
    secret = session.write("hidden/test_secret.py", "import pytest\n@pytest.mark.points(1)\n"
                                                    "def test_s(): pass\n")
    tests, _ = session.run()
    assert set(tests) == {"test_p"}
    tests, _ = session.run("--privlab-hidden", str(secret.parent))
    assert tests["test_s"]["visibility"] == "after_published"
    assert tests["test_p"]["visibility"] == "visible"


def test_strip_solutions_keeps_the_code_after_the_end_marker() -> None:
    text = ("int f(void) {\n  // BEGIN SOLUTION\n  return 42;\n  // END SOLUTION\n"
            "  return -1;\n}\n")
    assert strip_solutions(text) == "int f(void) {\n  return -1;\n}\n"
    with pytest.raises(BadInput, match="unbalanced"):
        strip_solutions("// BEGIN SOLUTION\nint x;\n")


def test_lab_test_files_import_only_the_public_grading_api() -> None:
    labs = Path(__file__).resolve().parents[2] / "labs"
    for path in labs.rglob("test_*.py"):
        for line in path.read_text().splitlines():
            if line.startswith(("import ", "from ")) and "privlab" in line:
                assert line.startswith(("from privlab.grade", "from privlab.abi.csr",
                                         "from privlab.abi.fs_layout", "from privlab.fs",
                                         "from privlab.trace")), f"{path}: {line}"


def test_the_same_seed_gives_the_same_random_parameters(session: Session) -> None:
    session.write("test_seeded.py", '''
import pytest

@pytest.mark.points(1)
def test_draw(privlab_rng):
    assert False, f"drew {privlab_rng.randint(0, 10**9)}"
''')
    draws = [str(session.run("--privlab-seed", "1234")[0]["test_draw"]["output"])
             for _ in range(2)]
    assert draws[0] == draws[1] and "--seed 1234 repeats this run" in draws[0]
    other = str(session.run("--privlab-seed", "99")[0]["test_draw"]["output"])
    assert other.splitlines()[0] != draws[0].splitlines()[0]


def test_the_seed_draws_the_same_wherever_the_tests_are_collected_from(
        session: Session) -> None:
    """The course grades with hidden tests elsewhere (so pytest's rootdir, and every
    node id, moves up); the student repeats a failure with --seed N from the lab
    alone: both must draw the same parameters."""
    session.write("test_seeded.py", '''
import pytest

@pytest.mark.points(1)
def test_draw(privlab_rng):
    assert False, f"drew {privlab_rng.randint(0, 10**9)}"
''')
    here = session.run("--privlab-seed", "1234")[0]["test_draw"]
    above = session.run("--privlab-seed", "1234", rootdir=session.path.parent)[0]["test_draw"]
    assert here["nodeid"] != above["nodeid"]
    assert str(here["output"]).splitlines()[0] == str(above["output"]).splitlines()[0]


def test_k_also_runs_the_tests_the_selected_ones_require(session: Session) -> None:
    """`privlab grade LAB -k test_x` (a student's focus, a Classroom command per test)
    grades test_x as a full run would: its prerequisites run too, instead of test_x
    failing as "not run" even for the reference solution."""
    session.write("test_chain.py", '''
import pytest

@pytest.mark.points(3)
def test_base_ok(): pass

@pytest.mark.points(2)
@pytest.mark.requires("test_base_ok")
def test_needs_base(): pass

@pytest.mark.points(1)
@pytest.mark.requires("test_needs_base")
def test_needs_both(): pass

@pytest.mark.points(4)
def test_other(): pass
''')
    tests, stdout = session.run("-k", "test_needs_both")
    assert sorted(tests) == ["test_base_ok", "test_needs_base", "test_needs_both"]
    assert all(t["status"] == "passed" for t in tests.values())
    assert "Points 6/6" in stdout


def test_a_group_childs_worth_does_not_change_with_k(session: Session) -> None:
    """A child of a points group shares the group's points with its siblings: with -k
    selecting one child, it was worth the whole group (a 2-point test showed 0/4)."""
    session.write("test_lab.py", TESTS)
    tests, stdout = session.run("-k", "TestGroup and test_one")
    assert sorted(tests) == ["test_one"]
    assert tests["test_one"]["max_score"] == 2 and "Points 2/2" in stdout


# -- the plugin is a good citizen: inert unless asked for ---------------------------------
LABS = Path(__file__).resolve().parents[2] / "labs"
FIXTURES = ("privlab_images", "privlab_kernel", "privlab_rng")

DRAW = '''
import pytest

@pytest.mark.points(1)
def test_draw(privlab_rng):
    assert 0 <= privlab_rng.random() < 1
'''

OWN_FIXTURES = '''
import pytest

@pytest.fixture
def kernel():
    return "my kernel"

@pytest.fixture
def rng():
    return 42
'''

USES_OWN = '''
def test_mine(kernel, rng):
    assert kernel == "my kernel" and rng == 42
'''


def test_fixtures_are_listed_with_their_docstrings_when_enabled(
        pytester: pytest.Pytester) -> None:
    listing = pytester.runpytest("-p", PLUGIN, "--fixtures").stdout
    for name in FIXTURES:
        text = listing.str().split(f"\n{name}", 1)[1].split("\n\n", 1)[0]
        assert "no docstring available" not in text, text
        assert len(text.splitlines()) >= 2, text  # "name -- path:line" and documentation
    listing.fnmatch_lines(["privlab_images [[]session scope[]] -- *plugin.py:*",
                           "    The built images (kernel, firmware, user programs, syscall table)*",
                           "privlab_kernel -- *plugin.py:*",
                           "    The submission's kernel, a `privlab.grade.KernelUnderTest`*",
                           "privlab_rng -- *plugin.py:*",
                           "    A `random.Random` for this test's parameters*"])


def test_installing_privlab_adds_nothing_to_another_projects_pytest(
        pytester: pytest.Pytester) -> None:
    """No `pytest11` entry point: a pytest run elsewhere has no privlab fixtures,
    options, markers or hooks (a `hidden/` beside a `lab.toml` is collected as usual)."""
    assert not [e for e in entry_points(group="pytest11") if e.value.startswith("privlab")]
    pytester.makefile(".toml", lab='title = "not a lab"\n')
    pytester.makepyfile(**{"hidden/test_hidden": '''
def test_no_privlab_plugin(request):
    pm = request.config.pluginmanager
    assert pm.get_plugin("privlab.grade.plugin") is None
    assert pm.get_plugin("privlab-recorder") is None
    assert not [p for p in pm.get_plugins() if getattr(p, "__name__", "").startswith("privlab")]
'''})
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    listing = pytester.runpytest("--fixtures").stdout
    assert not [line for line in listing.lines if line.startswith("privlab")], listing.str()
    usage = pytester.runpytest("--help").stdout.str()
    assert "--privlab-" not in usage and "privlab lab grading" not in usage
    assert "points(" not in pytester.runpytest("--markers").stdout.str()


def test_dash_p_enables_the_plugin(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_draw=DRAW)
    result = pytester.runpytest("-p", PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["Points 1/1"])
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(errors=1)  # not without


def test_a_lab_enables_the_plugin_with_the_conftest_in_labs(pytester: pytest.Pytester) -> None:
    """labs/conftest.py enables the plugin for every lab below it: as it does in a
    course's own directory of labs, and in privlab's labs/."""
    labs = pytester.mkdir("labs")
    (labs / "conftest.py").write_text((LABS / "conftest.py").read_text())
    (labs / "mylab").mkdir()
    (labs / "mylab" / "lab.toml").write_text('title = "my lab"\n')
    (labs / "mylab" / "test_mylab.py").write_text(DRAW)
    pytester.makepyfile(test_elsewhere="def test_elsewhere(): pass\n")
    result = pytester.runpytest("labs/mylab", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["Points 1/1"])
    listing = pytester.runpytest("--fixtures", "labs/mylab").stdout.str()
    assert all(name in listing for name in FIXTURES)
    elsewhere = pytester.runpytest("--fixtures", "test_elsewhere.py").stdout
    assert not [line for line in elsewhere.lines if line.startswith("privlab")]
    shipped = pytester.runpytest("--fixtures", "-p", "no:cacheprovider", str(LABS / "base"))
    assert all(name in shipped.stdout.str() for name in FIXTURES)


def test_a_projects_own_kernel_and_rng_fixtures_are_its_own(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(OWN_FIXTURES)
    pytester.makepyfile(test_mine=USES_OWN, test_both='''
import random

def test_both(kernel, rng, privlab_rng):
    assert kernel == "my kernel" and rng == 42 and isinstance(privlab_rng, random.Random)
''')
    pytester.runpytest("test_mine.py", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    enabled = pytester.runpytest("-p", PLUGIN, "-p", "no:cacheprovider")
    enabled.assert_outcomes(passed=2)
