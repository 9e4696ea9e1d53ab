"""Interpreter functions for the `memref` ops that `tv-to-tile` emits on GM buffers.

At the `tile` level a GM operand is a numpy array (docs/tile.md). `tv-to-tile`
addresses GM with a few `memref` ops that xDSL's own memref interpreter does not
run, or runs on its `ShapedArray` (which knows no bf16 and no dynamic sizes):

- `memref.alloc` (GM temporaries, dynamic sizes allowed): a numpy array filled
  with a poison pattern (NaN / the smallest integer), so that reading a
  temporary before writing it shows up in results;
- `memref.dim`: the size of a dimension;
- `memref.load`: a scalar read (CSR offsets and column indices, docs/sparse.md);
- `memref.subview`: a numpy view (`tv.view` windows, strides, rank reduction);
- `memref.expand_shape`: a numpy view with unit dimensions inserted;
- `memref.load`: one element read by the scalar unit (the row offsets and
  column indices of a sparse tensor, `index` memrefs held as integer arrays),
  bounds-checked: an index outside the memref is an error naming the op.

`interp.tile.tile_interpreter` (and `gm_interpreter`, the same) registers
`GmMemRefFunctions` with `override=True` on top of xDSL's `MemRefFunctions`;
`interp.ascend_hw.gm_memref` runs the same ops on the simulator's GM tensors.
This module imports no other interpreter module: `interp.tile` builds on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IndexType,
    IntegerType,
    MemRefType,
)
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.builtin import scalar_attr
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.ir import Attribute
from xdsl.utils.exceptions import InterpretationError

from pypto_mlir.dialects import tile
from pypto_mlir.numerics import numpy_dtype


def _index(value: Any) -> int:
    return int(value.value.data) if hasattr(value, "value") else int(value)


def mixed_indices(static: Sequence[int], dynamic: Sequence[Any]) -> list[int]:
    """Static sizes/offsets with each `?` taken, in order, from `dynamic`."""
    values = iter(dynamic)
    return [_index(next(values)) if s == DYNAMIC_INDEX else s for s in static]


def poison_array(shape: Sequence[int], element_type: Attribute) -> np.ndarray:
    """A new GM buffer holding the poison pattern of its element type."""
    dtype = numpy_dtype(element_type)
    fill = np.nan if tile.is_float(element_type) else np.iinfo(dtype).min
    return np.full(tuple(shape), fill, dtype=dtype)


@register_impls
class GmMemRefFunctions(InterpreterFunctions):
    """numpy implementations of the memref ops used on GM buffers."""

    @impl(memref.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues
    ) -> PythonValues:
        memref_type = cast(MemRefType[Attribute], op.memref.type)
        shape = mixed_indices(memref_type.get_shape(), args)
        return (poison_array(shape, memref_type.get_element_type()),)

    @impl(memref.DeallocOp)
    def run_dealloc(
        self, interpreter: Interpreter, op: memref.DeallocOp, args: PythonValues
    ) -> PythonValues:
        return ()

    @impl(memref.DimOp)
    def run_dim(
        self, interpreter: Interpreter, op: memref.DimOp, args: PythonValues
    ) -> PythonValues:
        array = gm_array(args[0], cast(MemRefType[Attribute], op.source.type))
        dim = _index(args[1])
        if not 0 <= dim < array.ndim:
            raise InterpretationError(
                f"memref.dim: dimension {dim} of a rank-{array.ndim} memref"
            )
        size = array.shape[dim]
        return (scalar_attr(size, IndexType(), interpreter.index_bitwidth),)

    @impl(memref.LoadOp)
    def run_load(
        self, interpreter: Interpreter, op: memref.LoadOp, args: PythonValues
    ) -> PythonValues:
        """A scalar read of GM: an index (a CSR offset or column index) or a
        number; an index outside the memref is an error."""
        memref_type = cast(MemRefType[Attribute], op.memref.type)
        array = gm_array(args[0], memref_type)
        index = tuple(_index(a) for a in args[1:])
        if len(index) != array.ndim or any(
            not 0 <= i < d for i, d in zip(index, array.shape, strict=True)
        ):
            raise InterpretationError(
                f"memref.load: index {list(index)} is outside the memref of shape "
                f"{list(array.shape)}"
            )
        value = array[index]
        result_type = op.res.type
        if isinstance(result_type, IndexType | IntegerType):
            return (scalar_attr(int(value), result_type, interpreter.index_bitwidth),)
        return (FloatAttr(float(value), cast(Any, result_type)),)

    @impl(memref.SubviewOp)
    def run_subview(
        self, interpreter: Interpreter, op: memref.SubviewOp, args: PythonValues
    ) -> PythonValues:
        source = gm_array(args[0], cast(MemRefType[Attribute], op.source.type))
        counts = [len(op.offsets), len(op.sizes), len(op.strides)]
        dynamic = args[1:]
        offsets = mixed_indices(op.static_offsets.get_values(), dynamic[: counts[0]])
        sizes = mixed_indices(
            op.static_sizes.get_values(), dynamic[counts[0] : counts[0] + counts[1]]
        )
        strides = mixed_indices(
            op.static_strides.get_values(), dynamic[counts[0] + counts[1] :]
        )
        window: list[slice] = []
        for dim, (offset, size, stride, extent) in enumerate(
            zip(offsets, sizes, strides, source.shape, strict=True)
        ):
            last = offset + (size - 1) * stride
            if offset < 0 or stride < 1 or (size > 0 and last >= extent):
                raise InterpretationError(
                    f"memref.subview: dimension {dim} (offset {offset}, size {size}, "
                    f"stride {stride}) is outside the extent {extent}"
                )
            window.append(slice(offset, offset + size * stride, stride))
        view = source[tuple(window)]
        result_type = cast(MemRefType[Attribute], op.result.type)
        kept = _kept_shape(sizes, result_type.get_shape())
        return (view.reshape(kept),)

    @impl(memref.CollapseShapeOp)
    def run_collapse_shape(
        self, interpreter: Interpreter, op: memref.CollapseShapeOp, args: PythonValues
    ) -> PythonValues:
        """A view of the source with each group of dims merged (tv.reshape)."""
        source = gm_array(args[0], cast(MemRefType[Attribute], op.src.type))
        result_type = cast(MemRefType[Attribute], op.result.type)
        view = source.reshape(result_type.get_shape())
        if not np.shares_memory(view, source) and source.size > 0:
            raise InterpretationError(
                "memref.collapse_shape: the result is not a view of the source"
            )
        return (view,)

    @impl(memref.ExpandShapeOp)
    def run_expand_shape(
        self, interpreter: Interpreter, op: memref.ExpandShapeOp, args: PythonValues
    ) -> PythonValues:
        source = gm_array(args[0], cast(MemRefType[Attribute], op.src.type))
        shape = mixed_indices(op.static_output_shape.get_values(), args[1:])
        if int(np.prod(shape)) != source.size:
            raise InterpretationError(
                f"memref.expand_shape: {list(source.shape)} cannot become {shape}"
            )
        view = source.reshape(shape)
        if not np.shares_memory(view, source) and source.size > 0:
            raise InterpretationError(
                "memref.expand_shape: the result is not a view of the source"
            )
        return (view,)


def gm_array(value: Any, memref_type: MemRefType[Attribute]) -> np.ndarray:
    """The numpy array behind a GM memref value (a numpy array or a ShapedArray)."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, ShapedArray):
        shaped = cast(ShapedArray[Any], value)
        dtype = numpy_dtype(memref_type.get_element_type())
        raw = shaped.data_ptr.raw
        return np.frombuffer(
            raw.memory, dtype=dtype, count=shaped.size, offset=raw.offset
        ).reshape(shaped.shape)
    raise InterpretationError(
        f"expected a numpy array for {memref_type}, got {type(value)}"
    )


def kept_dims(sizes: Sequence[int], result_shape: Sequence[int]) -> list[int]:
    """The dims of a subview of `sizes` that its result keeps: the unit dims it
    drops are removed greedily from the left, as the result type lists them."""
    kept: list[int] = []
    for dim, size in enumerate(sizes):
        if len(kept) < len(result_shape) and result_shape[len(kept)] in (
            size,
            DYNAMIC_INDEX,
        ):
            kept.append(dim)
        elif size != 1:
            raise InterpretationError(
                f"memref.subview: sizes {list(sizes)} do not reduce to "
                f"{list(result_shape)}"
            )
    return kept


def _kept_shape(sizes: Sequence[int], result_shape: Sequence[int]) -> list[int]:
    return [sizes[d] for d in kept_dims(sizes, result_shape)]
