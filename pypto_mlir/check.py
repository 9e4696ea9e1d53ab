"""Compare levels of one kernel: the `tv` reference against its lowering.

`tv-to-tile` turns `func @f(%x: !tv.tensor<...>) -> !tv.tensor<...>` into
`func @f(%x: memref<...>, %out: memref<...>)`: tensor results become trailing
memref arguments, and the later stages of `pypto-lower` keep that signature.
`compare_levels` runs the tv function on the inputs, runs the lowered one (tile
interpreter or simulator) on the same inputs with output buffers of the
reference's shapes (filled with NaN / the smallest integer, so an element the
lowered code forgets to write shows), and compares every output.
`check_lowering` lowers a copy of a tv module through `pypto-lower` (or the
prefix of it that stops at the `tile` level) and compares.

Tolerances (`tolerance`, `LEVEL_ULPS`): integers agree bit for bit. Floats are
compared with a relative tolerance of a few units in the last place (ulps) of
their type, scaled by the largest magnitude of the reference or, where larger,
by the element's error bound (`pypto_mlir.error_bound`: a sum that cancels is
exact only relative to its terms): tiling may change the order
of sums (reductions, matmul over K blocks, softmax), and `ascend_hw` evaluates
composite functions (sigmoid, tanh, gelu) and sums in the element type step by
step. docs/pipeline.md gives the figures per level and dtype.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    i64,
)
from xdsl.interpreters.builtin import scalar_attr
from xdsl.ir import Attribute, BlockArgument, OpResult
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import DiagnosticException

from pypto_mlir.diagnostics import (
    DiagnosticError,
    capture_op_errors,
    error_diagnostic,
    op_error,
    verify,
)
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.error_bound import run_with_error_bounds
from pypto_mlir.interp.ascend_hw import run_hw_function
from pypto_mlir.interp.gm_memref import poison_array
from pypto_mlir.interp.sparse import SparseArray
from pypto_mlir.interp.tensor_view import sparse_argument
from pypto_mlir.interp.tile import gm_interpreter
from pypto_mlir.numerics import epsilon, numpy_dtype, round_to_bf16
from pypto_mlir.passes.sparse_function_lowering import pattern_operand
from pypto_mlir.pipelines import LowerPipeline
from pypto_mlir.targets import Target, load_target
from pypto_mlir.targets.resolve import resolve_target
from pypto_mlir.universe import default_context

ULPS = 4
"""Float outputs of the tile level may differ from the reference by this many
units in the last place of their type, relative to the largest magnitude of the
reference (docs/tiling.md)."""

LEVEL_ULPS = {"tile": ULPS, "ascend_hw": 2 * ULPS}
"""The tolerance of each level against the tv reference, in ulps. tile-to-hw
keeps within 4 ulps of the tile interpreter (docs/tile_to_hw.md, *Numerics*),
so the ascend_hw level is within 4 + 4 of the tv reference."""


def tolerance(element_type: Attribute, ulps: int = ULPS) -> float:
    """The relative tolerance of a float output of `element_type`."""
    return ulps * epsilon(element_type)


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
    max_error: float = 0.0
    """The largest absolute difference where the reference is finite."""
    allowed: float = 0.0
    """The absolute difference allowed where the error is largest relative to
    what is allowed there (0 for integers)."""
    ulps: int = ULPS
    """The tolerance in ulps of the element type (floats)."""

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

    def error_text(self) -> str:
        """The largest error and the tolerance, e.g. `max |error| 0.00049 (0.5
        ulp of max |ref| 1.0; allowed 8 ulps)`: the ulps are of the largest
        reference magnitude, or of the error bound of a sum where that is larger
        (`of bound`)."""
        if not tile.is_float(self.element_type):
            return f"max |error| {self.max_error:.6g} (integers: exact)"
        scale = self.allowed / tolerance(self.element_type, self.ulps)
        largest = float(
            np.max(np.abs(self.expected[np.isfinite(self.expected)]), initial=0.0)
        )
        of = (
            "max |ref|" if scale <= max(largest, np.finfo(np.float32).tiny) else "bound"
        )
        in_ulps = self.worst * self.ulps
        return (
            f"max |error| {self.max_error:.3g} ({in_ulps:.2g} ulp of {of} "
            f"{scale:.4g}; allowed {self.ulps} ulps)"
        )


def compare_arrays(
    index: int,
    expected: np.ndarray,
    actual: np.ndarray,
    element_type: Attribute,
    ulps: int = ULPS,
    bound: np.ndarray | None = None,
) -> OutputComparison:
    """Compare `actual` with `expected`: exact for integers, NaN where the
    reference has NaN, infinities of the same sign, otherwise `ulps` ulps of
    the element type relative to the largest finite magnitude of `expected`,
    or `ulps` times the element's error bound (`pypto_mlir.error_bound`) where
    that is larger; exact where that bound is infinite (or NaN)."""
    expected = np.asarray(expected)
    actual = np.asarray(actual).reshape(expected.shape)
    if not tile.is_float(element_type):
        bad = expected != actual
        worst = float(np.max(bad, initial=0))
        error = np.abs(expected.astype(np.float64) - actual.astype(np.float64))
        return OutputComparison(
            index,
            expected,
            actual,
            element_type,
            int(bad.sum()),
            worst,
            float(np.max(error, initial=0.0)),
            0.0,
            ulps,
        )
    e = expected.astype(np.float64)
    a = actual.astype(np.float64)
    finite = np.isfinite(e)
    scale = float(np.max(np.abs(e[finite]), initial=0.0))
    allowed = np.full(
        e.shape, tolerance(element_type, ulps) * max(scale, np.finfo(np.float32).tiny)
    )
    if bound is not None:
        # an infinite bound at a finite value (no claim: sin beyond 2^22) is
        # no licence: the element must be exact, as an infinity or NaN must
        element_bound = np.broadcast_to(bound, e.shape)
        with np.errstate(over="ignore", invalid="ignore"):
            allowed = np.where(
                np.isfinite(element_bound),
                np.maximum(allowed, ulps * element_bound),
                0.0,
            )
    with np.errstate(invalid="ignore", divide="ignore"):
        difference = np.where(finite, np.abs(a - e), 0.0)
        bad = np.where(
            finite, ~(difference <= allowed), ~((a == e) | (np.isnan(a) & np.isnan(e)))
        )
        ratio = difference / allowed
    largest = float(np.max(difference, initial=0.0))
    at = int(np.nanargmax(ratio)) if ratio.size and not np.isnan(ratio).all() else 0
    worst = float(ratio.flat[at]) if ratio.size else 0.0
    if np.isnan(difference).any():
        largest = worst = float("nan")
    if (bad & ~finite).any():
        worst = float("inf")
    return OutputComparison(
        index,
        expected,
        actual,
        element_type,
        int(bad.sum()),
        worst,
        largest,
        float(allowed.flat[at]) if allowed.size else 0.0,
        ulps,
    )


@dataclass
class LevelRun:
    """A lowered function run on the inputs of a check: its outputs in the order
    of the tv function's results and, at the ascend_hw level, the simulator's
    report."""

    outputs: list[np.ndarray]
    sim_report: Any | None = None


def lowered_level(module: ModuleOp, name: str) -> str:
    """`ascend_hw` if function `name` has ascend_hw ops, else `tile`."""
    function = SymbolTable.lookup_symbol(module, name)
    if not isinstance(function, func.FuncOp):
        raise ValueError(f"no func.func @{name} in the module")
    if any(op.name.startswith("ascend_hw.") for op in function.walk()):
        return "ascend_hw"
    return "tile"


def compare_levels(
    reference: ModuleOp,
    lowered: ModuleOp,
    name: str,
    inputs: Sequence[Any],
    target: Any | None = None,
) -> list[OutputComparison]:
    """Run `name` of the tv module and of its lowering (tile or ascend_hw) on
    `inputs` (numpy arrays for tensors, numbers for scalars) and compare the
    results, in the order of the tv function's results."""
    return compare_runs(reference, lowered, name, inputs, target)[0]


def compare_runs(
    reference: ModuleOp,
    lowered: ModuleOp,
    name: str,
    inputs: Sequence[Any],
    target: Any | None = None,
) -> tuple[list[OutputComparison], LevelRun]:
    """`compare_levels`, with the lowered run (and its simulator report).

    An ascend_hw function runs on the simulator of `target` (a `Target`;
    default: the module's `pypto.target`, else ascend910b) and is compared
    with the tolerance of its level (`LEVEL_ULPS`)."""
    expected, bounds = run_with_error_bounds(reference, name, list(inputs))
    source = SymbolTable.lookup_symbol(reference, name)
    if not isinstance(source, func.FuncOp):
        raise ValueError(f"no func.func @{name} in the reference module")
    level = lowered_level(lowered, name)
    result_types = source.function_type.outputs.data
    arguments = lowered_arguments(source, inputs)
    run = _run_lowered(lowered, name, arguments, expected, result_types, target)
    ulps = LEVEL_ULPS[level]
    expected = [v.values if isinstance(v, SparseArray) else v for v in expected]
    comparisons = [
        compare_arrays(index, value, actual, _element_type(result_type), ulps, bound)
        for index, (value, actual, result_type, bound) in enumerate(
            zip(expected, run.outputs, result_types, bounds, strict=True)
        )
    ]
    return comparisons, run


def lowered_arguments(function: func.FuncOp, inputs: Sequence[Any]) -> list[Any]:
    """The arguments of the lowering of tv `function` for its `inputs`: a
    sparse tensor (a `SparseArray` or an (offsets, indices, values) triple) is
    its three buffers, the index arrays of the encoding's index type (int64
    for i64: `memref<?xindex>`, docs/sparse.md); bf16 tensors are rounded to
    bf16 as the reference does."""
    arguments: list[Any] = []
    for value, value_type in zip(
        inputs, function.function_type.inputs.data, strict=True
    ):
        if isinstance(value_type, tv.TensorViewType) and value_type.is_sparse:
            array = sparse_argument(value_type, value)
            encoding = value_type.sparse_encoding
            assert encoding is not None
            index = (
                np.int64
                if encoding.index_type == i64
                else numpy_dtype(encoding.index_type)
            )
            arguments += [
                array.offsets.astype(index),
                array.indices.astype(index),
                array.values,
            ]
        elif _is_bf16_tensor(value_type):
            arguments.append(round_to_bf16(np.asarray(value)))
        else:
            arguments.append(value)
    return arguments


def _element_type(result_type: Attribute) -> Attribute:
    if isinstance(result_type, tv.TensorViewType):
        return result_type.element_type
    return result_type


def result_buffers(
    function: func.FuncOp, inputs: Sequence[Any] = ()
) -> list[np.ndarray]:
    """New output buffers for the tensor results of a tv function, in order:
    the trailing memref arguments of its lowering. They hold the poison
    pattern (NaN / the smallest integer), so elements never written show. A
    sparse result is its values buffer, as long as those of the argument whose
    pattern it has (`sparse_result_sources`; `inputs` as the kernel takes them,
    docs/sparse.md)."""
    types = [
        t
        for t in function.function_type.outputs.data
        if isinstance(t, tv.TensorViewType)
    ]
    buffers: list[np.ndarray] = []
    for result_type, source in zip(types, sparse_result_sources(function), strict=True):
        shape: Sequence[int] = result_type.get_shape()
        if source is not None:
            pattern = sparse_argument(
                function.function_type.inputs.data[source], inputs[source]
            )
            shape = pattern.values.shape
        buffers.append(poison_array(shape, result_type.element_type))
    return buffers


def sparse_result_sources(function: func.FuncOp) -> list[int | None]:
    """Per tensor result of tv `function`, the argument whose offsets and
    indices a sparse result shares (None for a dense result); a sparse result
    whose pattern is not an argument's is an error at the return."""
    returned = function.body.block.last_op
    assert isinstance(returned, func.ReturnOp)
    sources: list[int | None] = []
    for value in returned.arguments:
        value_type = value.type
        if not isinstance(value_type, tv.TensorViewType):
            continue
        if not value_type.is_sparse:
            sources.append(None)
            continue
        while isinstance(value, OpResult):
            operand = pattern_operand(value.op)
            if operand is None:
                break
            value = operand
        if not isinstance(value, BlockArgument):
            raise op_error(
                returned,
                "a sparse result must have the pattern of a sparse argument "
                "(the result of sddmm, softmax or a scale of one): its offsets "
                "and indices are the argument's",
            )
        sources.append(value.index)
    return sources


def with_sparse_results(
    function: func.FuncOp, inputs: Sequence[Any], outputs: Sequence[np.ndarray]
) -> list[Any]:
    """The lowered run's `outputs` as the tv function returns them: a sparse
    result a `SparseArray` of its values and its source argument's pattern."""
    results: list[Any] = list(outputs)
    for i, source in enumerate(sparse_result_sources(function)):
        if source is not None:
            pattern = sparse_argument(
                function.function_type.inputs.data[source], inputs[source]
            )
            results[i] = SparseArray(
                pattern.shape,
                pattern.block,
                pattern.offsets,
                pattern.indices,
                outputs[i],
            )
    return results


def _run_lowered(
    lowered: ModuleOp,
    name: str,
    arguments: Sequence[Any],
    expected: Sequence[np.ndarray],
    result_types: Sequence[Attribute],
    target: Any | None,
) -> LevelRun:
    """Run the lowered function with poisoned output buffers."""
    buffers: list[np.ndarray] = []
    for value, result_type in zip(expected, result_types, strict=True):
        if isinstance(result_type, tv.TensorViewType):
            # The reference's shape: `?` sizes are bound by the inputs; a
            # sparse result is its values buffer (docs/sparse.md).
            shape = (value.values if isinstance(value, SparseArray) else value).shape
            buffers.append(poison_array(shape, result_type.element_type))
    if lowered_level(lowered, name) == "tile":
        scalars = iter(run_tile_level(lowered, name, [*arguments, *buffers]))
        report = None
    else:
        if len(buffers) != len(result_types):
            raise ValueError(
                f"@{name} returns scalars; the ascend_hw level returns outputs "
                "through memrefs only"
            )
        run = run_hw_function(
            lowered, name, [*arguments, *buffers], target or module_target(lowered)
        )
        scalars, report = iter(()), run.report
    tensors = iter(buffers)
    outputs = [
        next(tensors)
        if isinstance(result_type, tv.TensorViewType)
        else np.asarray(next(scalars))
        for result_type in result_types
    ]
    return LevelRun(outputs, report)


def module_target(module: ModuleOp) -> Target:
    """The `Target` a module names (`pypto.target`), else the default one."""
    return load_target(resolve_target(module))


def _is_bf16_tensor(value_type: Attribute) -> bool:
    return isinstance(value_type, tv.TensorViewType) and value_type.element_type == bf16


@dataclass
class LoweringCheck:
    """The result of `check_lowering`: the lowered module, the comparison of
    every output with the tv reference, and the simulator's report (ascend_hw)."""

    level: str
    lowered: ModuleOp
    comparisons: list[OutputComparison]
    sim_report: Any | None

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.comparisons)


def lower(
    module: ModuleOp,
    level: str = "ascend_hw",
    pipeline: Any | None = None,
    on_stage: Callable[[Any], None] | None = None,
) -> ModuleOp:
    """A copy of the tv `module` lowered by `pipeline` (a `LowerPipeline`,
    default `pypto-lower` with its defaults) down to `level` (`tile`: the
    stages up to the last one whose output is tile IR); `on_stage(pass)` is
    called before each member pass (for progress displays). A pass that
    refuses, or output that does not verify, raises `DiagnosticError` at the
    op."""
    pipeline = pipeline or LowerPipeline()
    lowered = module.clone()
    ctx = default_context()
    with capture_op_errors():
        for member in pipeline.stages(level):
            if on_stage is not None:
                on_stage(member)
            try:
                member.apply(ctx, lowered)
            except DiagnosticException as error:
                raise DiagnosticError(error_diagnostic(error, lowered)) from error
            verify(lowered)
    return lowered


def check_lowering(
    module: ModuleOp,
    name: str,
    inputs: Sequence[Any],
    level: str = "ascend_hw",
    pipeline: Any | None = None,
) -> LoweringCheck:
    """Lower a copy of the tv `module` to `level` (`lower`) and compare function
    `name` with the tv reference on `inputs`; at the ascend_hw level it runs on
    the simulator of the pipeline's target. The module is not changed."""
    lowered = lower(module, level, pipeline)
    comparisons, run = compare_runs(module, lowered, name, inputs)
    return LoweringCheck(level, lowered, comparisons, run.sim_report)
