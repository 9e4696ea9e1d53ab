"""Compare two levels of one kernel: the `tv` reference against its `tile` lowering.

`tv-to-tile` turns `func @f(%x: !tv.tensor<...>) -> !tv.tensor<...>` into
`func @f(%x: memref<...>, %out: memref<...>)`: tensor results become trailing
memref arguments. `compare_levels` runs the tv function on the inputs, runs the
tiled one on the same inputs with output buffers of the reference's shapes
(filled with NaN / the smallest integer, so an element the tiled code forgets to
write shows), and compares every output.

Tolerances (`tolerance`): integers and the exact float ops agree bit for bit,
but tiling may change the order of sums (reductions, matmul over K blocks,
softmax) and the rounding of a sum of many terms, so floats are compared with a
relative tolerance of a few units in the last place of their type, scaled by
the largest magnitude of the reference (cancellation in a sum makes small
results inexact in absolute terms).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    bf16,
    f16,
)
from xdsl.interpreters.builtin import scalar_attr
from xdsl.ir import Attribute
from xdsl.traits import SymbolTable

from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.interp.gm_memref import gm_interpreter, poison_array
from pypto_mlir.interp.tensor_view import round_to_bf16, run_tv_function

ULPS = 4
"""Float outputs may differ from the reference by this many units in the last
place of their type, relative to the largest magnitude of the reference."""

_EPSILON = {f16: 2.0**-10, bf16: 2.0**-7}
"""Machine epsilon of the narrow float types (f32 uses numpy's)."""


def tolerance(element_type: Attribute) -> float:
    """The relative tolerance of a float output of `element_type`."""
    return ULPS * _EPSILON.get(element_type, float(np.finfo(np.float32).eps))


def run_tile_level(
    module: ModuleOp, name: str, args: Sequence[Any], index_bitwidth: int = 64
) -> tuple[Any, ...]:
    """Run function `name` of a tile-level module: memref arguments are numpy
    arrays (written in place), scalars Python numbers. Unlike
    `interp.tile.run_tile_function` this also runs the GM memref ops that
    `tv-to-tile` emits (`interp.gm_memref`)."""
    function = SymbolTable.lookup_symbol(module, name)
    if not isinstance(function, func.FuncOp):
        raise ValueError(f"no func.func @{name} in the module")
    interpreter = gm_interpreter(module, index_bitwidth)
    types = function.function_type.inputs.data
    if len(types) != len(args):
        raise ValueError(f"@{name} takes {len(types)} arguments, got {len(args)}")
    values = tuple(
        _runtime(a, t, index_bitwidth) for a, t in zip(args, types, strict=True)
    )
    results = interpreter.call_op(name, values)
    return tuple(
        r.value.data if isinstance(r, IntegerAttr | FloatAttr) else r for r in results
    )


def _runtime(value: Any, value_type: Attribute, index_bitwidth: int) -> Any:
    if isinstance(value_type, IndexType | IntegerType) and not isinstance(
        value, IntegerAttr
    ):
        return scalar_attr(int(value), value_type, cast(Any, index_bitwidth))
    if tile.is_float(value_type) and not isinstance(value, FloatAttr):
        return FloatAttr(float(value), cast(Any, value_type))
    return value


@dataclass(frozen=True)
class OutputComparison:
    """How one output of the tiled function compares with the reference."""

    index: int
    expected: np.ndarray
    actual: np.ndarray
    element_type: Attribute
    mismatches: int
    worst: float
    """The largest difference, in units of the allowed one (<= 1 passes)."""

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

    def describe(self) -> str:
        if self.ok:
            return f"output {self.index}: ok"
        return (
            f"output {self.index} ({self.element_type}, shape {self.expected.shape}): "
            f"{self.mismatches} of {self.expected.size} elements differ, worst "
            f"{self.worst:.3g}x the tolerance"
        )


def compare_arrays(
    index: int, expected: np.ndarray, actual: np.ndarray, element_type: Attribute
) -> OutputComparison:
    """Compare `actual` with `expected`: exact for integers, NaN where the
    reference has NaN, infinities of the same sign, otherwise `tolerance`."""
    expected = np.asarray(expected)
    actual = np.asarray(actual).reshape(expected.shape)
    if not tile.is_float(element_type):
        bad = expected != actual
        worst = float(np.max(bad, initial=0))
        return OutputComparison(
            index, expected, actual, element_type, int(bad.sum()), worst
        )
    e = expected.astype(np.float64)
    a = actual.astype(np.float64)
    finite = np.isfinite(e)
    scale = float(np.max(np.abs(e[finite]), initial=0.0))
    allowed = tolerance(element_type) * max(scale, np.finfo(np.float32).tiny)
    with np.errstate(invalid="ignore"):
        difference = np.where(finite, np.abs(a - e), 0.0)
        bad = np.where(
            finite, ~(difference <= allowed), ~((a == e) | (np.isnan(a) & np.isnan(e)))
        )
    worst = float(np.max(np.where(finite, difference, 0.0), initial=0.0)) / allowed
    if (bad & ~finite).any():
        worst = float("inf")
    return OutputComparison(
        index, expected, actual, element_type, int(bad.sum()), worst
    )


def compare_levels(
    reference: ModuleOp, lowered: ModuleOp, name: str, inputs: Sequence[Any]
) -> list[OutputComparison]:
    """Run `name` of the tv module and of its tile lowering on `inputs` (numpy
    arrays for tensors, numbers for scalars) and compare the results, in the
    order of the tv function's results."""
    expected = run_tv_function(reference, name, list(inputs))
    source = SymbolTable.lookup_symbol(reference, name)
    function = SymbolTable.lookup_symbol(lowered, name)
    if not isinstance(function, func.FuncOp) or not isinstance(source, func.FuncOp):
        raise ValueError(f"no func.func @{name} in both modules")
    result_types = source.function_type.outputs.data
    buffers: list[np.ndarray] = []
    for value, result_type in zip(expected, result_types, strict=True):
        if isinstance(result_type, tv.TensorViewType):
            buffers.append(poison_array(value.shape, result_type.element_type))
    arguments = [
        round_to_bf16(np.asarray(a)) if _is_bf16_tensor(t) else a
        for a, t in zip(inputs, source.function_type.inputs.data, strict=True)
    ]
    scalars = iter(run_tile_level(lowered, name, [*arguments, *buffers]))
    tensors = iter(buffers)
    comparisons: list[OutputComparison] = []
    for index, (value, result_type) in enumerate(
        zip(expected, result_types, strict=True)
    ):
        if isinstance(result_type, tv.TensorViewType):
            actual, element_type = next(tensors), result_type.element_type
        else:
            actual, element_type = np.asarray(next(scalars)), result_type
        comparisons.append(compare_arrays(index, value, actual, element_type))
    return comparisons


def _is_bf16_tensor(value_type: Attribute) -> bool:
    return isinstance(value_type, tv.TensorViewType) and value_type.element_type == bf16


def check_tiling(
    module: ModuleOp,
    name: str,
    inputs: Sequence[Any],
    target: str,
    tile_sizes: tuple[int, ...] = (),
    matmul_tile_sizes: tuple[int, ...] = (),
) -> list[OutputComparison]:
    """Tile a copy of the tv `module` with `tv-to-tile` for `target` and compare
    function `name` at both levels on `inputs` (the module is not changed)."""
    from xdsl.context import Context

    from pypto_mlir.passes.tv_to_tile import TvToTilePass

    lowered = module.clone()
    TvToTilePass(
        target=target, tile_sizes=tile_sizes, matmul_tile_sizes=matmul_tile_sizes
    ).apply(Context(), lowered)
    return compare_levels(module, lowered, name, inputs)
