"""Reference interpreter of the `tile` dialect on numpy arrays.

A tile's run-time value is a `TileValue`: a numpy array of the tile's physical
shape and its valid extents. Ops compute on the valid region only. Outside it a
tile holds its type's pad value, or otherwise a poison pattern (NaN for floats,
the smallest integer for integers) so that an op which wrongly reads there
shows up in the results.

GM memrefs are numpy arrays of the memref's shape (any strides: views work);
loads read and stores write them in place. xDSL's `ShapedArray` (what
`memref.alloc` returns in xDSL's memref interpreter) is accepted too, as a view
of its buffer. Index and scalar operands are the interpreter's usual
`IntegerAttr`/`FloatAttr` values.

The numerics are those of the `tv` reference interpreter, whose kernels this
module reuses, so that a tiled kernel can be compared with its `tv` original:
storage f16 -> float16, f32 -> float32, i8/i16/i32 -> int8/16/32 and bf16 ->
float32 holding bf16 values; float ops compute in f32 and round once per op,
integer ops wrap; matmul and sums accumulate in f32 (i32 for i8 inputs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.builtin import BuiltinFunctions, scalar_attr
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.math import MathFunctions
from xdsl.interpreters.memref import MemRefFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Attribute, SSAValue
from xdsl.utils.exceptions import InterpretationError

import pypto_mlir.op_facts as op_facts
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import PadValue, RoundMode, TileType
from pypto_mlir.interp import tensor_view as tv_kernels
from pypto_mlir.interp.gm_memref import GmMemRefFunctions, gm_array
from pypto_mlir.interp.index_arith import IndexArithFunctions
from pypto_mlir.interp.scalar_casts import ScalarCastFunctions
from pypto_mlir.interp.tensor_view import op_suffix, scalar_to_compute, to_compute
from pypto_mlir.numerics import numpy_dtype, round_to_element_type


def _special_value(element_type: Attribute, which: PadValue | None) -> Any:
    """The pad value `which`, or the poison value when there is none."""
    dtype = numpy_dtype(element_type)
    is_float = tile.is_float(element_type)
    if which is PadValue.ZERO:
        return dtype.type(0)
    if which is PadValue.MIN:
        return dtype.type(-np.inf) if is_float else np.iinfo(dtype).min
    if which is PadValue.MAX:
        return dtype.type(np.inf) if is_float else np.iinfo(dtype).max
    return dtype.type(np.nan) if is_float else np.iinfo(dtype).min


# --------------------------------------------------------------------------------------
# Run-time values
# --------------------------------------------------------------------------------------


@dataclass
class TileValue:
    """The run-time value of a `!tile.tile`: physical data and valid extents."""

    data: np.ndarray
    valid: tuple[int, ...]

    @property
    def valid_slices(self) -> tuple[slice, ...]:
        return tuple(slice(0, v) for v in self.valid)

    def valid_data(self) -> np.ndarray:
        """A view of the valid region."""
        return self.data[self.valid_slices]


def new_tile(
    tile_type: TileType, valid: Sequence[int], values: np.ndarray | Any
) -> TileValue:
    """A tile of `tile_type` whose valid region holds `values` (broadcast, and
    rounded once to the element type) and whose rest holds the pad or poison."""
    data = np.full(
        tile_type.get_shape(),
        _special_value(tile_type.element_type, tile_type.pad_value),
        dtype=numpy_dtype(tile_type.element_type),
    )
    result = TileValue(data, tuple(valid))
    region = result.valid_data()
    with np.errstate(all="ignore"):
        values = round_to_element_type(np.asarray(values), tile_type.element_type)
    region[...] = np.broadcast_to(values, region.shape)
    return result


def _index(value: Any) -> int:
    if isinstance(value, IntegerAttr):
        return cast(int, value.value.data)
    return int(value)


def _valid_element(
    op_name: str, tile_value: TileValue, indices: Sequence[Any]
) -> tuple[int, ...]:
    """The element at run-time `indices`, which must lie in the valid region."""
    index = tuple(_index(a) for a in indices)
    if any(not 0 <= i < v for i, v in zip(index, tile_value.valid, strict=True)):
        raise InterpretationError(
            f"{op_name}: index {list(index)} is outside the valid region "
            f"{list(tile_value.valid)}"
        )
    return index


def _resolve_valid(
    op_name: str,
    tile_type: TileType,
    dynamic: Sequence[Any],
    known: Sequence[int | None] | None = None,
) -> tuple[int, ...]:
    """Valid extents of a result type: static ones, `known` ones (inherited from
    an operand at run time) and then the dynamic operands, in dim order."""
    operands = iter(_index(v) for v in dynamic)
    valid: list[int] = []
    for dim, (v, size) in enumerate(
        zip(tile_type.get_valid(), tile_type.get_shape(), strict=True)
    ):
        if known is not None and known[dim] is not None:
            extent = cast(int, known[dim])
        elif v == DYNAMIC_INDEX:
            extent = next(operands)
        else:
            extent = v
        if v != DYNAMIC_INDEX and extent != v:
            raise InterpretationError(
                f"{op_name}: valid extent {extent} of dim {dim} differs from the static {v}"
            )
        if not 1 <= extent <= size:
            raise InterpretationError(
                f"{op_name}: valid extent {extent} of dim {dim} is outside [1, {size}]"
            )
        valid.append(extent)
    return tuple(valid)


def _gm_window(
    op_name: str, array: np.ndarray, indices: Sequence[Any], valid: Sequence[int]
) -> tuple[int | slice, ...]:
    """The index expression of a tile's window in a GM array; checks bounds."""
    offsets = [_index(i) for i in indices]
    leading = array.ndim - len(valid)
    window: list[int | slice] = []
    for dim, (offset, size) in enumerate(zip(offsets, array.shape, strict=True)):
        extent = 1 if dim < leading else valid[dim - leading]
        if offset < 0 or offset + extent > size:
            raise InterpretationError(
                f"{op_name}: window [{offset}, {offset + extent}) of dim {dim} is "
                f"outside the memref's extent {size}"
            )
        window.append(offset if dim < leading else slice(offset, offset + extent))
    return tuple(window)


# --------------------------------------------------------------------------------------
# Numerics: the tv kernels
# --------------------------------------------------------------------------------------


UNARY_KERNELS: dict[type[tile.TileUnaryOp], Callable[[np.ndarray], np.ndarray]] = {
    op: op_facts.UNARY[op_suffix(op)].kernel
    for op in tile.UNARY_OPS
    if op_suffix(op) in op_facts.UNARY
}
"""The kernel of each unary op, from `pypto_mlir.op_facts`: the same function
as its tv counterpart's."""

BINARY_KERNELS: dict[
    type[tile.TileBinaryOp], Callable[[np.ndarray, np.ndarray], np.ndarray]
] = {
    op: op_facts.BINARY[op_suffix(op)].kernel
    for op in tile.BINARY_OPS
    if op_suffix(op) in op_facts.BINARY
}

REDUCE_KINDS: dict[type[tile.TileReduceOp], type[tv.ReduceOp]] = {
    op: tv_op
    for op in tile.REDUCE_OPS
    for tv_op in tv_kernels.REDUCE_FACTS
    if op_suffix(op) == op_suffix(tv_op)
}
"""The tv reduction whose kernel each tile reduction runs (on one axis)."""

_ROUNDING: dict[RoundMode, Callable[[np.ndarray], np.ndarray]] = {
    RoundMode.RINT: np.rint,
    RoundMode.ROUND: lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
    RoundMode.FLOOR: np.floor,
    RoundMode.CEIL: np.ceil,
    RoundMode.TRUNC: np.trunc,
}


def cast_values(
    values: np.ndarray,
    source: Attribute,
    dest: Attribute,
    round_mode: RoundMode = RoundMode.TRUNC,
) -> np.ndarray:
    """Convert element values as `tile.cast` does: `tv.cast`, with float ->
    integer rounding by `round_mode` before the saturation."""
    if tile.is_float(source) and not tile.is_float(dest):
        with np.errstate(invalid="ignore"):
            values = _ROUNDING[round_mode](np.asarray(values, dtype=np.float64))
    return tv_kernels.cast_array(values, source, dest)


# --------------------------------------------------------------------------------------
# Interpreter functions
# --------------------------------------------------------------------------------------


def _result_type(op: Any) -> TileType:
    return cast(TileType, op.result.type)


def _operand_value(value: Any, operand: SSAValue) -> np.ndarray:
    """A tile's valid data or a scalar operand, in the compute type (f32 for floats)."""
    if isinstance(operand.type, TileType):
        tile_value = cast(TileValue, value)
        return to_compute(tile_value.valid_data(), operand.type.element_type)
    return scalar_to_compute(value, operand.type)


def _run_unary(
    self: InterpreterFunctions,
    interpreter: Interpreter,
    op: tile.TileUnaryOp,
    args: PythonValues,
) -> PythonValues:
    source = cast(TileValue, args[0])
    values = _operand_value(source, op.source)
    with np.errstate(all="ignore"):
        result = UNARY_KERNELS[type(op)](values)
    return (new_tile(_result_type(op), source.valid, result),)


def _run_binary(
    self: InterpreterFunctions,
    interpreter: Interpreter,
    op: tile.TileBinaryOp,
    args: PythonValues,
) -> PythonValues:
    operands = (op.lhs, op.rhs)
    tiles = [
        cast(TileValue, a)
        for a, o in zip(args, operands, strict=True)
        if isinstance(o.type, TileType)
    ]
    result_type = _result_type(op)
    valid = _broadcast_valid(op.name, result_type, tiles)
    lhs, rhs = (_operand_value(a, o) for a, o in zip(args, operands, strict=True))
    with np.errstate(all="ignore"):
        result = BINARY_KERNELS[type(op)](lhs, rhs)
    return (new_tile(result_type, valid, result),)


def _broadcast_valid(
    op_name: str, result_type: TileType, tiles: Sequence[TileValue]
) -> list[int]:
    """Per dim, the result's valid extent: that of the operands not broadcast."""
    valid: list[int] = []
    for dim, size in enumerate(result_type.get_shape()):
        extents = {t.valid[dim] for t in tiles if t.data.shape[dim] == size}
        if len(extents) != 1:
            raise InterpretationError(
                f"{op_name}: valid extents of dim {dim} differ at run time: "
                f"{sorted(extents)}"
            )
        valid.append(extents.pop())
    return valid


def _run_reduce(
    self: InterpreterFunctions,
    interpreter: Interpreter,
    op: tile.TileReduceOp,
    args: PythonValues,
) -> PythonValues:
    source = cast(TileValue, args[0])
    axis = op.axis_index
    result = tv_kernels.reduce(
        REDUCE_KINDS[type(op)],
        source.valid_data(),
        (axis,),
        True,
        cast(TileType, op.source.type).element_type,
    )
    valid = tuple(1 if d == axis else v for d, v in enumerate(source.valid))
    return (new_tile(_result_type(op), valid, result),)


@register_impls
class TileFunctions(
    tv_kernels.family_functions(
        "TileFamilyFunctions",
        {
            **dict.fromkeys(UNARY_KERNELS, _run_unary),
            **dict.fromkeys(BINARY_KERNELS, _run_binary),
            **dict.fromkeys(REDUCE_KINDS, _run_reduce),
        },
    )
):
    """Numpy implementations of the `tile` ops. The elementwise and reduction
    ops' `@impl`s come from the facts tables (the base class)."""

    @impl(tile.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: tile.LoadOp, args: PythonValues
    ) -> PythonValues:
        num_indices = len(op.indices)
        source = gm_array(args[0], cast(MemRefType[Attribute], op.source.type))
        indices, dynamic = args[1 : 1 + num_indices], args[1 + num_indices :]
        result_type = _result_type(op)
        valid = _resolve_valid(op.name, result_type, dynamic)
        window = _gm_window(op.name, source, indices, valid)
        values = source[window].reshape(valid)
        return (new_tile(result_type, valid, values),)

    @impl(tile.StoreOp)
    def run_store(
        self, interpreter: Interpreter, op: tile.StoreOp, args: PythonValues
    ) -> PythonValues:
        value = cast(TileValue, args[0])
        memref_type = cast(MemRefType[Attribute], op.dest.type)
        dest = gm_array(args[1], memref_type)
        window = _gm_window(op.name, dest, args[2:], value.valid)
        dest[window] = round_to_element_type(
            value.valid_data(), memref_type.get_element_type()
        )
        return ()

    @impl(tile.MoveOp)
    def run_move(
        self, interpreter: Interpreter, op: tile.MoveOp, args: PythonValues
    ) -> PythonValues:
        source = cast(TileValue, args[0])
        values, valid = source.valid_data(), source.valid
        if op.window is not None:
            window = _result_type(op).get_shape()
            if op.transpose is not None:
                window = window[::-1]
            offsets = op.window_offsets()
            values = values[
                tuple(slice(o, o + w) for o, w in zip(offsets, window, strict=True))
            ]
            valid = values.shape
        if op.transpose is not None:
            values, valid = values.T, valid[::-1]
        return (new_tile(_result_type(op), valid, values),)

    @impl(tile.MatmulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: tile.MatmulOp, args: PythonValues
    ) -> PythonValues:
        lhs, rhs = cast(TileValue, args[0]), cast(TileValue, args[1])
        if lhs.valid[1] != rhs.valid[0]:
            raise InterpretationError(
                f"tile.matmul: valid K extents differ at run time: {lhs.valid[1]} vs "
                f"{rhs.valid[0]}"
            )
        lhs_type = cast(TileType, op.lhs.type)
        result_type = _result_type(op)
        valid = (lhs.valid[0], rhs.valid[1])
        init = None
        if op.acc is not None:
            acc = cast(TileValue, args[2])
            if acc.valid != valid:
                raise InterpretationError(
                    f"tile.matmul: accumulator valid shape {list(acc.valid)} differs "
                    f"from the product's {list(valid)}"
                )
            init = acc.valid_data()
        # the accumulator starts the k-ordered sum, as L0C does for mmad
        product = tv_kernels.matmul(
            lhs.valid_data(),
            rhs.valid_data(),
            lhs_type.element_type,
            result_type.element_type,
            init=init,
        )
        valid = _resolve_valid(op.name, result_type, (), valid)
        return (new_tile(result_type, valid, product),)

    @impl(tile.CastOp)
    def run_cast(
        self, interpreter: Interpreter, op: tile.CastOp, args: PythonValues
    ) -> PythonValues:
        source = cast(TileValue, args[0])
        source_type = cast(TileType, op.source.type)
        result_type = _result_type(op)
        values = cast_values(
            source.valid_data(),
            source_type.element_type,
            result_type.element_type,
            op.round_mode,
        )
        return (new_tile(result_type, source.valid, values),)

    @impl(tile.SelectOp)
    def run_select(
        self, interpreter: Interpreter, op: tile.SelectOp, args: PythonValues
    ) -> PythonValues:
        tiles = [cast(TileValue, a) for a in args]
        result_type = _result_type(op)
        valid = _broadcast_valid(op.name, result_type, tiles)
        values = [_operand_value(a, o) for a, o in zip(args, op.operands, strict=True)]
        result = op_facts.select(op.cmp.data, *values)
        return (new_tile(result_type, valid, result),)

    @impl(tile.BroadcastOp)
    def run_broadcast(
        self, interpreter: Interpreter, op: tile.BroadcastOp, args: PythonValues
    ) -> PythonValues:
        source = cast(TileValue, args[0])
        result_type = _result_type(op)
        broadcast = set(op.broadcast_dims())
        known = [None if d in broadcast else v for d, v in enumerate(source.valid)]
        # The operands give the `?` extents of the broadcast dims, in dim order.
        valid = _resolve_valid(op.name, result_type, args[1:], known)
        return (new_tile(result_type, valid, source.valid_data()),)

    @impl(tile.FillOp)
    def run_fill(
        self, interpreter: Interpreter, op: tile.FillOp, args: PythonValues
    ) -> PythonValues:
        result_type = _result_type(op)
        valid = _resolve_valid(op.name, result_type, args[1:])
        value = scalar_to_compute(args[0], op.value.type)
        return (new_tile(result_type, valid, value),)

    @impl(tile.IotaOp)
    def run_iota(
        self, interpreter: Interpreter, op: tile.IotaOp, args: PythonValues
    ) -> PythonValues:
        result_type = _result_type(op)
        valid = _resolve_valid(op.name, result_type, args)
        columns = np.arange(valid[-1], dtype=np.int64)
        return (new_tile(result_type, valid, np.broadcast_to(columns, valid)),)

    @impl(tile.PadOp)
    def run_pad(
        self, interpreter: Interpreter, op: tile.PadOp, args: PythonValues
    ) -> PythonValues:
        source = cast(TileValue, args[0])
        return (new_tile(_result_type(op), source.valid, source.valid_data()),)

    @impl(tile.TransposeOp)
    def run_transpose(
        self, interpreter: Interpreter, op: tile.TransposeOp, args: PythonValues
    ) -> PythonValues:
        source = cast(TileValue, args[0])
        return (new_tile(_result_type(op), source.valid[::-1], source.valid_data().T),)

    @impl(tile.ValidDimOp)
    def run_valid_dim(
        self, interpreter: Interpreter, op: tile.ValidDimOp, args: PythonValues
    ) -> PythonValues:
        source = cast(TileValue, args[0])
        extent = source.valid[op.dim_index]
        return (scalar_attr(extent, IndexType(), interpreter.index_bitwidth),)

    @impl(tile.ExtractOp)
    def run_extract(
        self, interpreter: Interpreter, op: tile.ExtractOp, args: PythonValues
    ) -> PythonValues:
        source = cast(TileValue, args[0])
        index = _valid_element(op.name, source, args[1:])
        element = source.data[index]
        if isinstance(op.result.type, IndexType):
            return (scalar_attr(int(element), IndexType(), interpreter.index_bitwidth),)
        return (FloatAttr(float(element), cast(Any, op.result.type)),)

    @impl(tile.InsertOp)
    def run_insert(
        self, interpreter: Interpreter, op: tile.InsertOp, args: PythonValues
    ) -> PythonValues:
        dest = cast(TileValue, args[1])
        index = _valid_element(op.name, dest, args[2:])
        data = dest.data.copy()
        data[index] = np.asarray(args[0].value.data).astype(data.dtype)
        return (TileValue(data, dest.valid),)

    @impl(tile.InsertRowsOp)
    def run_insert_rows(
        self, interpreter: Interpreter, op: tile.InsertRowsOp, args: PythonValues
    ) -> PythonValues:
        value, dest = cast(TileValue, args[0]), cast(TileValue, args[1])
        row = int(args[2].value.data)
        rows = value.data.shape[0]
        if not 0 <= row <= dest.valid[0] - rows:
            raise InterpretationError(
                f"tile.insert_rows: rows [{row}, {row + rows}) are outside the "
                f"valid rows [0, {dest.valid[0]}) of the destination"
            )
        data = dest.data.copy()
        data[row : row + rows, : dest.valid[1]] = value.data[:, : dest.valid[1]]
        return (TileValue(data, dest.valid),)

    @impl(tile.GatherOp)
    def run_gather(
        self, interpreter: Interpreter, op: tile.GatherOp, args: PythonValues
    ) -> PythonValues:
        source, indices = cast(TileValue, args[0]), cast(TileValue, args[1])
        start = int(args[2].value.data)
        rows = _result_type(op).get_shape()[0]
        if not 0 <= start <= indices.valid[0] - rows:
            raise InterpretationError(
                f"tile.gather: indices [{start}, {start + rows}) are outside the "
                f"valid region [{indices.valid[0]}] of the index tile"
            )
        picked = indices.data[start : start + rows].astype(np.int64)
        outside = (picked < 0) | (picked >= source.valid[0])
        if outside.any():
            at = int(np.argmax(outside))
            raise InterpretationError(
                f"tile.gather: row index {int(picked[at])} at {start + at} is "
                f"outside the source's valid rows [0, {source.valid[0]})"
            )
        values = source.data[picked, : source.valid[1]]
        return (new_tile(_result_type(op), [rows, source.valid[1]], values),)


# --------------------------------------------------------------------------------------
# Running a function
# --------------------------------------------------------------------------------------


def tile_interpreter(module: ModuleOp, index_bitwidth: int = 64) -> Interpreter:
    """An interpreter for `module` with the tile, func, scf, arith (with the
    unsigned index arithmetic tile-pipeline emits for run-time bounds:
    `IndexArithFunctions`), math, memref and builtin functions registered; memref
    ops on GM buffers (numpy arrays) run as `interp.gm_memref` defines them."""
    interpreter = Interpreter(module, index_bitwidth=cast(Any, index_bitwidth))
    for functions in (
        IndexArithFunctions(),
        BuiltinFunctions(),
        FuncFunctions(),
        MathFunctions(),
        MemRefFunctions(),
        ScfFunctions(),
        TileFunctions(),
    ):
        interpreter.register_implementations(functions)
    interpreter.register_implementations(GmMemRefFunctions(), override=True)
    interpreter.register_implementations(ScalarCastFunctions())
    return interpreter


def gm_interpreter(module: ModuleOp, index_bitwidth: int = 64) -> Interpreter:
    """The tile interpreter, which runs the GM memref ops of `tv-to-tile` output
    and xDSL's math functions (scalar code kept from the tv function): the
    interpreter of every level between tv-to-tile and tile-to-hw."""
    return tile_interpreter(module, index_bitwidth)


def _to_runtime(value: Any, value_type: Attribute, index_bitwidth: int) -> Any:
    if isinstance(value_type, IndexType | IntegerType) and not isinstance(
        value, IntegerAttr
    ):
        return scalar_attr(int(value), value_type, cast(Any, index_bitwidth))
    if tile.is_float(value_type) and not isinstance(value, FloatAttr):
        return FloatAttr(float(value), cast(Any, value_type))
    if isinstance(value_type, TileType):
        _check_tile_argument(value, value_type)
    return value


def _check_tile_argument(value: Any, tile_type: TileType) -> None:
    """A TileValue passed for a tile argument must match its type."""
    if not isinstance(value, TileValue):
        raise InterpretationError(
            f"expected a TileValue for {tile_type}, got {type(value)}"
        )
    dtype = numpy_dtype(tile_type.element_type)
    if value.data.shape != tile_type.get_shape() or value.data.dtype != dtype:
        raise InterpretationError(
            f"a {tile_type} holds a {dtype} array of shape {tile_type.get_shape()}, "
            f"got {value.data.dtype} {value.data.shape}"
        )
    _resolve_valid("argument", tile_type, (), value.valid)


def _from_runtime(value: Any) -> Any:
    if isinstance(value, IntegerAttr | FloatAttr):
        return value.value.data
    return value


def run_tile_function(
    module: ModuleOp, name: str, args: Sequence[Any], index_bitwidth: int = 64
) -> tuple[Any, ...]:
    """Call function `name` of `module`: memref arguments are numpy arrays
    (written in place), index/integer/float arguments Python numbers, tile
    arguments `TileValue`s. Returns the results with scalars as numbers."""
    interpreter = tile_interpreter(module, index_bitwidth)
    func_op = interpreter.get_op_for_symbol(name)
    if not isinstance(func_op, func.FuncOp):
        raise InterpretationError(f"@{name} is not a func.func")
    arg_types = func_op.function_type.inputs.data
    if len(arg_types) != len(args):
        raise InterpretationError(
            f"@{name} takes {len(arg_types)} arguments, got {len(args)}"
        )
    runtime_args = tuple(
        _to_runtime(a, t, index_bitwidth) for a, t in zip(args, arg_types, strict=True)
    )
    results = interpreter.call_op(name, runtime_args)
    return tuple(_from_runtime(r) for r in results)
