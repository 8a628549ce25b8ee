"""Deterministic scheduling of several harts: who runs next, and for how long.

The harts of a `--smp N` machine take turns on the host, one at a time. Each round
runs every hart once, in an order shuffled by a seeded generator, each for a quantum
of instructions drawn from the same generator: QUANTUM_MIN to QUANTUM_MAX (the mean
is about QUANTUM_MEAN). The generator is SplitMix64, written out here rather than
Python's `random`, so an interleaving is a pure function of the seed whatever the
Python version: the same image, input and `--smp-seed` give the same interleaving,
and so the same trace, every time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import BadInput

__all__ = ["DEFAULT_SMP_SEED", "MAX_HARTS", "QUANTUM_MAX", "QUANTUM_MIN", "Schedule",
           "check_smp"]

MAX_HARTS = 8
DEFAULT_SMP_SEED = 0
QUANTUM_MIN = 2_000
QUANTUM_MAX = 18_000
QUANTUM_MEAN = (QUANTUM_MIN + QUANTUM_MAX) // 2
_M64 = (1 << 64) - 1


def check_smp(harts: int) -> None:
    """QEMU's virt board takes up to 8 harts in one socket."""
    if not 1 <= harts <= MAX_HARTS:
        raise BadInput(f"--smp must be 1 to {MAX_HARTS} harts, not {harts}")


@dataclass
class Schedule:
    """The sequence of (hart, quantum) turns for `harts` harts under `seed`."""

    harts: int
    seed: int = DEFAULT_SMP_SEED
    _state: int = field(init=False)
    _round: list[int] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        check_smp(self.harts)
        self._state = self.seed & _M64

    def _next64(self) -> int:
        """SplitMix64 (Steele, Lea and Flood, 2014)."""
        self._state = (self._state + 0x9E3779B97F4A7C15) & _M64
        z = self._state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
        return z ^ (z >> 31)

    def _below(self, n: int) -> int:
        return self._next64() % n

    def next_turn(self) -> tuple[int, int]:
        """The hart to run next and its quantum in instructions."""
        if not self._round:
            order = list(range(self.harts))
            for i in range(self.harts - 1, 0, -1):      # Fisher-Yates
                j = self._below(i + 1)
                order[i], order[j] = order[j], order[i]
            self._round = order[::-1]
        hart = self._round.pop()
        return hart, QUANTUM_MIN + self._below(QUANTUM_MAX - QUANTUM_MIN + 1)
