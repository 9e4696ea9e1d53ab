"""The search space: pypto-lower's own decisions, read from the pipeline's
dataclass fields (a new option is a new dimension without editing the tuner).

A field becomes a dimension through a provider: bool fields get one by
default (the default and its negation); sizes come from the tiling model
(`tile_sizes`, `matmul_tile_sizes`, with the candidates it prunes by capacity
and alignment counted), `max_cores` from the target. A pass that adds a
decision registers a provider for it with `register_dimension`; an option with
no provider is listed as not tuned. The default configuration is always a
candidate.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.passes.matmul_model import MatmulRequest
from pypto_mlir.passes.tiling_candidates import (
    matmul_size_candidates,
    recording_requests,
    vector_size_candidates,
)
from pypto_mlir.passes.tiling_model import VectorRequest
from pypto_mlir.passes.tv_sparse_to_tile import model_densities
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import Target
from pypto_mlir.tune.key import module_text

NOT_DECISIONS = frozenset({"target", "start_level", "tuned"})
"""Fields of the pipeline that say what to compile, not how."""

MATMUL_SIZE_LIMIT = 12
"""The best-ranked matmul tilings the space keeps."""


class SpaceError(ValueError):
    """A search space that cannot be searched: empty or inconsistent."""


Value = Any
Config = tuple[Value, ...]
"""One value per dimension, in the order of `SearchSpace.dimensions`."""


@dataclass(frozen=True)
class Dimension:
    """One decision: the pipeline field, its values in neighbourhood order
    (the local search moves to an adjacent one), the default among them."""

    name: str
    values: tuple[Value, ...]
    default: Value
    ranked: tuple[Value, ...] = ()
    """Values the cost model expects to be best, best first (search seeds)."""
    source: str = ""
    """Where the values come from, for the report."""


@dataclass
class SpaceContext:
    """What providers see: the kernel, its target, the default pipeline, the
    requests its nests were tiled from, and a tally of what they pruned."""

    module: ModuleOp
    entry: str
    target: Target
    pipeline: LowerPipeline
    requests: list[VectorRequest | MatmulRequest]
    pruned: Counter[str] = field(default_factory=Counter[str])

    def vector_requests(self) -> list[VectorRequest]:
        return [r for r in self.requests if isinstance(r, VectorRequest)]

    def matmul_requests(self) -> list[MatmulRequest]:
        return [r for r in self.requests if isinstance(r, MatmulRequest)]


Provider = Callable[[SpaceContext, dataclasses.Field[Any]], Dimension | None]
"""A field's dimension for this kernel, or None when it has no choice."""

_PROVIDERS: dict[str, Provider] = {}


def register_dimension(name: str, provider: Provider) -> None:
    """Make pipeline field `name` (its Python name) tunable by `provider`; a
    provider registered later replaces an earlier one."""
    _PROVIDERS[name] = provider


def _display(name: str) -> str:
    return name.replace("_", "-")


def bool_dimension(context: SpaceContext, item: dataclasses.Field[Any]) -> Dimension:
    default = getattr(context.pipeline, item.name)
    return Dimension(item.name, (default, not default), default, source="switch")


def _tile_sizes(
    context: SpaceContext, item: dataclasses.Field[Any]
) -> Dimension | None:
    ub = context.target.memories["ub"].size
    assert ub is not None
    sizes, pruned = vector_size_candidates(context.vector_requests(), ub)
    for reason, count in sorted(pruned.items()):
        context.pruned[f"tile-sizes: {reason}"] += count
    if not sizes:
        return None
    # smallest to largest, then the model's own choice (the largest that fits,
    # or a smaller one for the cores): its neighbour is the largest tile
    ordered = sorted(sizes, key=lambda rc: (rc[0] * rc[1], rc[1]))
    return Dimension(
        item.name,
        (*ordered, ()),
        (),
        ranked=tuple(sizes[:2]),
        source=f"tiling model, {len(context.vector_requests())} vector nest(s)",
    )


def _matmul_tile_sizes(
    context: SpaceContext, item: dataclasses.Field[Any]
) -> Dimension | None:
    sizes, pruned = matmul_size_candidates(
        context.target, context.matmul_requests(), MATMUL_SIZE_LIMIT
    )
    for reason, count in sorted(pruned.items()):
        context.pruned[f"matmul-tile-sizes: {reason}"] += count
    if not sizes:
        return None
    return Dimension(
        item.name,
        ((), *sizes),
        (),
        ranked=tuple(sizes[:3]),
        source=f"tiling model ranking, {len(context.matmul_requests())} matmul nest(s)",
    )


def _max_cores(context: SpaceContext, item: dataclasses.Field[Any]) -> Dimension | None:
    cores = context.target.cores
    if cores <= 1:
        return None
    counts = sorted({1 << i for i in range(cores.bit_length()) if 1 << i < cores})
    return Dimension(item.name, (*counts, 0), 0, source=f"1..{cores} cores")


def _sparse_dense_density(
    context: SpaceContext, item: dataclasses.Field[Any]
) -> Dimension | None:
    """Densities around the cost model's threshold of the dense fallback of
    CSR spmm (tv-sparse-to-tile; 0 is the model's own); the decades from
    0.1 % to 50 % where the model finds none."""
    densities = model_densities(context.module, context.target)
    if not densities:
        return None
    modelled = min((d for d in densities if d is not None), default=None)
    if modelled is None:
        around = [0.001, 0.01, 0.1, 0.5]
    else:
        around = [modelled * f for f in (0.25, 0.5, 2.0, 4.0)]
    values = sorted({round(min(d, 1.0), 6) for d in around if d > 0})
    return Dimension(
        item.name,
        (0.0, *values),
        0.0,
        source="cost model's dense-fallback density "
        + (
            "(none: dense never estimated faster)"
            if modelled is None
            else f"{modelled:.4%}"
        ),
    )


register_dimension("tile_sizes", _tile_sizes)
register_dimension("matmul_tile_sizes", _matmul_tile_sizes)
register_dimension("max_cores", _max_cores)
register_dimension("sparse_dense_density", _sparse_dense_density)


@dataclass(frozen=True)
class SearchSpace:
    """The dimensions, what was pruned before anything ran, and the options
    not tuned (and why)."""

    dimensions: tuple[Dimension, ...]
    pruned: dict[str, int]
    untuned: tuple[str, ...]

    @property
    def size(self) -> int:
        total = 1
        for dimension in self.dimensions:
            total *= len(dimension.values)
        return total

    def default(self) -> Config:
        return tuple(d.default for d in self.dimensions)

    def options(self, config: Config) -> dict[str, Value]:
        """The pipeline fields `config` sets away from their defaults."""
        return {
            d.name: v
            for d, v in zip(self.dimensions, config, strict=True)
            if v != d.default
        }

    def neighbours(self, config: Config) -> Iterator[Config]:
        """Configurations one step away along one dimension."""
        for index, dimension in enumerate(self.dimensions):
            position = dimension.values.index(config[index])
            for step in (-1, 1):
                other = position + step
                if 0 <= other < len(dimension.values):
                    yield (
                        *config[:index],
                        dimension.values[other],
                        *config[index + 1 :],
                    )

    def with_value(self, config: Config, name: str, value: Value) -> Config:
        index = next(i for i, d in enumerate(self.dimensions) if d.name == name)
        return (*config[:index], value, *config[index + 1 :])

    def sample(self, rng: random.Random) -> Config:
        return tuple(rng.choice(d.values) for d in self.dimensions)

    def all(self) -> Iterator[Config]:
        import itertools

        return itertools.product(*(d.values for d in self.dimensions))

    def describe(self) -> list[str]:
        lines = [
            f"{_display(d.name)}: {len(d.values)} values ({d.source})"
            for d in self.dimensions
        ]
        lines.append(f"{self.size} configurations")
        for reason, count in sorted(self.pruned.items()):
            lines.append(f"pruned before running: {count} x {reason}")
        lines += [f"not tuned: {u}" for u in self.untuned]
        return lines


def tunable_fields() -> list[dataclasses.Field[Any]]:
    """The pipeline's fields that are decisions (all but NOT_DECISIONS)."""
    return [f for f in dataclasses.fields(LowerPipeline) if f.name not in NOT_DECISIONS]


def build_space(
    module: ModuleOp,
    entry: str,
    target: Target,
    pipeline: LowerPipeline,
    only: Sequence[str] = (),
) -> SearchSpace:
    """The space of `module`'s lowering on `target` around `pipeline` (its
    options are the defaults); `only` restricts it to those option names
    (Python or pypto-opt spelling). Raises SpaceError for an unknown name, a
    provider's inconsistent dimension, or nothing to choose."""
    from pypto_mlir.check import lower

    fields = tunable_fields()
    names = {f.name for f in fields}
    wanted = {o.replace("-", "_") for o in only}
    unknown = sorted(wanted - names)
    if unknown:
        known = ", ".join(_display(n) for n in sorted(names))
        raise SpaceError(
            f"unknown option(s) to tune: {', '.join(_display(u) for u in unknown)} "
            f"(pypto-lower's decisions: {known})"
        )
    with recording_requests() as requests, diagnostic_handler(lambda _: None):
        baseline = module_text(lower(module, "tile", pipeline))
    context = SpaceContext(module, entry, target, pipeline, list(requests))
    dimensions: list[Dimension] = []
    untuned: list[str] = []
    for item in fields:
        if wanted and item.name not in wanted:
            continue
        provider = _PROVIDERS.get(item.name)
        if provider is None and isinstance(getattr(pipeline, item.name), bool):
            provider = bool_dimension
        if provider is None:
            untuned.append(f"{_display(item.name)} (no provider registered)")
            continue
        dimension = provider(context, item)
        if dimension is None:
            untuned.append(f"{_display(item.name)} (no choice for this kernel)")
            continue
        _check(dimension, names)
        if dimension.source == "switch" and _no_effect(
            module, pipeline, item.name, baseline
        ):
            context.pruned[f"{_display(item.name)}: no effect on the tile IR"] += 1
            continue
        dimensions.append(dimension)
    space = SearchSpace(
        tuple(dimensions), dict(sorted(context.pruned.items())), tuple(untuned)
    )
    if space.size <= 1:
        raise SpaceError(
            "empty search space: no option has a choice besides its default for "
            "this kernel and target"
            + (f" (not tuned: {'; '.join(untuned)})" if untuned else "")
        )
    return space


def _tile_level_fields() -> frozenset[str]:
    """Fields of the stages whose output is tv or tile IR (LOWER_STAGES)."""
    from pypto_mlir.pipelines import LOWER_STAGES

    early = [s for s in LOWER_STAGES if s.level in ("tv", "tile")]
    return frozenset(
        [s.enabled_by for s in early if s.enabled_by]
        + [f for s in early for f, _ in s.options]
    )


def _no_effect(
    module: ModuleOp, pipeline: LowerPipeline, name: str, baseline: str
) -> bool:
    """Whether flipping switch `name` alone leaves the tile IR as it is (only
    decided for switches of the stages up to the tile level)."""
    from pypto_mlir.check import lower
    from pypto_mlir.diagnostics import DiagnosticError

    if name not in _tile_level_fields():
        return False
    flipped = dataclasses.replace(pipeline, **{name: not getattr(pipeline, name)})
    try:
        with diagnostic_handler(lambda _: None):
            return module_text(lower(module, "tile", flipped)) == baseline
    except DiagnosticError:
        return False


def _check(dimension: Dimension, names: set[str]) -> None:
    """A provider's dimension must name a field and hold its default once."""
    if dimension.name not in names:
        raise SpaceError(
            f"inconsistent search space: dimension '{_display(dimension.name)}' is "
            "not an option of pypto-lower"
        )
    if dimension.values.count(dimension.default) != 1:
        raise SpaceError(
            f"inconsistent search space: the values of '{_display(dimension.name)}' "
            "must contain its default exactly once"
        )
    if len(set(map(repr, dimension.values))) != len(dimension.values):
        raise SpaceError(
            f"inconsistent search space: '{_display(dimension.name)}' repeats a value"
        )
    stray = [v for v in dimension.ranked if v not in dimension.values]
    if stray:
        raise SpaceError(
            f"inconsistent search space: '{_display(dimension.name)}' ranks "
            f"{stray[0]!r}, which is not one of its values"
        )
