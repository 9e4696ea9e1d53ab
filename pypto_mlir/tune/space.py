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
from pypto_mlir.dialects import tensor_view as tv
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
    nest: int | None = None
    """For `nest_tile_sizes`: the vector nest this dimension sizes (its values
    (ROWS, COLS), () for the model's); the field's value gathers them."""

    @property
    def label(self) -> str:
        """The option as pypto-lower spells it, `[nest]` for a per-nest one."""
        suffix = f"[{self.nest}]" if self.nest is not None else ""
        return _display(self.name) + suffix


@dataclass
class SpaceContext:
    """What providers see: the kernel, its target, the default pipeline, the
    requests its nests were tiled from, and a tally of what they pruned."""

    module: ModuleOp
    entry: str
    target: Target
    pipeline: LowerPipeline
    requests: list[VectorRequest | MatmulRequest]
    baseline: str
    """The kernel's tile IR with the default options."""
    pruned: Counter[str] = field(default_factory=Counter[str])

    def vector_requests(self) -> list[VectorRequest]:
        return [r for r in self.requests if isinstance(r, VectorRequest)]

    def matmul_requests(self) -> list[MatmulRequest]:
        return [r for r in self.requests if isinstance(r, MatmulRequest)]


Provider = Callable[
    [SpaceContext, dataclasses.Field[Any]], Dimension | Sequence[Dimension] | str | None
]
"""A field's dimension(s) for this kernel (several for a per-nest field), or
why it has none (a text, or None: no choice for this kernel)."""

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


def _vector_sizes(
    sizes: list[tuple[int, int]],
    name: str,
    source: str,
    nest: int | None = None,
) -> Dimension:
    # smallest to largest, then the model's own choice (the largest that fits,
    # or a smaller one for the cores): its neighbour is the largest tile
    ordered = sorted(sizes, key=lambda rc: (rc[0] * rc[1], rc[1]))
    return Dimension(
        name, (*ordered, ()), (), ranked=tuple(sizes[:2]), source=source, nest=nest
    )


def _tile_sizes(
    context: SpaceContext, item: dataclasses.Field[Any]
) -> Dimension | str | None:
    requests = context.vector_requests()
    if len(requests) > 1:
        return f"{len(requests)} vector nests: sized per nest by nest-tile-sizes"
    ub = context.target.memories["ub"].size
    assert ub is not None
    sizes, pruned = vector_size_candidates(requests, ub)
    for reason, count in sorted(pruned.items()):
        context.pruned[f"tile-sizes: {reason}"] += count
    if not sizes:
        return None
    return _vector_sizes(sizes, item.name, "tiling model, 1 vector nest")


def _nest_tile_sizes(
    context: SpaceContext, item: dataclasses.Field[Any]
) -> list[Dimension] | str | None:
    """One dimension per vector nest (two or more; one nest is `tile-sizes`),
    its sizes enumerated and pruned for that nest's request alone."""
    requests = context.vector_requests()
    if len(requests) < 2:
        return "one vector nest or none: tile-sizes sizes it" if requests else None
    ub = context.target.memories["ub"].size
    assert ub is not None
    dimensions: list[Dimension] = []
    for nest, request in enumerate(requests):
        sizes, pruned = vector_size_candidates([request], ub)
        for reason, count in sorted(pruned.items()):
            context.pruned[f"nest-tile-sizes[{nest}]: {reason}"] += count
        if sizes:
            source = f"tiling model, vector nest {nest}"
            dimensions.append(_vector_sizes(sizes, item.name, source, nest))
    return dimensions or None


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


def probed_dimension(
    context: SpaceContext,
    item: dataclasses.Field[Any],
    values: Sequence[Value],
    source: str,
) -> Dimension | None:
    """A dimension of field `item`: its default and those of `values` that the
    passes take and that tile the kernel differently from the default and from
    each other, found by lowering to tile IR with each (a value refused is
    pruned as `capacity` when it does not fit, `alignment` when it breaks the
    alignment, `refused` otherwise). None when no value is left. How an int or
    float decision without a model of its own (a block size, a threshold) gets
    a provider."""
    from pypto_mlir.check import lower
    from pypto_mlir.diagnostics import DiagnosticError

    default = getattr(context.pipeline, item.name)
    seen = {context.baseline}
    kept: list[Value] = []
    for value in values:
        if value == default or value in kept:
            continue
        changed = dataclasses.replace(context.pipeline, **{item.name: value})
        try:
            with diagnostic_handler(lambda _: None):
                text = module_text(lower(context.module, "tile", changed))
        except DiagnosticError as error:
            message = error.diagnostic.message
            reason = (
                "capacity"
                if "does not fit" in message or "holds" in message
                else "alignment"
                if "multiple" in message or "alignment" in message
                else "refused"
            )
            context.pruned[f"{_display(item.name)}: {reason}"] += 1
            continue
        if text in seen:
            context.pruned[f"{_display(item.name)}: same tiling"] += 1
            continue
        seen.add(text)
        kept.append(value)
    if not kept:
        return None
    ordered = sorted([default, *kept])
    return Dimension(item.name, tuple(ordered), default, source=source)


def _sparse_tile_cols(
    context: SpaceContext, item: dataclasses.Field[Any]
) -> Dimension | str | None:
    """Powers of two up to the widest dense operand of a sparse op, and that
    width, probed (`probed_dimension`): tv-sparse-to-tile refuses a row tile
    that does not fit its nest's UB (double-buffered) or breaks the alignment."""

    widths = [
        t.get_shape()[-1]
        for op in context.module.walk()
        if any(
            isinstance(v.type, tv.TensorViewType) and v.type.is_sparse
            for v in (*op.operands, *op.results)
        )
        for v in (*op.operands, *op.results)
        if isinstance(t := v.type, tv.TensorViewType)
        and not t.is_sparse
        and t.get_shape()[-1] > 0
    ]
    if not widths:
        return "no sparse op with a dense operand"
    widest = max(widths)
    values = sorted({1 << i for i in range(3, widest.bit_length())} | {widest})
    probed = probed_dimension(
        context, item, values, f"{len(values)} widths probed, up to {widest}"
    )
    if probed is None:
        return None
    # 0 (the widest tile that fits) next to the widest kept, which seeds the search
    kept = tuple(v for v in probed.values if v != probed.default)
    return dataclasses.replace(probed, values=(*kept, probed.default), ranked=kept[-1:])


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


def _sparse_sizes(op_type: type, values: tuple[Value, ...], what: str) -> Provider:
    """A provider of an option of tv-sparse-to-tile's nests of `op_type`:
    `values` probed (`probed_dimension`) when the kernel has such an op."""

    def provider(
        context: SpaceContext, item: dataclasses.Field[Any]
    ) -> Dimension | str | None:
        if not any(isinstance(op, op_type) for op in context.module.walk()):
            return f"no {op_type.name}"
        return probed_dimension(context, item, values, f"{what} {values} probed")

    return provider


register_dimension("tile_sizes", _tile_sizes)
register_dimension("sparse_tile_cols", _sparse_tile_cols)
register_dimension("nest_tile_sizes", _nest_tile_sizes)
register_dimension("matmul_tile_sizes", _matmul_tile_sizes)
register_dimension("max_cores", _max_cores)
register_dimension("sparse_dense_density", _sparse_dense_density)
register_dimension(
    "sparse_gather_run", _sparse_sizes(tv.GatherOp, (1, 2, 4, 8), "run lengths")
)
register_dimension(
    "sparse_topk_dense_fallback",
    _sparse_sizes(tv.GatherOp, ("always", "auto", "never"), "top-k paths"),
)
register_dimension(
    "sparse_entry_window",
    _sparse_sizes(tv.SparseSoftmaxOp, (1, 4, 8, 16), "entry windows"),
)
register_dimension(
    "sparse_masked_window",
    _sparse_sizes(tv.SparseSoftmaxOp, (0, 64, 128), "masked windows"),
)


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
        """The pipeline fields `config` sets away from their defaults (per-nest
        dimensions gathered into NEST,ROWS,COLS triples)."""
        options: dict[str, Value] = {}
        for d, v in zip(self.dimensions, config, strict=True):
            if v == d.default:
                continue
            if d.nest is None:
                options[d.name] = v
            else:
                options[d.name] = (*options.get(d.name, ()), d.nest, *v)
        return options

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

    def with_value(self, config: Config, index: int, value: Value) -> Config:
        """`config` with dimension `index` set to `value`."""
        return (*config[:index], value, *config[index + 1 :])

    def sample(self, rng: random.Random) -> Config:
        return tuple(rng.choice(d.values) for d in self.dimensions)

    def all(self) -> Iterator[Config]:
        import itertools

        return itertools.product(*(d.values for d in self.dimensions))

    def describe(self) -> list[str]:
        lines = [
            f"{d.label}: {len(d.values)} values ({d.source})" for d in self.dimensions
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
    context = SpaceContext(module, entry, target, pipeline, list(requests), baseline)
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
        provided = provider(context, item)
        if provided is None or isinstance(provided, str):
            why = provided or "no choice for this kernel"
            untuned.append(f"{_display(item.name)} ({why})")
            continue
        found = [provided] if isinstance(provided, Dimension) else list(provided)
        for dimension in found:
            _check(dimension, names, len(found))
        if (
            len(found) == 1
            and found[0].source == "switch"
            and _no_effect(module, pipeline, item.name, baseline)
        ):
            context.pruned[f"{_display(item.name)}: no effect on the tile IR"] += 1
            continue
        dimensions += found
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


def _check(dimension: Dimension, names: set[str], count: int) -> None:
    """A provider's dimension must name a field and hold its default once; of
    `count` dimensions for one field, each sizes a nest of its own."""
    if dimension.name not in names:
        raise SpaceError(
            f"inconsistent search space: dimension '{_display(dimension.name)}' is "
            "not an option of pypto-lower"
        )
    if count > 1 and dimension.nest is None:
        raise SpaceError(
            f"inconsistent search space: '{_display(dimension.name)}' has "
            f"{count} dimensions but they do not each name a nest"
        )
    if dimension.values.count(dimension.default) != 1:
        raise SpaceError(
            f"inconsistent search space: the values of '{dimension.label}' "
            "must contain its default exactly once"
        )
    if len(set(map(repr, dimension.values))) != len(dimension.values):
        raise SpaceError(
            f"inconsistent search space: '{dimension.label}' repeats a value"
        )
    stray = [v for v in dimension.ranked if v not in dimension.values]
    if stray:
        raise SpaceError(
            f"inconsistent search space: '{dimension.label}' ranks "
            f"{stray[0]!r}, which is not one of its values"
        )
