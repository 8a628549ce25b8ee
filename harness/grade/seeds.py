"""Scheduling seeds: a graded test run once per seed on several harts, and the report
of the seeds it failed under.

On a `--smp N` machine the harts take turns in an order and for quanta that a seed
decides (harness/machine/schedule.py), so one seed is one interleaving, the same in
every run. A test marked `smp` runs once per seed of its plan; it passes only if it
passes under every seed, and a failure names each seed it failed under with the
`privlab run ... --smp N --smp-seed S` command that boots that interleaving again.

lab.toml (both optional):

    smp = 2              # the harts of every boot in the lab's tests: 1 to 8 (default 1)
    seeds = 8            # the seeds of the tests marked smp: 8 means 0 to 7 (default 4)
    seeds = [0, 7, 42]   # or these seeds (1 to 64 distinct integers, 0 to 2^64-1)

In a test file:

    @pytest.mark.smp                 # the lab's seeds, on the lab's harts (2 if it has 1)
    @pytest.mark.smp(3, seeds=16)    # seeds 0 to 15 on 3 harts, whatever lab.toml says
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import BadInput
from ..machine.schedule import MAX_HARTS
from .errors import GradeFailure

__all__ = ["DEFAULT_SEEDS", "MAX_SEEDS", "SeedFailure", "SeedPlan", "SeedsFailed",
           "check_smp_seed", "format_seeds", "parse_harts", "parse_seeds", "parse_seeds_option",
           "plan_from_mark", "reason_of", "seeds_option", "text_of"]

MAX_SEEDS = 64
MAX_SEED = (1 << 64) - 1               # what --smp-seed takes
DEFAULT_SEEDS = (0, 1, 2, 3)
SMP_MARK_HARTS = 2                     # a test marked smp in a lab of one hart
MESSAGE_WIDTH = 200                    # characters of each seed's one-line reason
TRACEBACK_TAIL = 4000


def check_smp_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise BadInput(f"a scheduling seed must be an integer from 0 to 2^64-1, not {seed!r}")


def parse_harts(value: object, what: str) -> int:
    """`value` as a number of harts, else BadInput naming `what` (`lab.toml: smp`)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_HARTS:
        raise BadInput(f"{what} must be an integer from 1 to {MAX_HARTS} harts, "
                       f"not {value!r}")
    return value


def parse_seeds(value: object, what: str) -> tuple[int, ...]:
    """`value` as a tuple of seeds: a count K (seeds 0 to K-1) or a list of distinct
    seeds; else BadInput naming `what` (`lab.toml: seeds`)."""
    why = (f"{what} must be a number of seeds from 1 to {MAX_SEEDS} or a list of 1 to "
           f"{MAX_SEEDS} distinct integers from 0 to 2^64-1, not {value!r}")
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= MAX_SEEDS:
            raise BadInput(why)
        return tuple(range(value))
    if not isinstance(value, (list, tuple)) or not 1 <= len(value) <= MAX_SEEDS:
        raise BadInput(why)
    for seed in value:
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise BadInput(why)
    if len(set(value)) != len(value):
        raise BadInput(why)
    return tuple(value)


def parse_seeds_option(text: str) -> tuple[int, ...]:
    """`--privlab-smp-seeds`: a count (`8`) or seeds separated by commas (`0,7,42`)."""
    try:
        words = [int(w, 0) for w in text.split(",") if w.strip()]
    except ValueError:
        raise ValueError(f"not a count or a list of seeds: {text!r}") from None
    try:
        return parse_seeds(words[0] if "," not in text else words, "--privlab-smp-seeds")
    except BadInput as e:
        raise ValueError(str(e)) from None


def format_seeds(seeds: Sequence[int]) -> str:
    """Seeds as people read them: runs of consecutive seeds as ranges (`0-3, 7`)."""
    parts: list[str] = []
    i = 0
    while i < len(seeds):
        j = i
        while j + 1 < len(seeds) and seeds[j + 1] == seeds[j] + 1:
            j += 1
        parts.append(f"{seeds[i]}-{seeds[j]}" if j > i + 1 else
                     ", ".join(str(s) for s in seeds[i:j + 1]))
        i = j + 1
    return ", ".join(parts)


def seeds_option(seeds: Sequence[int]) -> str:
    """What `parse_seeds_option` reads back as `seeds`."""
    return ",".join(str(s) for s in seeds) + ("," if len(seeds) == 1 else "")


@dataclass(frozen=True)
class SeedPlan:
    """The harts a test marked smp boots and the seeds it runs under, in order."""

    harts: int
    seeds: tuple[int, ...]


def plan_from_mark(args: Sequence[Any], kwargs: dict[str, Any], lab_harts: int,
                   lab_seeds: tuple[int, ...]) -> SeedPlan:
    """The plan of `@pytest.mark.smp(harts=None, seeds=None)` in a lab of `lab_harts`
    harts and `lab_seeds`; a bad mark is a GradeFailure (a grader error)."""
    unknown = set(kwargs) - {"harts", "seeds"}
    try:
        if unknown or len(args) > 1 or (args and "harts" in kwargs):
            raise BadInput("the smp mark takes smp(harts=None, seeds=None), not "
                           f"smp({', '.join([*map(repr, args), *map(str, kwargs)])})")
        harts = args[0] if args else kwargs.get("harts")
        harts = (parse_harts(harts, "smp(harts=...)") if harts is not None
                 else lab_harts if lab_harts > 1 else SMP_MARK_HARTS)
        seeds = kwargs.get("seeds")
        return SeedPlan(harts, lab_seeds if seeds is None
                        else parse_seeds(seeds, "smp(seeds=...)"))
    except BadInput as e:
        raise GradeFailure(f"grader error: {e}") from None


@dataclass(frozen=True)
class SeedFailure:
    """How a test failed under one seed: its reason in one line, the whole text, and
    the rerun command of each machine it booted under that seed."""

    seed: int
    reason: str
    text: str
    commands: tuple[str, ...]


class SeedsFailed(GradeFailure):
    """A test failed under some of its seeds: the text names each of them."""

    def __init__(self, plan: SeedPlan, failures: Sequence[SeedFailure]) -> None:
        self.plan = plan
        self.failures = list(failures)
        super().__init__(_summary(plan, self.failures))


def _summary(plan: SeedPlan, failures: list[SeedFailure]) -> str:
    """The first failing seed's reason (the headline: the scoreboard's "why"), every
    failing seed with its reason and rerun command, the seeds that passed, then the
    first failing seed's whole account (the others are usually the same bug; each can
    be seen in full by running its command)."""
    failed = [f.seed for f in failures]
    passed = [s for s in plan.seeds if s not in failed]
    lines = [failures[0].reason,
             f"failed under scheduling seed{'s' * (len(failed) > 1)} "
             f"{', '.join(map(str, failed))} ({len(failed)} of {len(plan.seeds)} on "
             f"{plan.harts} harts)"]
    for f in failures:
        lines.append(f"  seed {f.seed}: {f.reason}")
        lines += [f"    {command}" for command in f.commands]
    lines.append(f"passed under {format_seeds(passed)}" if passed else "passed under none")
    first = failures[0]
    lines += ["", f"seed {first.seed} in full:", first.text]
    return "\n".join(lines)


def reason_of(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "failed"
    return line if len(line) <= MESSAGE_WIDTH else line[:MESSAGE_WIDTH - 3] + "..."


def text_of(e: Exception) -> str:
    if isinstance(e, GradeFailure):
        return str(e)
    if isinstance(e, AssertionError):
        return f"AssertionError: {e}" if str(e) else "AssertionError"
    tail = "".join(traceback.format_exception(e))[-TRACEBACK_TAIL:]
    return f"grader error in this test:\n{tail}"
