"""Interpreter functions of the `ascend_hw` vector ops.

Each op is an `@impl` method that runs the kernel of its family (`_VectorFamily`:
binary, scalar, unary, copy, cast, reduce, dup, brcb, compare, select) through
`_run_vector`, which looks up the op's plan and the call at these operand
addresses, issues the record and runs the repeats; `vgather` reads
data-dependent addresses and has a function of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from xdsl.interpreter import Interpreter, PythonValues, register_impls
from xdsl.ir import Attribute, Operation

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw.errors import _at
from pypto_mlir.interp.ascend_hw.float_formats import scalar_value
from pypto_mlir.interp.ascend_hw.impls import HwFunctions
from pypto_mlir.interp.ascend_hw.lanes import _Lanes, make_pattern
from pypto_mlir.interp.ascend_hw.runtime import HwRuntime
from pypto_mlir.interp.ascend_hw.values import _INSTANCE_LIMIT, HwBuffer, _element_type
from pypto_mlir.interp.ascend_hw.vector_kernels import (
    _BINARY,
    _BLOCK_REDUCE,
    _REDUCE,
    _SCALAR,
    _UNARY,
    VectorKernel,
    _block_reduce_kernel,
    _brcb_kernel,
    _cast_kernel,
    _compare_kernel,
    _copy_kernel,
    _dup_kernel,
    _elementwise_kernel,
    _reduce_kernel,
    _select_kernel,
)
from pypto_mlir.interp.ascend_hw.vector_plans import (
    _V,
    _vector_call,
    _vector_plan,
    _VectorCall,
    _VectorPlan,
)
from pypto_mlir.interp.direct_calls import direct_impl
from pypto_mlir.sim import AccessError


@dataclass(frozen=True, slots=True)
class _VectorFamily:
    """How the ops of one vector family run.

    `operands(args)` orders an op's run-time operands as `_run_vector` wants them
    (the lane-addressed buffers in `lane_operands()` order, then the buffers
    addressed per repeat, see `_side_patterns`) and picks the scalar operand;
    `make_kernel(op)` builds the kernel (once per op: kernels depend on the op's
    class and properties only); `scalar_type(op)` is the type the scalar
    operand is read as.
    """

    make_kernel: Callable[[Any], VectorKernel]
    operands: Callable[[PythonValues], tuple[Sequence[HwBuffer], Any]]
    scalar_type: Callable[[Any], Attribute] | None = None


def _dst_type(op: hw.VectorOp) -> Attribute:
    return _element_type(cast(Any, op).dst)


def _src_type(op: hw.VectorOp) -> Attribute:
    return _element_type(cast(Any, op).src)


def _in_order(args: PythonValues) -> tuple[Sequence[HwBuffer], Any]:
    return args, None


_BINARY_FAMILY = _VectorFamily(
    lambda op: _elementwise_kernel(_BINARY[type(op)], 2), _in_order
)
_SCALAR_FAMILY = _VectorFamily(
    lambda op: _elementwise_kernel(_SCALAR[type(op)], 1),
    lambda args: ((args[0], args[2]), args[1]),
    _dst_type,
)
_UNARY_FAMILY = _VectorFamily(
    lambda op: _elementwise_kernel(_UNARY[type(op)], 1), _in_order
)
_COPY_FAMILY = _VectorFamily(lambda op: _copy_kernel, _in_order)
_CAST_FAMILY = _VectorFamily(lambda op: _cast_kernel(op.round.data), _in_order)
_REDUCE_FAMILY = _VectorFamily(lambda op: _reduce_kernel(_REDUCE[type(op)]), _in_order)
_BLOCK_REDUCE_FAMILY = _VectorFamily(
    lambda op: _block_reduce_kernel(_BLOCK_REDUCE[type(op)]), _in_order
)
_DUP_FAMILY = _VectorFamily(
    lambda op: _dup_kernel, lambda a: ((a[1],), a[0]), _dst_type
)
_BRCB_FAMILY = _VectorFamily(lambda op: _brcb_kernel, lambda a: ((a[1], a[0]), None))
_CMP_FAMILY = _VectorFamily(lambda op: _compare_kernel(op.cmp.data), _in_order)
_CMPS_FAMILY = _VectorFamily(
    lambda op: _compare_kernel(op.cmp.data), lambda a: ((a[0], a[2]), a[1]), _src_type
)
_SELECT_FAMILY = _VectorFamily(
    lambda op: _select_kernel, lambda a: ((a[1], a[2], a[3], a[0]), None)
)


@register_impls
class HwVectorFunctions(HwFunctions):
    """The vector ops: one `@impl` per op, each running its family's kernel."""

    def __init__(self, runtime: HwRuntime):
        super().__init__(runtime)
        self.kernels: dict[int, tuple[Operation, VectorKernel]] = {}
        """id(op) -> (op, its kernel); the op is kept so that its id is not reused."""

    def _run_vector(
        self, op: hw.VectorOp, args: PythonValues, family: _VectorFamily
    ) -> PythonValues:
        """Issue a vector op and run its family's kernel on its repeats."""
        entry = self.kernels.get(id(op))
        if entry is not None and entry[0] is op:
            kernel = entry[1]
        else:
            kernel = family.make_kernel(op)
            self.kernels[id(op)] = (op, kernel)
        operands, scalar = family.operands(args)
        if scalar is not None and family.scalar_type is not None:
            scalar = scalar_value(scalar, family.scalar_type(op))
        runtime = self.runtime
        plan = runtime.plans.get(id(op))
        if plan is None:
            plan = runtime.plans[id(op)] = _vector_plan(op, runtime.target)
        core = runtime.core
        key = (core.index, *[b.address for b in operands])
        call = plan.calls.get(key)
        if call is None:
            call = _vector_call(plan, core, operands, None)
            if len(plan.calls) >= _INSTANCE_LIMIT:
                plan.calls.clear()
            plan.calls[key] = call
        core.issue_planned(
            _V,
            plan.name,
            plan.loc,
            call.cycles,
            call.reads,
            call.writes,
            bank_cycles=call.bank_cycles,
            head=plan.head,
        )
        _run_repeats(plan, call, kernel, scalar)
        return ()

    @direct_impl(hw.VAddOp)
    def run_vadd(
        self, interpreter: Interpreter, op: hw.VAddOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _BINARY_FAMILY)

    @direct_impl(hw.VSubOp)
    def run_vsub(
        self, interpreter: Interpreter, op: hw.VSubOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _BINARY_FAMILY)

    @direct_impl(hw.VMulOp)
    def run_vmul(
        self, interpreter: Interpreter, op: hw.VMulOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _BINARY_FAMILY)

    @direct_impl(hw.VDivOp)
    def run_vdiv(
        self, interpreter: Interpreter, op: hw.VDivOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _BINARY_FAMILY)

    @direct_impl(hw.VMaxOp)
    def run_vmax(
        self, interpreter: Interpreter, op: hw.VMaxOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _BINARY_FAMILY)

    @direct_impl(hw.VMinOp)
    def run_vmin(
        self, interpreter: Interpreter, op: hw.VMinOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _BINARY_FAMILY)

    @direct_impl(hw.VAddsOp)
    def run_vadds(
        self, interpreter: Interpreter, op: hw.VAddsOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _SCALAR_FAMILY)

    @direct_impl(hw.VMulsOp)
    def run_vmuls(
        self, interpreter: Interpreter, op: hw.VMulsOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _SCALAR_FAMILY)

    @direct_impl(hw.VMaxsOp)
    def run_vmaxs(
        self, interpreter: Interpreter, op: hw.VMaxsOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _SCALAR_FAMILY)

    @direct_impl(hw.VMinsOp)
    def run_vmins(
        self, interpreter: Interpreter, op: hw.VMinsOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _SCALAR_FAMILY)

    @direct_impl(hw.VExpOp)
    def run_vexp(
        self, interpreter: Interpreter, op: hw.VExpOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _UNARY_FAMILY)

    @direct_impl(hw.VLnOp)
    def run_vln(
        self, interpreter: Interpreter, op: hw.VLnOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _UNARY_FAMILY)

    @direct_impl(hw.VAbsOp)
    def run_vabs(
        self, interpreter: Interpreter, op: hw.VAbsOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _UNARY_FAMILY)

    @direct_impl(hw.VReluOp)
    def run_vrelu(
        self, interpreter: Interpreter, op: hw.VReluOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _UNARY_FAMILY)

    @direct_impl(hw.VSqrtOp)
    def run_vsqrt(
        self, interpreter: Interpreter, op: hw.VSqrtOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _UNARY_FAMILY)

    @direct_impl(hw.VRsqrtOp)
    def run_vrsqrt(
        self, interpreter: Interpreter, op: hw.VRsqrtOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _UNARY_FAMILY)

    @direct_impl(hw.VReciprocalOp)
    def run_vreciprocal(
        self, interpreter: Interpreter, op: hw.VReciprocalOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _UNARY_FAMILY)

    @direct_impl(hw.VCopyOp)
    def run_vcopy(
        self, interpreter: Interpreter, op: hw.VCopyOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _COPY_FAMILY)

    @direct_impl(hw.VCastOp)
    def run_vcast(
        self, interpreter: Interpreter, op: hw.VCastOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _CAST_FAMILY)

    @direct_impl(hw.VReduceSumOp)
    def run_vreduce_sum(
        self, interpreter: Interpreter, op: hw.VReduceSumOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _REDUCE_FAMILY)

    @direct_impl(hw.VReduceMaxOp)
    def run_vreduce_max(
        self, interpreter: Interpreter, op: hw.VReduceMaxOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _REDUCE_FAMILY)

    @direct_impl(hw.VReduceMinOp)
    def run_vreduce_min(
        self, interpreter: Interpreter, op: hw.VReduceMinOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _REDUCE_FAMILY)

    @direct_impl(hw.VBlockReduceMaxOp)
    def run_vblock_reduce_max(
        self, interpreter: Interpreter, op: hw.VBlockReduceMaxOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _BLOCK_REDUCE_FAMILY)

    @direct_impl(hw.VBlockReduceMinOp)
    def run_vblock_reduce_min(
        self, interpreter: Interpreter, op: hw.VBlockReduceMinOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _BLOCK_REDUCE_FAMILY)

    @direct_impl(hw.VDupOp)
    def run_vdup(
        self, interpreter: Interpreter, op: hw.VDupOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _DUP_FAMILY)

    @direct_impl(hw.VBrcbOp)
    def run_vbrcb(
        self, interpreter: Interpreter, op: hw.VBrcbOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _BRCB_FAMILY)

    @direct_impl(hw.VCmpOp)
    def run_vcmp(
        self, interpreter: Interpreter, op: hw.VCmpOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _CMP_FAMILY)

    @direct_impl(hw.VCmpsOp)
    def run_vcmps(
        self, interpreter: Interpreter, op: hw.VCmpsOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _CMPS_FAMILY)

    @direct_impl(hw.VSelectOp)
    def run_vselect(
        self, interpreter: Interpreter, op: hw.VSelectOp, args: PythonValues
    ) -> PythonValues:
        return self._run_vector(op, args, _SELECT_FAMILY)

    @direct_impl(hw.VGatherOp)
    def run_vgather(
        self, interpreter: Interpreter, op: hw.VGatherOp, args: PythonValues
    ) -> PythonValues:
        """dst lane = element at byte offsets[i * lanes + l] of src (data-dependent reads)."""
        runtime = self.runtime
        src, offsets, dst = cast(tuple[HwBuffer, HwBuffer, HwBuffer], args)
        plan = runtime.plans.get(id(op))
        if plan is None:
            plan = runtime.plans[id(op)] = _vector_plan(op, runtime.target)
        core = runtime.core
        call = _vector_call(plan, core, (dst, offsets), (src.address, src.end))
        dst_lanes, offset_lanes = call.operands
        for access in call.reads:
            core.check_initialized(access, plan.loc)
        byte_offsets = _gather_offsets(plan, offset_lanes, src, 0, plan.repeat)
        e = plan.dtypes[0].itemsize
        touched = make_pattern(np.unique(byte_offsets) // e, 0, 1, e)
        reads = call.reads + touched.accesses(src.space, src.address)
        core.issue(
            "V",
            plan.name,
            plan.loc,
            call.cycles,
            reads=reads,
            writes=call.writes,
            bank_cycles=call.bank_cycles,
            head=plan.head,
        )
        elements = core.memories[src.space].view(plan.dtypes[0])
        base = src.address // e
        if not call.sequential:
            dst_lanes.write(0, plan.repeat, elements[base + byte_offsets // e])
            return ()
        # dst overlaps src or the offsets: each repeat sees the ones before it.
        for i in range(plan.repeat):
            offsets_i = _gather_offsets(plan, offset_lanes, src, i, i + 1)
            dst_lanes.write(i, i + 1, elements[base + offsets_i // e])
        return ()


def _gather_offsets(
    plan: _VectorPlan, offsets: _Lanes, src: HwBuffer, lo: int, hi: int
) -> np.ndarray:
    """The byte offsets of repeats [lo, hi) of a vgather, checked: multiples of the
    element size inside the source buffer."""
    byte_offsets = offsets.read(lo, hi).astype(np.int64)
    e = plan.dtypes[0].itemsize
    bad = (
        (byte_offsets < 0)
        | (byte_offsets % e != 0)
        | (byte_offsets > src.info.nbytes - e)
    )
    if bad.any():
        first = int(byte_offsets[bad][0])
        raise AccessError(
            f"{_at(plan.loc)}gather offset {first} is not a multiple of {e} inside "
            f"the {src.info.nbytes} bytes of {src.type}",
            (plan.loc,),
        )
    return byte_offsets


def _run_repeats(
    plan: _VectorPlan, call: _VectorCall, kernel: VectorKernel, scalar: Any
) -> None:
    call.scalar = scalar
    if call.sequential:
        for i in range(plan.repeat):
            kernel(plan, call, i, i + 1)
    else:
        kernel(plan, call, 0, plan.repeat)
