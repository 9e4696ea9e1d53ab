"""Numerics of the vector op families: the kernels that run repeats [lo, hi).

Float arithmetic is evaluated in f32 and rounded once to the destination type;
integers wrap. See the op docstrings in `dialects/ascend_hw.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import pypto_mlir.op_facts as op_facts
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects.ascend_hw import CmpMode, RoundMode
from pypto_mlir.interp.ascend_hw.float_formats import _F32, _to_compute, convert
from pypto_mlir.interp.ascend_hw.vector_plans import _VectorCall, _VectorPlan


def _arith(fn: Callable[..., np.ndarray], dtype: np.dtype[Any], *values: Any):
    """`fn` evaluated in f32 for floats and rounded once to `dtype`; ints wrap."""
    if dtype.kind == "f":
        return fn(*(_to_compute(v) for v in values)).astype(dtype, copy=False)
    return np.asarray(fn(*values)).astype(dtype, copy=False)


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, x.dtype.type(0))


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return np.float32(1) / np.sqrt(x)


def _reciprocal(x: np.ndarray) -> np.ndarray:
    return np.float32(1) / x


def _sum(x: np.ndarray) -> np.ndarray:
    return np.sum(_to_compute(x), axis=1, dtype=np.float32)


_BINARY: dict[type[hw.VectorBinaryOp], Callable[..., np.ndarray]] = {
    hw.VAddOp: np.add,
    hw.VSubOp: np.subtract,
    hw.VMulOp: np.multiply,
    hw.VDivOp: np.divide,
    hw.VMaxOp: np.maximum,
    hw.VMinOp: np.minimum,
}
_SCALAR: dict[type[hw.VectorScalarOp], Callable[..., np.ndarray]] = {
    hw.VAddsOp: np.add,
    hw.VMulsOp: np.multiply,
    hw.VMaxsOp: np.maximum,
    hw.VMinsOp: np.minimum,
}
_UNARY: dict[type[hw.VectorUnaryOp], Callable[..., np.ndarray]] = {
    hw.VExpOp: np.exp,
    hw.VLnOp: np.log,
    hw.VAbsOp: np.abs,
    hw.VReluOp: _relu,
    hw.VSqrtOp: np.sqrt,
    hw.VRsqrtOp: _rsqrt,
    hw.VReciprocalOp: _reciprocal,
}
_REDUCE: dict[type[hw.VectorReduceOp], Callable[..., np.ndarray]] = {
    hw.VReduceSumOp: _sum,
    hw.VReduceMaxOp: lambda x: np.max(x, axis=1),
    hw.VReduceMinOp: lambda x: np.min(x, axis=1),
}
_BLOCK_REDUCE: dict[type[hw.VectorBlockReduceOp], Callable[..., np.ndarray]] = {
    hw.VBlockReduceMaxOp: np.max,
    hw.VBlockReduceMinOp: np.min,
}
VectorKernel = Callable[["_VectorPlan", "_VectorCall", int, int], None]
"""Runs repeats [lo, hi) of a vector op: reads its operands, computes, writes."""


_EXACT_UFUNCS = frozenset(
    (np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum)
    + (np.abs, np.sqrt)
)
"""Ufuncs whose f32 result is correctly rounded (IEEE): the same whichever numpy
loop (SIMD or not, buffered or not) computes them. exp and ln are not: their
SIMD and scalar loops may differ in the last bit, so they keep one code path."""


def _elementwise_kernel(fn: Callable[..., np.ndarray], inputs: int) -> VectorKernel:
    """`dst = fn(lane inputs..., [scalar])` for ops whose last lane operand is dst."""
    exact = fn in _EXACT_UFUNCS

    def kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
        operands = call.operands
        if exact and call.whole is not None and hi - lo == plan.repeat:
            # One ufunc call on the views: numpy casts to f32, computes and
            # rounds once into dst, as `_arith` does in four steps (inputs that
            # overlap dst are read first, as numpy guarantees for ufuncs). Not
            # the f16 loop: its results are equal but when both operands are
            # NaN it may keep the other one's payload.
            args = call.whole[:inputs]
            if call.scalar is not None:
                args = (*args, call.scalar)
            fn(*args, out=call.whole[inputs], dtype=_F32)
            return
        args = [operands[i].read(lo, hi) for i in range(inputs)]
        if call.scalar is not None:
            args.append(call.scalar)
        operands[inputs].write(lo, hi, _arith(fn, plan.dtypes[inputs], *args))

    return kernel


def _copy_kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
    src, dst = call.operands
    dst.write(lo, hi, src.read(lo, hi))


def _cast_kernel(mode: RoundMode) -> VectorKernel:
    def kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
        src, dst = call.operands
        values = convert(src.read(lo, hi), *plan.element_types, mode)
        dst.write(lo, hi, values)

    return kernel


def _reduce_kernel(fn: Callable[..., np.ndarray]) -> VectorKernel:
    def kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
        src, dst = call.operands
        result = fn(src.read(lo, hi)).astype(plan.dtypes[1], copy=False)
        dst.write(lo, hi, result)

    return kernel


def _block_reduce_kernel(fn: Callable[..., np.ndarray]) -> VectorKernel:
    """Each 32-byte block of a repeat reduced to one value (whole repeats)."""

    def kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
        src, dst = call.operands
        values = src.read(lo, hi)
        per_block = 32 // plan.dtypes[0].itemsize
        blocks = values.reshape(values.shape[0], -1, per_block)
        dst.write(lo, hi, fn(blocks, axis=2).astype(plan.dtypes[1], copy=False))

    return kernel


def _dup_kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
    (dst,) = call.operands
    bits = np.asarray(call.scalar).view(plan.dtypes[0])
    dst.write(lo, hi, np.full((hi - lo, plan.active.size), bits))


def _brcb_kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
    dst, src = call.operands
    per_block = 32 // plan.dtypes[0].itemsize
    dst.write(lo, hi, np.repeat(src.read(lo, hi), per_block, axis=1))


def _compare_kernel(mode: CmpMode) -> VectorKernel:
    """Compare bits of a repeat: enabled lanes' results, 0 for the others."""
    fn = op_facts.COMPARE[mode]

    def kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
        *inputs, bits_out = call.operands
        args = [_to_compute(lanes.read(lo, hi)) for lanes in inputs]
        if call.scalar is not None:
            args.append(_to_compute(np.asarray(call.scalar)))
        bits = np.zeros((hi - lo, plan.lanes), dtype=bool)
        bits[:, plan.active] = fn(*args)
        bits_out.write(lo, hi, np.packbits(bits, axis=1, bitorder="little"))

    return kernel


def _select_kernel(plan: _VectorPlan, call: _VectorCall, lo: int, hi: int) -> None:
    a, b, dst, cond = call.operands
    active = plan.active
    touched = np.unique(active // 8)
    column = np.searchsorted(touched, active // 8)
    bits = (cond.read(lo, hi)[:, column] >> (active % 8).astype(np.uint8)) & 1
    dst.write(lo, hi, np.where(bits.astype(bool), a.read(lo, hi), b.read(lo, hi)))
