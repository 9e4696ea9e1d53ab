"""Which candidates to measure next: exhaustive when the space fits the
budget, else the default and the cost model's favourites first, then a
local search (hill climbing over one-step neighbours of the best so far, a
seeded random restart when they are all measured).

Why not Optuna: the space is small per dimension and ordered (sizes), the
tiling model already ranks the sizes, and one-step neighbours of the best
exploit that order directly; Optuna's TPE would add a dependency and, with
parallel batches, needs its own constant-liar bookkeeping for the same effect.
The search is deterministic for a seed: batches are chosen from the results
of the previous batches only, whatever order workers return them in."""

from __future__ import annotations

import random
from collections.abc import Mapping

from pypto_mlir.tune.space import Config, SearchSpace


class LocalSearch:
    """Proposes batches of unmeasured configurations (see the module docstring)."""

    def __init__(self, space: SearchSpace, budget: int, seed: int = 0) -> None:
        self.space = space
        self.budget = budget
        self.rng = random.Random(seed)
        self.proposed: dict[Config, int] = {}
        """Each configuration proposed, with its order."""
        self.exhaustive = space.size <= budget

    def _seeds(self) -> list[Config]:
        default = self.space.default()
        seeds = [default]
        for index, dimension in enumerate(self.space.dimensions):
            for value in dimension.ranked:
                seeds.append(self.space.with_value(default, index, value))
        return seeds

    def next_batch(
        self, size: int, cycles: Mapping[Config, int | None]
    ) -> list[Config]:
        """Up to `size` new configurations, given the cycles measured so far
        (None: failed); empty when the space or the budget is exhausted."""
        size = min(size, self.budget - len(self.proposed))
        if size <= 0:
            return []
        if self.exhaustive:
            ordered = self._seeds() + list(self.space.all())
            return self._take(ordered, size)
        batch = self._take(self._seeds(), size)
        if batch:
            return batch
        measured = sorted(
            (
                (c, self.proposed.get(config, 0), config)
                for config, c in cycles.items()
                if c is not None
            ),
            key=lambda item: item[:2],
        )
        for _, _, best in measured:
            batch = self._take(list(self.space.neighbours(best)), size)
            if batch:
                return batch
        tries = 0
        while len(batch) < size and tries < 100 * size:
            tries += 1
            batch += self._take([self.space.sample(self.rng)], 1)
        return batch

    def _take(self, candidates: list[Config], size: int) -> list[Config]:
        taken: list[Config] = []
        for config in candidates:
            if len(taken) == size:
                break
            if config not in self.proposed:
                self.proposed[config] = len(self.proposed)
                taken.append(config)
        return taken
