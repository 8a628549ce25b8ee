"""Running a lab's tests over several worker processes with pytest-xdist.

`privlab grade --jobs N` (N > 1) runs one pytest with `-n N --dist loadgroup` and this
module as a plugin (`-p privlab.course.parallel`):

- tests tied by `requires` (directly or not) form one group, which the loadgroup
  scheduler hands to one worker whole, to run in collection order: a child sees its
  parent's result. The workers write the groups to `results.groups.json` as they
  collect; the scheduler here reads them. (xdist's own `xdist_group` marks work by
  renaming node ids, which pytest 9.2 no longer lets a plugin do.)
- each worker writes its results to its own file, `results.<worker>.json` beside the
  `--privlab-results` path (the controller collects nothing, so writes nothing);
- a test a worker died in is failed, not run again: xdist reports it failed and starts
  a new worker for the rest, and the scheduler here (loadgroup's, except that it does
  not queue the test that killed the worker once more, which would kill every new
  worker in turn) hands the rest of its chain to that worker; the controller appends
  each such test to `results.crashed.jsonl`;
- `merge_results` reads them back into one TestResult per test.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest

from ..grade.model import FAILED, TestResult

__all__ = ["CRASH_LOG", "GROUPS", "merge_results", "requires_groups", "worker_results"]

T = TypeVar("T")
CRASH_LOG = "results.crashed.jsonl"
GROUPS = "results.groups.json"
_BASE = pytest.StashKey[Path]()


def requires_groups(items: Sequence[T], name: Callable[[T], str],
                    requires: Callable[[T], list[str]]) -> list[list[T]]:
    """`items` split into the sets `requires` ties together (a union of chains), each
    in the original order; the sets come in the order of their first item."""
    parent = list(range(len(items)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    index = {name(item): i for i, item in enumerate(items)}
    for i, item in enumerate(items):
        for needed in requires(item):
            j = index.get(needed)
            if j is not None:
                parent[find(i)] = find(j)
    groups: dict[int, list[T]] = {}
    for i, item in enumerate(items):
        groups.setdefault(find(i), []).append(item)
    return list(groups.values())


def worker_results(results: Path, worker: str) -> Path:
    return results.with_name(f"results.{worker}.json")


def _requires(item: pytest.Item) -> list[str]:
    return [str(n) for m in item.iter_markers("requires") for n in m.args]


def _scheduler(config: pytest.Config, log: Any, groups: Path) -> Any:
    from xdist.scheduler import LoadGroupScheduling

    class Scheduling(LoadGroupScheduling):  # type: ignore[misc]
        """loadgroup with the `requires` groups, and the test a worker died in marked
        done (a crash is its result)."""

        _groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._groups is None:  # every worker wrote it before sending its collection
                try:
                    self._groups = dict(json.loads(groups.read_text()))
                except (OSError, ValueError):
                    self._groups = {}
            group = self._groups.get(nodeid)
            return group if group is not None else str(super()._split_scope(nodeid))

        def remove_node(self, node: Any) -> str | None:
            workload = self.assigned_work.get(node, {})
            crashed = next((nodeid for unit in workload.values()
                            for nodeid, done in unit.items() if not done), None)
            for scope, unit in list(workload.items()):
                if crashed in unit:
                    unit[crashed] = True
                    if all(unit.values()):
                        del workload[scope]
            super().remove_node(node)
            return crashed

    return Scheduling(config, log)


class _Controller:
    """On the controller: the scheduler, and one JSON line per test a worker died in."""

    def __init__(self, results: Path) -> None:
        self.path = results.with_name(CRASH_LOG)
        self.groups = results.with_name(GROUPS)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if config.getoption("dist", "no") != "loadgroup":
            return None
        return _scheduler(config, log, self.groups)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport,
                               sched: Any) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps({"nodeid": crashitem, "message": str(report.longrepr)}) + "\n")


@pytest.hookimpl(tryfirst=True)  # before the privlab plugin's Recorder reads the option
def pytest_configure(config: pytest.Config) -> None:
    results = config.getoption("--privlab-results", None)
    if not results:
        return
    worker = getattr(config, "workerinput", None)
    config.stash[_BASE] = Path(results)
    if worker is not None:
        config.option.privlab_results = str(worker_results(Path(results),
                                                           str(worker["workerid"])))
    elif config.getoption("dist", "no") != "no":
        config.option.privlab_results = None
        config.pluginmanager.register(_Controller(Path(results)),
                                      "privlab-xdist-controller")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]
                                  ) -> Generator[None, None, None]:
    # Grouped over everything collected, before -k: a prerequisite the privlab plugin
    # brings back after -k left it out is in its child's group.
    base = config.stash.get(_BASE, None)
    if base is not None and hasattr(config, "workerinput"):
        groups = {item.nodeid: f"requires:{members[0].nodeid}"
                  for members in requires_groups(items, lambda i: i.name, _requires)
                  if len(members) > 1 for item in members}
        path = base.with_name(GROUPS)
        temp = path.with_name(f".{path.name}.{config.workerinput['workerid']}.tmp")
        temp.write_text(json.dumps(groups))
        temp.replace(path)
    yield


def _read(path: Path) -> tuple[list[TestResult], bool]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return [], False
    return [TestResult.from_json(t) for t in data.get("tests", [])], bool(data.get("complete"))


def _crashes(path: Path) -> dict[str, str]:
    crashed: dict[str, str] = {}
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return crashed
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        crashed[str(entry["nodeid"])] = str(entry["message"])
    return crashed


def merge_results(results: Path) -> tuple[list[TestResult], bool]:
    """The tests of a run whose `--privlab-results` was `results`: one process's file,
    or every worker's (a test that ran in one worker and not in the others counts as
    ran), with the tests a worker crashed in failed. Also whether every file was
    complete (a crashed worker's is not)."""
    files = sorted(results.parent.glob("results.*.json"))
    if results.exists() or not files:
        files = [results, *files]
    merged: dict[str, TestResult] = {}
    complete = True
    for path in files:
        tests, done = _read(path)
        complete = complete and done
        for t in tests:
            have = merged.get(t.nodeid)
            if have is None or (t.ran and not have.ran):
                merged[t.nodeid] = t
    crashed = _crashes(results.with_name(CRASH_LOG))
    for nodeid, message in crashed.items():
        test = merged.get(nodeid)
        if test is not None and not test.ran:
            merged[nodeid] = replace(
                test, status=FAILED, score=0.0, ran=True,
                output=f"not run to its end: the test process running it died ({message}); "
                       "the tests after it ran in a new process")
    # A crashed worker's file is incomplete by nature; the run is complete when every
    # test it lost was accounted for by the crash log or another worker.
    if not complete and crashed and all(t.ran for t in merged.values()):
        complete = True
    return list(merged.values()), complete
