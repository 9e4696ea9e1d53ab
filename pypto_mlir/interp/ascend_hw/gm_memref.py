"""The GM `memref` ops of `tv-to-tile` output, on the simulator's GM tensors.

`tile-to-hw` keeps the `memref` ops that `tv-to-tile` uses to address GM
(docs/tiling.md, *Calling convention*): `memref.alloc`/`dealloc` (GM
temporaries, e.g. FFN's hidden activation), `memref.dim`, `memref.subview`
(`tv.view` windows) and `memref.expand_shape` (rank-expanding broadcasts). At the
`ascend_hw` level a GM memref is a `GmRef` (a simulator `GmTensor` and a strided
layout), so these run here as layout arithmetic on `GmRef`s; `interp.gm_memref`
is the same on numpy arrays for the `tile` level.

A `memref.alloc` is a GM workspace of the kernel: one tensor per op, shared by
the cores (as a workspace on the chip is), filled with a poison pattern (NaN /
the smallest integer) so that reading it before writing shows in the results.
Its traffic is counted like any GM tensor's.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType, bf16
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)
from xdsl.interpreters.builtin import scalar_attr
from xdsl.ir import Attribute, Operation

from pypto_mlir.interp.ascend_hw.errors import HwRunError
from pypto_mlir.interp.ascend_hw.float_formats import bf16_bits, storage_dtype
from pypto_mlir.interp.ascend_hw.runtime import HwRuntime
from pypto_mlir.interp.ascend_hw.values import GmRef
from pypto_mlir.interp.gm_memref import kept_dims, mixed_indices, poison_array


def _ref(value: Any, op: Operation) -> GmRef:
    if not isinstance(value, GmRef):
        raise HwRunError(f"'{op.name}' expects a GM memref, got {value!r}")
    return value


@register_impls
class HwGmMemRefFunctions(InterpreterFunctions):
    """`GmRef` implementations of the memref ops used on GM buffers."""

    def __init__(self, runtime: HwRuntime):
        self.runtime = runtime
        # Shared by the interpreters of the cores (one per core with sync_all).
        self.workspaces: dict[Operation, GmRef] = runtime.workspaces

    @impl(memref.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: memref.AllocOp, args: PythonValues
    ) -> PythonValues:
        memref_type = cast(MemRefType[Attribute], op.memref.type)
        shape = tuple(mixed_indices(memref_type.get_shape(), args))
        known = self.workspaces.get(op)
        if known is not None and known.shape == shape:
            return (known,)
        element_type = memref_type.get_element_type()
        dtype = storage_dtype(element_type)
        data = poison_array(shape, element_type)
        if element_type == bf16:
            data = bf16_bits(data)
        machine = self.runtime.machine
        base = op.memref.name_hint or "workspace"
        name, count = base, 1
        while name in {t.name for t in machine.gm_tensors}:
            name, count = f"{base}.{count}", count + 1
        tensor = machine.register_gm(name, np.ascontiguousarray(data, dtype))
        strides = tuple(
            int(np.prod(shape[d + 1 :], dtype=np.int64)) for d in range(len(shape))
        )
        ref = GmRef(tensor, shape, strides, 0, dtype)
        self.workspaces[op] = ref
        return (ref,)

    @impl(memref.DeallocOp)
    def run_dealloc(
        self, interpreter: Interpreter, op: memref.DeallocOp, args: PythonValues
    ) -> PythonValues:
        return ()

    @impl(memref.DimOp)
    def run_dim(
        self, interpreter: Interpreter, op: memref.DimOp, args: PythonValues
    ) -> PythonValues:
        ref = _ref(args[0], op)
        (dim,) = mixed_indices([DYNAMIC_INDEX], args[1:])  # the index operand
        if not 0 <= dim < len(ref.shape):
            raise HwRunError(
                f"memref.dim: dimension {dim} of a rank-{len(ref.shape)} memref"
            )
        return (scalar_attr(ref.shape[dim], IndexType(), interpreter.index_bitwidth),)

    @impl(memref.SubviewOp)
    def run_subview(
        self, interpreter: Interpreter, op: memref.SubviewOp, args: PythonValues
    ) -> PythonValues:
        source = _ref(args[0], op)
        counts = [len(op.offsets), len(op.sizes), len(op.strides)]
        dynamic = args[1:]
        offsets = mixed_indices(op.static_offsets.get_values(), dynamic[: counts[0]])
        sizes = mixed_indices(
            op.static_sizes.get_values(), dynamic[counts[0] : counts[0] + counts[1]]
        )
        steps = mixed_indices(
            op.static_strides.get_values(), dynamic[counts[0] + counts[1] :]
        )
        offset = source.offset
        strides: list[int] = []
        for dim, (start, size, step, extent, stride) in enumerate(
            zip(offsets, sizes, steps, source.shape, source.strides, strict=True)
        ):
            last = start + (size - 1) * step
            if start < 0 or step < 1 or (size > 0 and last >= extent):
                raise HwRunError(
                    f"memref.subview: dimension {dim} (offset {start}, size {size}, "
                    f"stride {step}) is outside the extent {extent}"
                )
            offset += start * stride
            strides.append(stride * step)
        result_type = cast(MemRefType[Attribute], op.result.type)
        kept = kept_dims(sizes, result_type.get_shape())
        return (
            GmRef(
                source.tensor,
                tuple(sizes[d] for d in kept),
                tuple(strides[d] for d in kept),
                offset,
                source.dtype,
            ),
        )

    @impl(memref.CollapseShapeOp)
    def run_collapse_shape(
        self, interpreter: Interpreter, op: memref.CollapseShapeOp, args: PythonValues
    ) -> PythonValues:
        """Each group of dims merged into one: the group's dims must be
        contiguous in the source (tv.reshape of a contiguous tensor)."""
        source = _ref(args[0], op)
        groups = [[int(i.value.data) for i in g.data] for g in op.reassociation.data]
        shape: list[int] = []
        strides: list[int] = []
        for group in groups:
            inner = source.strides[group[-1]] if group else 1
            expected = inner
            for d in reversed(group):
                if source.shape[d] != 1 and source.strides[d] != expected:
                    raise HwRunError(
                        f"memref.collapse_shape: dims {group} of a memref with "
                        f"strides {list(source.strides)} are not contiguous"
                    )
                expected *= source.shape[d]
            shape.append(int(np.prod([source.shape[d] for d in group])))
            strides.append(inner)
        return (
            GmRef(
                source.tensor, tuple(shape), tuple(strides), source.offset, source.dtype
            ),
        )

    @impl(memref.ExpandShapeOp)
    def run_expand_shape(
        self, interpreter: Interpreter, op: memref.ExpandShapeOp, args: PythonValues
    ) -> PythonValues:
        source = _ref(args[0], op)
        shape = mixed_indices(op.static_output_shape.get_values(), args[1:])
        groups = [[int(i.value.data) for i in g.data] for g in op.reassociation.data]
        if len(groups) != len(source.shape):
            raise HwRunError(
                f"memref.expand_shape: {len(groups)} groups for a rank-"
                f"{len(source.shape)} memref"
            )
        strides = [0] * len(shape)
        for group, size, stride in zip(
            groups, source.shape, source.strides, strict=True
        ):
            if int(np.prod([shape[d] for d in group])) != size:
                raise HwRunError(
                    f"memref.expand_shape: {list(source.shape)} cannot become {shape}"
                )
            inner = stride
            for d in reversed(group):
                strides[d] = inner
                inner *= shape[d]
        return (
            GmRef(
                source.tensor, tuple(shape), tuple(strides), source.offset, source.dtype
            ),
        )
