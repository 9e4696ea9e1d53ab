"""Interpreter functions of the `ascend_hw` data movement and cube ops: burst DMA
(dma_load, dma_store, dma_copy), matrix moves (nd2nz, load_l0, fixpipe), mmad.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, PythonValues, register_impls

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects.ascend_hw import RoundMode
from pypto_mlir.interp.ascend_hw.float_formats import _U8, bf16_values, convert
from pypto_mlir.interp.ascend_hw.impls import HwFunctions
from pypto_mlir.interp.ascend_hw.move_plans import (
    _BurstPlan,
    _matrix_side,
    _MatrixPlan,
    _MatrixSide,
    _MmadPlan,
)
from pypto_mlir.interp.ascend_hw.values import _bytes_of, _indices, _strided
from pypto_mlir.interp.direct_calls import direct_impl
from pypto_mlir.numerics import ordered_matmul


@register_impls
class HwMoveFunctions(HwFunctions):
    """Burst DMA, matrix moves and the cube."""

    # --- burst DMA -----------------------------------------------------------------------

    @direct_impl(hw.DmaLoadOp)
    def run_dma_load(
        self, interpreter: Interpreter, op: hw.DmaLoadOp, args: PythonValues
    ) -> PythonValues:
        index = _indices(args[1:-1])
        return self._burst_dma(op, args[0], index, args[-1], ())

    @direct_impl(hw.DmaStoreOp)
    def run_dma_store(
        self, interpreter: Interpreter, op: hw.DmaStoreOp, args: PythonValues
    ) -> PythonValues:
        index = _indices(args[2:])
        return self._burst_dma(op, args[0], (), args[1], index)

    @direct_impl(hw.DmaCopyOp)
    def run_dma_copy(
        self, interpreter: Interpreter, op: hw.DmaCopyOp, args: PythonValues
    ) -> PythonValues:
        return self._burst_dma(op, args[0], (), args[1], ())

    def _burst_dma(
        self,
        op: hw.BurstDmaOp,
        src: Any,
        src_index: tuple[int, ...],
        dst: Any,
        dst_index: tuple[int, ...],
    ) -> PythonValues:
        """Burst b copies `burst_bytes` from src + b * src_pitch to dst + b * dst_pitch."""
        runtime = self.runtime
        plan = runtime.plans.get(id(op))
        if plan is None:
            plan = runtime.plans[id(op)] = _BurstPlan(op, runtime.target)
        core = runtime.core
        src_access = plan.access(src, src_index, plan.src_pitch, plan.src_sides)
        dst_access = plan.access(dst, dst_index, plan.dst_pitch, plan.dst_sides)
        src_mem, src_addr = src_access.mem, src_access.start
        dst_mem, dst_addr = dst_access.mem, dst_access.start
        bursts, length, loc = plan.bursts, plan.length, plan.loc
        cycles, wire = plan.cost(src_addr, dst_addr)
        core.issue_planned(
            plan.pipe_index,
            plan.name,
            loc,
            cycles,
            (src_access,),
            (dst_access,),
            plan.path_info,
            bursts * length,
            wire,
        )
        if bursts == 1:
            src_view = core.byte_view(src_mem)
            dst_view = core.byte_view(dst_mem)
            if src_view is not None and dst_view is not None:
                # memoryview slices copy a short burst in half numpy's time
                dst_view[dst_addr : dst_addr + length] = src_view[
                    src_addr : src_addr + length
                ]
                return ()
        src_bytes = _bytes_of(core, src_mem)
        dst_bytes = _bytes_of(core, dst_mem)
        shape = (bursts, length)
        _strided(dst_bytes, dst_addr, shape, (plan.dst_pitch, 1), _U8)[...] = _strided(
            src_bytes, src_addr, shape, (plan.src_pitch, 1), _U8
        )
        return ()

    # --- matrix moves ----------------------------------------------------------------------

    @direct_impl(hw.Nd2NzOp)
    def run_nd2nz(
        self, interpreter: Interpreter, op: hw.Nd2NzOp, args: PythonValues
    ) -> PythonValues:
        return self._matrix_move(op, args)

    @direct_impl(hw.LoadL0Op)
    def run_load_l0(
        self, interpreter: Interpreter, op: hw.LoadL0Op, args: PythonValues
    ) -> PythonValues:
        return self._matrix_move(op, args)

    @direct_impl(hw.FixpipeOp)
    def run_fixpipe(
        self, interpreter: Interpreter, op: hw.FixpipeOp, args: PythonValues
    ) -> PythonValues:
        return self._matrix_move(op, args)

    def _matrix_move(self, op: hw.MatrixMoveOp, args: PythonValues) -> PythonValues:
        """dst[d0 + r, d1 + c] = convert(src[s0 + r, s1 + c]) (or src[s0 + c, s1 + r])."""
        runtime = self.runtime
        core = runtime.core
        plan = runtime.plans.get(id(op))
        if plan is None:
            plan = runtime.plans[id(op)] = _MatrixPlan(op, runtime.target)
        n_src = plan.n_src
        src, dst = args[0], args[1 + n_src]
        src_index = _indices(args[1 : 1 + n_src])
        dst_index = _indices(args[2 + n_src :])
        rows, cols = plan.rows, plan.cols
        src_block = (cols, rows) if plan.transposed else (rows, cols)
        frac, loc = plan.fractal_rows, plan.loc
        source = _matrix_side(core, src, src_index, src_block, frac, loc)
        destination = _matrix_side(core, dst, dst_index, (rows, cols), frac, loc)
        cycles, wire = plan.cost(source, destination)
        core.issue(
            plan.pipe,
            plan.name,
            loc,
            cycles,
            reads=source.accesses,
            writes=destination.accesses,
            path=plan.path,
            nbytes=sum(a.nbytes for a in destination.accesses),
            wire_bytes=wire,
        )
        if not plan.transposed and plan.convert_to is None:
            src_blocks = source.blocks()
            dst_blocks = destination.blocks()
            if (
                src_blocks is not None
                and dst_blocks is not None
                and src_blocks.shape == dst_blocks.shape
                and source.mem is not destination.mem
            ):
                dst_blocks[...] = src_blocks  # nz to nz: block by block
                return ()
        values = source.read()
        if plan.transposed:
            values = values.T
        if plan.convert_to is not None:
            values = convert(values, plan.src_type, plan.convert_to, RoundMode.RINT)
        destination.write(values)
        return ()

    # --- cube ----------------------------------------------------------------------------------

    @direct_impl(hw.MmadOp)
    def run_mmad(
        self, interpreter: Interpreter, op: hw.MmadOp, args: PythonValues
    ) -> PythonValues:
        """C[:m, :n] = (C if accumulate else 0) + A[:m, :k] @ B[:k, :n] in f32 (i32)."""
        runtime = self.runtime
        core = runtime.core
        plan = runtime.plans.get(id(op))
        if plan is None:
            plan = runtime.plans[id(op)] = _MmadPlan(op, runtime.target)
        m, n, k = plan.mnk
        frac, loc = plan.fractal_rows, plan.loc
        a = _matrix_side(core, args[0], (0, 0), (m, k), frac, loc)
        b = _matrix_side(core, args[1], (0, 0), (k, n), frac, loc)
        c = _matrix_side(core, args[2], (0, 0), (m, n), frac, loc)
        reads = a.accesses + b.accesses + (c.accesses if plan.accumulate else ())
        core.issue(
            "M",
            "mmad",
            loc,
            plan.cycles,
            reads=reads,
            writes=c.accesses,
            head=runtime.target.cube.head_cycles,
        )
        compute = plan.compute_dtype
        left, right = _operand(a, compute, plan.bf16), _operand(b, compute, plan.bf16)
        c_blocks = c.blocks()
        # L0C's sum continues in k order from C (or 0)
        result = ordered_matmul(left, right, c.read() if plan.accumulate else None)
        if c_blocks is not None and c_blocks.dtype == result.dtype:
            c_blocks[...] = result.reshape(c_blocks.shape)  # nz blocks in place
            return ()
        c.write(result)
        return ()


def _operand(side: _MatrixSide, compute: np.dtype[Any], bf16: bool) -> np.ndarray:
    """An mmad operand as a contiguous `compute` array (`side.read()` converted,
    with one copy when its nz blocks fill whole columns)."""
    blocks = None if bf16 else side.blocks()
    if blocks is None:
        values = side.read()
        return (bf16_values(values) if bf16 else values).astype(compute)
    return blocks.astype(compute, order="C").reshape(side.rows, side.cols)
