"""Running a batch's gradings on Dask distributed: one task a submission, on a local
cluster (worker processes on this machine, the default) or on an existing cluster
(`--scheduler tcp://HOST:PORT`, whose workers need only privlab installed).

Tasks are submitted a window at a time, so a class of 1,000 is never packed into
memory at once. A worker that dies mid-grading loses nothing: the scheduler gives its
tasks to another worker (a task that kills three workers in turn ends as a
`KilledWorker` error, which the batch turns into that submission's grader error).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ..errors import BadInput

__all__ = ["run_tasks"]

T = TypeVar("T")
R = TypeVar("R")
WINDOW_PER_WORKER = 4     # tasks in flight per worker thread


@contextmanager
def _client(scheduler: str | None, workers: int | None, processes: bool) -> Iterator[Any]:
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as e:
            raise BadInput(f"no Dask scheduler answers at {scheduler}: {e}") from e
        with client:
            yield client
        return
    with LocalCluster(n_workers=workers or max(1, os.cpu_count() or 1), threads_per_worker=1,
                      processes=processes, dashboard_address=None,
                      # no dashboard; its HTTP server (health checks) on any free port,
                      # not 8787, which another cluster may hold
                      scheduler_kwargs={"dashboard_address": ":0"},
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        yield client


def _threads(client: Any) -> int:
    info = client.scheduler_info()
    return max(1, sum(int(w.get("nthreads", 1)) for w in info.get("workers", {}).values()))


def run_tasks(names: list[str], make_task: Callable[[str], T],
              finished: Callable[[str, R | BaseException], None], fn: Callable[[T], R], *,
              scheduler: str | None = None, workers: int | None = None,
              processes: bool = True) -> None:
    """Run `fn(make_task(name))` for every name on the cluster; `finished(name,
    result or exception)` as each ends, in this thread."""
    if not names:
        return
    from distributed import as_completed

    run = uuid.uuid4().hex[:8]
    with _client(scheduler, workers, processes) as client:
        window = WINDOW_PER_WORKER * _threads(client)
        pending = iter(enumerate(names))
        owner: dict[str, str] = {}

        def submit() -> Any | None:
            item = next(pending, None)
            if item is None:
                return None
            n, name = item
            future = client.submit(fn, make_task(name), key=f"privlab-grade-{run}-{n}",
                                   pure=False)
            owner[future.key] = name
            return future

        first = [f for f in (submit() for _ in range(window)) if f is not None]
        queue = as_completed(first)
        for future in queue:
            name = owner.pop(future.key)
            try:
                result: R | BaseException = future.result()
            except Exception as e:   # the task's own error, or KilledWorker
                result = e
            future.release()
            finished(name, result)
            following = submit()
            if following is not None:
                queue.add(following)
