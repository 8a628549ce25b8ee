"""The privlab pytest plugin: fixtures, markers and result recording for graded kernel
tests.

It is not loaded by merely installing privlab (no `pytest11` entry point): a pytest run
elsewhere sees none of its fixtures, options or hooks. It is enabled by
`labs/conftest.py` (`pytest_plugins = ["privlab.grade.plugin"]`, so a plain
`pytest labs/mmap` grades the repository's kernel), by `-p privlab.grade.plugin` (what
`privlab grade` passes to its test processes), or by the same `pytest_plugins` line in
the top-level conftest.py of any other tests. Its fixtures are prefixed `privlab_`, so
they never take the place of a project's own.

Fixtures
    privlab_images  (session)  the submission's built kernel, user programs and syscall
                               table; built once, shared by every test
    privlab_kernel  (function) a `KernelUnderTest`: `privlab_kernel.boot(prog, *args)`
                               gives a fresh machine; `.token` is this test's random token
    privlab_rng     (function) a `random.Random` seeded from the run's seed and the test
                               (the seed is shown on failure; --privlab-seed N repeats it)

Markers
    points(n, all_or_nothing=False)  on a test: its worth; on a class: the group's
                               worth, shared by its tests that carry no points of their own
    requires(name, ...)        run only if these tests (by function name) passed
    visibility(v)              Gradescope visibility (hidden tests default to after_published)
    smp(harts=None, seeds=None) run the test once per scheduling seed (default: the lab's
                               `seeds`) on that many harts (default: the lab's `smp`, 2
                               if it is 1); it passes only if it passes under every
                               seed, and its failure names each seed it failed under
                               with the `privlab run --smp N --smp-seed S` command
                               (harness/grade/seeds.py)

Options (set by `privlab grade`; a plain `pytest labs/mmap` builds the repository's
kernel): --privlab-images FILE, --privlab-build-error FILE,
--privlab-results FILE, --privlab-hidden DIR, --privlab-seed N,
--privlab-icount-shift N, --privlab-smp N, --privlab-smp-seeds K|S,S,... (defaults:
the `icount_shift`, `smp` and `seeds` of the lab.toml above the test).
"""

from __future__ import annotations

import json
import random
import secrets
import zlib
from collections.abc import Generator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ..errors import BadInput
from ..pace import DEFAULT_ICOUNT_SHIFT
from ..paths import KERNEL_DIR, REPO_ROOT, USERLAND_DIR
from .errors import BuildFailed, GradeFailure
from .labs import Lab, load_lab
from .memlimit import memory_line
from .model import FAILED, PASSED, TestResult, apply_groups, format_points, keep_ends
from .ordering import prerequisites_first
from .seed_runs import run_under_seeds
from .seeds import (
    DEFAULT_SEEDS,
    SeedPlan,
    SeedsFailed,
    parse_harts,
    parse_seeds_option,
    plan_from_mark,
)
from .under_test import KernelImages, KernelUnderTest

__all__ = ["Recorder"]

MARKERS = (
    "points(n, all_or_nothing=False): a graded test's worth, or a class group's",
    "requires(*names): run only if these graded tests passed",
    "visibility(v): Gradescope visibility of this test",
    "smp(harts=None, seeds=None): run this test once per scheduling seed on several harts",
)
OUTPUT_MAX = 20_000  # characters of failure output kept per test


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("privlab", "privlab lab grading")
    group.addoption("--privlab-images", metavar="FILE",
                    help="images.json of an already built submission")
    group.addoption("--privlab-build-error", metavar="FILE",
                    help="the submission did not build: this file holds the compiler output")
    group.addoption("--privlab-arch", default="rv64", help="rv64 (default) or rv32")
    group.addoption("--privlab-results", metavar="FILE", help="write per-test results here")
    group.addoption("--privlab-hidden", action="append", default=[], metavar="DIR",
                    help="tests under DIR are hidden tests")
    group.addoption("--privlab-icount-shift", type=int, metavar="N",
                    help="guest time per instruction in every boot: 2^N ns (default: "
                         "the icount_shift of the lab.toml above the test file, or the "
                         "default pace)")
    group.addoption("--privlab-smp", type=_harts_option, metavar="N",
                    help="harts in every boot (default: the smp of the lab.toml above "
                         "the test file, or 1)")
    group.addoption("--privlab-smp-seeds", type=parse_seeds_option, metavar="K|S,S,...",
                    help="the scheduling seeds of tests marked smp: a count K (seeds 0 "
                         "to K-1) or seeds separated by commas (default: the seeds of "
                         "the lab.toml above the test file, or 4)")
    group.addoption("--privlab-seed", type=int, metavar="N",
                    help="derive each test's random parameters from N (to reproduce a run)")


SEED = pytest.StashKey[int]()
PLAN = pytest.StashKey[SeedPlan]()


def _harts_option(text: str) -> int:
    try:
        return parse_harts(int(text, 0), "--privlab-smp")
    except BadInput as e:
        raise ValueError(str(e)) from None


def pytest_configure(config: pytest.Config) -> None:
    seed = config.getoption("--privlab-seed")
    config.stash[SEED] = secrets.randbits(31) if seed is None else seed
    for line in MARKERS:
        config.addinivalue_line("markers", line)
    config.pluginmanager.register(Recorder(config), "privlab-recorder")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A lab's `hidden/` directory (beside its lab.toml) is collected only when asked
    for by name."""
    if (collection_path.name != "hidden" or not collection_path.is_dir()
            or not (collection_path.parent / "lab.toml").is_file()):
        return None
    wanted = [Path(d).resolve() for d in config.getoption("--privlab-hidden")]
    wanted += [Path(a.split("::")[0]).resolve() for a in config.args]
    path = collection_path.resolve()
    return not any(w == path or path in w.parents for w in wanted)


# -- fixtures ---------------------------------------------------------------------------
@pytest.fixture(scope="session")
def privlab_images(request: pytest.FixtureRequest) -> KernelImages:
    """The built images (kernel, firmware, user programs, syscall table), built once per
    session: those `privlab grade` built for the submission it grades
    (--privlab-images), else this repository's own (a plain `pytest labs/mmap`, built
    as `privlab build` builds it). A submission that did not build fails every test
    that uses them, with the compiler's output."""
    config = request.config
    error = config.getoption("--privlab-build-error")
    if error:
        raise BuildFailed(Path(error).read_text())
    prebuilt = config.getoption("--privlab-images")
    if prebuilt:
        return KernelImages.load(Path(prebuilt))
    return _repository_images(config.getoption("--privlab-arch"))


def _repository_images(arch: str) -> KernelImages:
    """This repository's kernel and user programs, from the ordinary cached build: the
    grader's own sources need no sealed staging (`privlab grade` stages and seals a
    submission's build before any test process starts, harness/course/)."""
    from ..build.images import build_images
    from ..errors import BuildError

    try:
        built = build_images(arch, kernel_dir=KERNEL_DIR, userland_dir=USERLAND_DIR,
                             listings=False)
    except BuildError as e:
        raise BuildFailed(f"{e.message}\n{e.output}".rstrip()) from None
    return KernelImages(built.firmware, built.kernel, dict(built.users),
                        KERNEL_DIR / "syscall.tbl", REPO_ROOT)


@pytest.fixture
def privlab_kernel(privlab_images: KernelImages,
                   request: pytest.FixtureRequest) -> Iterator[KernelUnderTest]:
    """The submission's kernel, a `privlab.grade.KernelUnderTest`, fresh for each test:
    `.boot(PROG, *ARGS)` gives a new machine booted with `init=PROG ARGS` (a
    `KernelRun`), `.run(...)` also runs it to power-off, and `.token` is this test's
    random token (test programs print `PASS <token>`). Its boots have the lab's `smp`
    harts; in a test marked smp, `.smp` and `.smp_seed` are the current seed's."""
    shift = request.config.getoption("--privlab-icount-shift")
    under_test = KernelUnderTest(privlab_images, icount_shift=lab_icount_shift(
        Path(str(request.path))) if shift is None else shift)
    under_test.smp = _lab_harts(request.node)
    plan = smp_plan(request.node)
    if plan is not None:            # the first seed's; pytest_pyfunc_call sets the others
        under_test.smp, under_test.smp_seed = plan.harts, plan.seeds[0]
    yield under_test
    under_test.close()


def _nearest_lab(test_file: Path) -> Lab | None:
    for directory in test_file.parents:
        if (directory / "lab.toml").is_file():
            return load_lab(directory)
    return None


def lab_icount_shift(test_file: Path) -> int:
    """The icount_shift of the nearest lab.toml above a test file (privlab's default
    pace without one)."""
    lab = _nearest_lab(test_file)
    return DEFAULT_ICOUNT_SHIFT if lab is None else lab.icount_shift


def _lab_harts(item: pytest.Item) -> int:
    """--privlab-smp, else the smp of the nearest lab.toml above the test, else 1."""
    harts = item.config.getoption("--privlab-smp")
    if harts is None:
        lab = _nearest_lab(Path(str(item.path)))
        harts = 1 if lab is None else lab.smp
    return int(harts)


def _lab_seeds(item: pytest.Item) -> tuple[int, ...]:
    seeds = item.config.getoption("--privlab-smp-seeds")
    if seeds is None:
        lab = _nearest_lab(Path(str(item.path)))
        seeds = DEFAULT_SEEDS if lab is None else lab.seeds
    return tuple(seeds)


def smp_plan(item: pytest.Item) -> SeedPlan | None:
    """The harts and seeds of a test marked smp (None for a test run once): the mark's,
    else the lab's (harness/grade/seeds.py). A bad mark is a GradeFailure."""
    if PLAN in item.stash:
        return item.stash[PLAN]
    mark = item.get_closest_marker("smp")
    if mark is None:
        return None
    plan = plan_from_mark(mark.args, dict(mark.kwargs), _lab_harts(item), _lab_seeds(item))
    item.stash[PLAN] = plan
    return plan


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A test marked smp: called once per seed of its plan (all of them, whatever
    fails), failing with every seed it failed under."""
    plan = smp_plan(pyfuncitem)
    if plan is None:
        return None
    funcargs = pyfuncitem.funcargs
    testargs = {name: funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    kernel = funcargs.get("privlab_kernel")
    rng = funcargs.get("privlab_rng")
    failures = run_under_seeds(
        plan, lambda: pyfuncitem.obj(**testargs),
        kernel if isinstance(kernel, KernelUnderTest) else None,
        rng if isinstance(rng, random.Random) else None)
    if failures:
        raise SeedsFailed(plan, failures)
    return True


def seed_key(item: pytest.Item) -> str:
    """What a test's random stream is keyed on besides the run's seed: its file's name
    and its name in that file. Not the whole node id, which starts with the path from
    the rootdir: that moves when hidden tests live elsewhere (Gradescope) or pytest
    runs from another directory, and the student's `--seed N` must draw what the
    course's run drew."""
    return f"{Path(str(item.path)).name}::{item.nodeid.partition('::')[2]}"


@pytest.fixture
def privlab_rng(request: pytest.FixtureRequest) -> random.Random:
    """A `random.Random` for this test's parameters, seeded from the run's seed and the
    test's file and name: a failure names the seed, and `--privlab-seed N` (`privlab
    grade --seed N`) draws the same parameters again."""
    base = request.config.stash[SEED]
    request.node.user_properties.append(("seed", base))
    return random.Random(zlib.crc32(f"{base}:{seed_key(request.node)}".encode()))


# -- what each test is worth --------------------------------------------------------------
def _own_mark(node: Any, name: str) -> pytest.Mark | None:
    return next((m for m in getattr(node, "own_markers", []) if m.name == name), None)


def _class_node(item: pytest.Item) -> Any:
    return item.getparent(pytest.Class)


def _title(obj: Any) -> str:
    doc = (getattr(obj, "__doc__", None) or "").strip()
    return doc.splitlines()[0] if doc else ""


def _points(item: pytest.Item, group_mark: pytest.Mark | None, share: float) -> float:
    """The test's own points, else its share of its class group, else its module's."""
    mark = _own_mark(item, "points")
    if mark is not None:
        return float(mark.args[0])
    if group_mark is not None:
        return share
    module_mark = _own_mark(item.getparent(pytest.Module), "points")
    return float(module_mark.args[0]) if module_mark is not None else 0.0


def _visibility(item: pytest.Item, hidden_dirs: list[Path]) -> str:
    mark = item.get_closest_marker("visibility")
    if mark is not None:
        return str(mark.args[0])
    path = Path(str(item.path)).resolve()
    hidden = any(d == path or d in path.parents for d in hidden_dirs)
    return "after_published" if hidden else "visible"


def describe(items: list[pytest.Item], hidden_dirs: list[Path]) -> dict[str, TestResult]:
    """Each item's TestResult as it stands before running: max score, group, visibility."""
    out: dict[str, TestResult] = {}
    order = {item.nodeid: n for n, item in enumerate(items)}
    by_class: dict[Any, list[pytest.Item]] = {}
    for item in items:
        by_class.setdefault(_class_node(item), []).append(item)
    for cls_node, members in by_class.items():
        group_mark = _own_mark(cls_node, "points") if cls_node is not None else None
        share, group, strict = 0.0, "", False
        if group_mark is not None:
            own = [_own_mark(m, "points") for m in members]
            given = sum(float(mk.args[0]) for mk in own if mk is not None)
            unspecified = sum(1 for mk in own if mk is None)
            share = (float(group_mark.args[0]) - given) / unspecified if unspecified else 0.0
            group = _title(getattr(cls_node, "obj", None)) or cls_node.name
            strict = bool(group_mark.kwargs.get("all_or_nothing", False))
        for item in members:
            out[item.nodeid] = TestResult(
                name=item.name, max_score=_points(item, group_mark, share), nodeid=item.nodeid,
                title=_title(getattr(item, "obj", None)), group=group, all_or_nothing=strict,
                visibility=_visibility(item, hidden_dirs), output="not run",
                order=order[item.nodeid])
    return out


def _requires(item: pytest.Item) -> list[str]:
    return [str(n) for m in item.iter_markers("requires") for n in m.args]


def _failure_text(call: pytest.CallInfo[None], report: pytest.TestReport) -> str:
    excinfo = call.excinfo
    if excinfo is None:
        return report.longreprtext
    exc = excinfo.value
    if isinstance(exc, GradeFailure):
        return str(exc)
    if isinstance(exc, BuildFailed):
        return str(exc)
    if isinstance(exc, AssertionError):
        return excinfo.exconly()
    if isinstance(exc, pytest.skip.Exception):
        return str(exc.msg)
    if isinstance(exc, MemoryError):        # the guest's run reached the grading's limit
        return memory_line()
    # The headline names the error itself (the scoreboard shows one line).
    last = next((line for line in reversed(report.longreprtext.splitlines())
                 if line.startswith("E ")), "").removeprefix("E").strip()
    headline = f"grader error in this test: {last}" if last else "grader error in this test:"
    return f"{headline}\n{keep_ends(report.longreprtext, 4000)}"


def with_prerequisites(collected: list[pytest.Item], selected: list[pytest.Item]
                       ) -> list[pytest.Item]:
    """`selected` plus every collected test they require, directly or not, in
    collection order: `-k test_child` grades test_child as a full run would (it scores
    only if test_parent passes too), instead of failing it as "not run"."""
    by_name = {item.name: item for item in collected}
    wanted = {id(item) for item in selected}
    todo = list(selected)
    while todo:
        for name in _requires(todo.pop()):
            needed = by_name.get(name)
            if needed is not None and id(needed) not in wanted:
                wanted.add(id(needed))
                todo.append(needed)
    return [item for item in collected if id(item) in wanted]


# -- recording ----------------------------------------------------------------------------
class Recorder:
    """Collects a TestResult per graded test and writes them as JSON as they come."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.results: dict[str, TestResult] = {}
        self.names: dict[str, str] = {}   # function name -> nodeid, for requires
        self.path = config.getoption("--privlab-results")
        self.active = False

    @pytest.hookimpl(wrapper=True)  # around -k/-m deselection: only what will run counts
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config,
                                      items: list[pytest.Item]) -> Generator[None, None, None]:
        collected = list(items)
        yield
        items[:] = with_prerequisites(collected, items)
        items[:] = prerequisites_first(items, lambda i: i.name, _requires)
        hidden = [Path(d).resolve() for d in config.getoption("--privlab-hidden")]
        # Worth is computed over everything collected: a group's share does not grow
        # when -k leaves some of its children out.
        described = describe(collected, hidden)
        self.active = bool(self.path) or any(r.max_score for r in described.values())
        self.results = {i.nodeid: described[i.nodeid] for i in items}
        self.names = {i.name: i.nodeid for i in items}
        self._write(complete=False)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        for name in _requires(item):
            nodeid = self.names.get(name)
            needed = self.results.get(nodeid) if nodeid else None
            if needed is None or not needed.passed:
                pytest.skip(f"not run: it requires {name}, which did not pass")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        current = self.results.get(item.nodeid)
        if current is None:
            return report
        failed = report.failed or (report.skipped and report.when in ("setup", "call"))
        if failed:
            text = _failure_text(call, report)
            seeds = [str(v) for k, v in item.user_properties if k == "seed"]
            if seeds:
                text += f"\n(random seed {seeds[0]}: --seed {seeds[0]} repeats this run)"
            self.results[item.nodeid] = _with_seeds(
                _finish(current, FAILED, 0.0, text, call.duration), item, call)
        elif report.when == "call" and report.passed:
            self.results[item.nodeid] = _with_seeds(
                _finish(current, PASSED, current.max_score, "", call.duration), item, call)
        return report

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self._write(complete=False)

    def pytest_sessionfinish(self) -> None:
        self._write(complete=True)

    def _write(self, *, complete: bool) -> None:
        if not self.path:
            return
        data = {"complete": complete,
                "tests": [r.to_json() for r in self.results.values()]}
        tmp = Path(f"{self.path}.tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(self.path)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.active or not self.results:
            return
        results = apply_groups(self.results.values())
        score = sum(r.score for r in results)
        total = sum(r.max_score for r in results)
        terminalreporter.write_line(f"Points {format_points(score)}/{format_points(total)}")


def _with_seeds(result: TestResult, item: pytest.Item, call: pytest.CallInfo[None]
                ) -> TestResult:
    """A test marked smp: the harts and seeds it ran under, and those it failed under."""
    plan = item.stash.get(PLAN, None)
    if plan is None or result.seeds or call.when != "call":
        return result
    error = call.excinfo.value if call.excinfo is not None else None
    failed = tuple(f.seed for f in error.failures) if isinstance(error, SeedsFailed) else ()
    return replace(result, harts=plan.harts, seeds=plan.seeds, failed_seeds=failed)


def _finish(current: TestResult, status: str, score: float, output: str,
            duration: float) -> TestResult:
    if current.ran and current.status == FAILED:
        # A teardown error after a failure: keep the first failure's explanation.
        return current
    return replace(current, status=status, score=score, output=keep_ends(output, OUTPUT_MAX),
                   duration=round(current.duration + duration, 3), ran=True)
