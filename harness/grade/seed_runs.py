"""Running one graded test under every seed of its plan (harness/grade/seeds.py holds
the plans and the failure report; this module drives the kernel under test through
them, so the plans need nothing of the kernel)."""

from __future__ import annotations

import random
from collections.abc import Callable

from .seeds import SeedFailure, SeedPlan, reason_of, text_of
from .tokens import new_token
from .under_test import KernelUnderTest

__all__ = ["run_under_seeds"]


def run_under_seeds(plan: SeedPlan, call: Callable[[], object],
                    kernel: KernelUnderTest | None,
                    rng: random.Random | None) -> list[SeedFailure]:
    """Call the test once per seed of `plan`, all of them whatever fails (a hang under
    one seed is that seed's failure, bounded by its run's instruction budget). Before
    each call, `kernel` has the plan's harts and the seed (the fixture set up the first
    seed's); before each later one, its machines are closed, it gets a fresh token, and
    `rng` draws the same parameters again: the seeds differ in the interleaving only.
    Outcomes that are not failures (pytest's skip) propagate."""
    state = rng.getstate() if rng is not None else None
    failures = []
    for n, seed in enumerate(plan.seeds):
        if kernel is not None:
            if n:
                kernel.close()
                kernel.token = new_token()
            kernel.smp, kernel.smp_seed = plan.harts, seed
        if n and rng is not None and state is not None:
            rng.setstate(state)
        try:
            call()
        except Exception as e:
            text = text_of(e)
            commands = tuple(run.rerun_command() for run in kernel.runs) if kernel else ()
            failures.append(SeedFailure(seed, reason_of(text), text, commands))
    return failures
