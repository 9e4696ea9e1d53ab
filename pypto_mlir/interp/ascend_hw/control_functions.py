"""Interpreter functions of the `ascend_hw` buffer, core and synchronisation ops:
alloc and subview, block_idx and block_dim, scalar reads (load_scalar), set/wait
flags, barriers, sync_all.
"""

from __future__ import annotations

from typing import cast

import numpy as np
from xdsl.dialects.builtin import IndexType, IntegerType
from xdsl.interpreter import Interpreter, PythonValues, register_impls
from xdsl.interpreters.builtin import scalar_attr

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects.ascend_hw import BufferType, element_offset
from pypto_mlir.interp.ascend_hw.errors import _at, _op_loc
from pypto_mlir.interp.ascend_hw.impls import HwFunctions
from pypto_mlir.interp.ascend_hw.values import (
    _INSTANCE_LIMIT,
    GmRef,
    HwBuffer,
    _indices,
)
from pypto_mlir.interp.direct_calls import direct_impl
from pypto_mlir.interp.index_arith import float_attr, int_attr
from pypto_mlir.sim import Access, AccessError, GmTensor


def _element_address(
    buffer: HwBuffer, index: tuple[int, ...], loc: str, name: str
) -> int:
    """The byte address of element `index` of an `nd` buffer; an index outside
    it is an error naming the instruction, never a silent access."""
    shape = buffer.info.shape
    if any(not 0 <= i < d for i, d in zip(index, shape, strict=True)):
        raise AccessError(
            f"{_at(loc)}{name}: index {list(index)} is outside {buffer.type}", (loc,)
        )
    element = 0
    for i, d in zip(index, shape, strict=True):
        element = element * d + i
    return buffer.address + element * buffer.info.ebytes


@register_impls
class HwControlFunctions(HwFunctions):
    """Buffers, core indices and synchronisation."""

    # --- buffers -----------------------------------------------------------------------

    @direct_impl(hw.AllocOp)
    def run_alloc(
        self, interpreter: Interpreter, op: hw.AllocOp, args: PythonValues
    ) -> PythonValues:
        runtime = self.runtime
        buffer = runtime.plans.get(id(op))
        if buffer is None:
            buffer_type = cast(BufferType, op.result.type)
            space = str(buffer_type.memory_space)
            buffer = HwBuffer(space, op.byte_offset, buffer_type, runtime.target)
            runtime.plans[id(op)] = buffer
        key = (runtime.core.index, op)
        if key not in runtime.noted_allocs:
            runtime.noted_allocs.add(key)
            runtime.core.note_alloc(
                buffer.space, buffer.address, buffer.info.nbytes, runtime.loc(op)
            )
        return (buffer,)

    @direct_impl(hw.SubviewOp)
    def run_subview(
        self, interpreter: Interpreter, op: hw.SubviewOp, args: PythonValues
    ) -> PythonValues:
        source = cast(HwBuffer, args[0])
        index = _indices(args[1:])
        views = self.runtime.plans.get(id(op))
        if views is None:
            views = self.runtime.plans[id(op)] = {}
        key = (source.address, index)
        buffer = views.get(key)
        if buffer is None:
            buffer = self._subview(op, source, index)
            if len(views) >= _INSTANCE_LIMIT:
                views.clear()
            views[key] = buffer
        return (buffer,)

    def _subview(
        self, op: hw.SubviewOp, source: HwBuffer, index: tuple[int, ...]
    ) -> HwBuffer:
        target = self.runtime.target
        loc = self.runtime.loc(op)
        result_type = cast(BufferType, op.result.type)
        if any(not 0 <= i < d for i, d in zip(index, source.info.shape, strict=True)):
            raise AccessError(
                f"{_at(loc)}subview index {list(index)} is outside the source shape "
                f"{list(source.info.shape)}",
                (loc,),
            )
        start = element_offset(source.type, index, target) * source.info.ebytes
        size = result_type.byte_size()
        if start + size > source.info.nbytes:
            raise AccessError(
                f"{_at(loc)}subview bytes [{start}, {start + size}) run past the "
                f"{source.info.nbytes} bytes of the source",
                (loc,),
            )
        alignment = target.memories[source.space].alignment
        if (source.address + start) % alignment:
            raise AccessError(
                f"{_at(loc)}subview starts at {source.space} byte "
                f"{source.address + start}, not a multiple of {alignment}",
                (loc,),
            )
        return HwBuffer(source.space, source.address + start, result_type, target)

    # --- cores ---------------------------------------------------------------------------

    @direct_impl(hw.BlockIdxOp)
    def run_block_idx(
        self, interpreter: Interpreter, op: hw.BlockIdxOp, args: PythonValues
    ) -> PythonValues:
        runtime = self.runtime
        runtime.core.issue("S", "block_idx", runtime.loc(op), runtime.target.scalar.op)
        return (
            scalar_attr(runtime.core.index, IndexType(), interpreter.index_bitwidth),
        )

    @direct_impl(hw.BlockDimOp)
    def run_block_dim(
        self, interpreter: Interpreter, op: hw.BlockDimOp, args: PythonValues
    ) -> PythonValues:
        runtime = self.runtime
        runtime.core.issue("S", "block_dim", runtime.loc(op), runtime.target.scalar.op)
        dim = runtime.machine.block_dim
        return (scalar_attr(dim, IndexType(), interpreter.index_bitwidth),)

    # --- scalar reads --------------------------------------------------------------------

    @direct_impl(hw.LoadScalarOp)
    def run_load_scalar(
        self, interpreter: Interpreter, op: hw.LoadScalarOp, args: PythonValues
    ) -> PythonValues:
        """One element of GM or UB, read on S (`Core.scalar_load` prices it)."""
        runtime = self.runtime
        loc = runtime.loc(op)
        source, index = args[0], _indices(args[1:])
        if isinstance(source, GmRef):
            address = source.byte_address(index, loc, source.ebytes, "load_scalar")
            mem: str | GmTensor = source.tensor
            dtype = source.dtype
        else:
            buffer = cast(HwBuffer, source)
            address = _element_address(buffer, index, loc, "load_scalar")
            mem, dtype = buffer.space, buffer.info.dtype
        access = Access.range(mem, address, address + dtype.itemsize)
        core = runtime.core
        core.scalar_load("load_scalar", loc, access)
        data = mem.bytes if isinstance(mem, GmTensor) else core.memories[mem]
        value = data[address : address + dtype.itemsize].view(dtype)[0]
        result_type = op.result.type
        if isinstance(result_type, IndexType | IntegerType):
            return (int_attr(int(value), result_type, interpreter.index_bitwidth),)
        return (float_attr(value, result_type),)

    @direct_impl(hw.StoreScalarOp)
    def run_store_scalar(
        self, interpreter: Interpreter, op: hw.StoreScalarOp, args: PythonValues
    ) -> PythonValues:
        """One element of a ub buffer, written on S (`scalar.ub_store` cycles)."""
        runtime = self.runtime
        loc = runtime.loc(op)
        buffer = cast(HwBuffer, args[1])
        address = _element_address(buffer, _indices(args[2:]), loc, "store_scalar")
        dtype = buffer.info.dtype
        access = Access.range(buffer.space, address, address + dtype.itemsize)
        core = runtime.core
        core.issue(
            "S", "store_scalar", loc, runtime.target.scalar.ub_store, writes=(access,)
        )
        raw = args[0]
        scalar = raw.value.data if hasattr(raw, "value") else raw
        data = core.memories[buffer.space]
        data[address : address + dtype.itemsize] = (
            np.asarray(scalar).astype(dtype).reshape(1).view(np.uint8)
        )
        return ()

    # --- synchronisation -------------------------------------------------------------

    @direct_impl(hw.SetFlagOp)
    def run_set_flag(
        self, interpreter: Interpreter, op: hw.SetFlagOp, args: PythonValues
    ) -> PythonValues:
        runtime = self.runtime
        key, loc = runtime.plans.get(id(op)) or self._flag(op)
        runtime.core.set_flag_key(key, loc)
        return ()

    @direct_impl(hw.WaitFlagOp)
    def run_wait_flag(
        self, interpreter: Interpreter, op: hw.WaitFlagOp, args: PythonValues
    ) -> PythonValues:
        runtime = self.runtime
        key, loc = runtime.plans.get(id(op)) or self._flag(op)
        runtime.core.wait_flag_key(key, loc)
        return ()

    def _flag(self, op: hw.FlagOp) -> tuple[tuple[int, int, int], str]:
        """The op's checked event key (EventError at the op if bad) and its loc."""
        runtime = self.runtime
        loc = _op_loc(op)
        key = runtime.core.event_key(
            str(op.src_pipe), str(op.dst_pipe), op.event_id, loc
        )
        plan = runtime.plans[id(op)] = (key, loc)
        return plan

    @direct_impl(hw.PipeBarrierOp)
    def run_pipe_barrier(
        self, interpreter: Interpreter, op: hw.PipeBarrierOp, args: PythonValues
    ) -> PythonValues:
        self.runtime.core.barrier(str(op.pipe), self.runtime.loc(op))
        return ()

    @direct_impl(hw.SyncAllOp)
    def run_sync_all(
        self, interpreter: Interpreter, op: hw.SyncAllOp, args: PythonValues
    ) -> PythonValues:
        runtime = self.runtime
        runtime.core.sync_all(runtime.loc(op))
        if runtime.threads is not None:  # the other cores run up to it first
            runtime.threads.sync_all()
        return ()
