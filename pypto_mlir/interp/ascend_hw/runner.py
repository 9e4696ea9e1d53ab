"""Running a kernel: `run_hw_function` on `block_dim` cores of a target.

Checks and converts the arguments (numpy arrays become GM tensors, numbers
become attributes), builds the interpreter (`hw_interpreter`), runs every core
(one after the other, or epoch by epoch in threads when the kernel has
`sync_all`) and returns the simulator's report (`HwRunResult`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod
from time import perf_counter
from typing import Any, cast

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    BFloat16Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    bf16,
)
from xdsl.interpreter import Interpreter, OpImplResult, PythonValues
from xdsl.interpreters.builtin import BuiltinFunctions, scalar_attr
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.math import MathFunctions
from xdsl.ir import Attribute, Operation
from xdsl.traits import SymbolTable

from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.interp.ascend_hw.errors import (
    HwRunError,
    _at,
    _execution_error,
    _op_loc,
)
from pypto_mlir.interp.ascend_hw.fast_path import HwScfFunctions
from pypto_mlir.interp.ascend_hw.float_formats import (
    bf16_bits,
    bf16_values,
    storage_dtype,
)
from pypto_mlir.interp.ascend_hw.functions import AscendHwFunctions
from pypto_mlir.interp.ascend_hw.gm_memref import HwGmMemRefFunctions
from pypto_mlir.interp.ascend_hw.runtime import HwRuntime, _CoreThreads
from pypto_mlir.interp.ascend_hw.values import GmRef
from pypto_mlir.interp.direct_calls import direct_calls
from pypto_mlir.interp.index_arith import IndexArithFunctions
from pypto_mlir.interp.scalar_casts import ScalarCastFunctions
from pypto_mlir.sim import Machine, Report, SimError
from pypto_mlir.sim.machine import gc_paused
from pypto_mlir.targets import Target

BLOCK_DIM_ATTR = "ascend_hw.block_dim"
"""`func.func` attribute declaring how many cores run the kernel (an integer)."""


class _HwInterpreter(Interpreter):
    """An interpreter that reports a failing op by its location: any error that is
    not already a simulator error becomes an `HwRunError` at the op."""

    def _run_op(self, op: Operation, inputs: PythonValues) -> OpImplResult:
        try:
            return super()._run_op(op, inputs)
        except SimError:
            raise
        except Exception as error:
            raise _execution_error(op, error) from error


def hw_interpreter(module: ModuleOp, runtime: HwRuntime) -> Interpreter:
    """An interpreter of `module` with ascend_hw, scf, arith, math, func, builtin
    and the memref ops on GM that tv-to-tile emits (`ascend_hw.gm_memref`)."""
    interpreter = _HwInterpreter(module, index_bitwidth=64)
    arith_functions = IndexArithFunctions()
    hw_functions = AscendHwFunctions(runtime)
    calls = direct_calls((arith_functions, hw_functions))
    for functions in (
        arith_functions,
        ScalarCastFunctions(),
        BuiltinFunctions(),
        FuncFunctions(),
        MathFunctions(),
        HwGmMemRefFunctions(runtime),
        HwScfFunctions(runtime, calls),
        hw_functions,
    ):
        interpreter.register_implementations(functions)
    return interpreter


@dataclass
class HwRunResult:
    """What `run_hw_function` returns: the GM memref arguments after the run (the
    arrays passed in, written in place) and the simulator's report."""

    outputs: list[np.ndarray]
    report: Report
    records: int = 0
    """Records issued to the simulator: instructions, flags and barriers."""
    interpret_seconds: float = 0.0
    """Wall time of executing the kernel and issuing its records."""
    finish_seconds: float = 0.0
    """Wall time of `Machine.finish()`: replay, race detection, report."""


def declared_block_dim(func_op: func.FuncOp) -> int | None:
    """The `ascend_hw.block_dim` attribute of a kernel, if it declares one."""
    attr = func_op.attributes.get(BLOCK_DIM_ATTR)
    if attr is None:
        return None
    if not isinstance(attr, IntegerAttr):
        raise HwRunError(
            f"{_at(_op_loc(func_op))}{BLOCK_DIM_ATTR} must be an integer, got {attr}",
            (_op_loc(func_op),),
        )
    return attr.value.data


def _gm_argument(
    machine: Machine,
    name: str,
    array: Any,
    memref: MemRefType,
    what: str,
    loc: str,
) -> tuple[GmRef, np.ndarray, Callable[[], None] | None]:
    """A GM memref argument: (its GmRef, the array to return, a write-back)."""
    if not isinstance(array, np.ndarray):
        raise HwRunError(f"{_at(loc)}{what} is a {memref}: pass a numpy array", (loc,))
    element_type = memref.element_type
    dtype = storage_dtype(element_type)
    data = array
    write_back = None
    if element_type == bf16 and array.dtype == np.float32:
        data = bf16_bits(array)
        write_back = lambda: np.copyto(array, bf16_values(data))  # noqa: E731
    elif array.dtype != dtype:
        expected = (
            "float32 (bf16 values) or uint16 (bf16 bits)"
            if element_type == bf16
            else dtype
        )
        raise HwRunError(
            f"{_at(loc)}{what} is a {memref}: expected a {expected} array, "
            f"got {array.dtype}",
            (loc,),
        )
    elif not array.flags.c_contiguous:
        data = np.ascontiguousarray(array)
        write_back = lambda: np.copyto(array, data)  # noqa: E731
    shape = memref.get_shape()
    layout = memref.layout
    if isinstance(layout, StridedLayoutAttr):
        strides = layout.get_strides()
        offset = layout.get_offset()
        if offset is None or any(s is None for s in strides):
            raise HwRunError(
                f"{_at(loc)}{what}: dynamic offsets and strides of {memref} are not "
                "supported at run time",
                (loc,),
            )
        if any(d == DYNAMIC_INDEX for d in shape):
            raise HwRunError(
                f"{_at(loc)}{what}: a strided {memref} needs a static shape", (loc,)
            )
        need = (
            offset
            + sum((d - 1) * cast(int, s) for d, s in zip(shape, strides, strict=True))
            + 1
        )
        if data.size < need:
            raise HwRunError(
                f"{_at(loc)}{what} is a {memref}, which indexes {need} elements; "
                f"the array has {data.size}",
                (loc,),
            )
        ref_shape, ref_strides = shape, tuple(cast(int, s) for s in strides)
    else:
        if len(shape) != array.ndim or any(
            d != DYNAMIC_INDEX and d != n
            for d, n in zip(shape, array.shape, strict=True)
        ):
            raise HwRunError(
                f"{_at(loc)}{what} is a {memref}: got an array of shape "
                f"{list(array.shape)}",
                (loc,),
            )
        ref_shape = array.shape
        ref_strides = tuple(prod(array.shape[d + 1 :]) for d in range(len(array.shape)))
        offset = 0
    tensor = machine.register_gm(name, data)
    ref = GmRef(tensor, tuple(ref_shape), ref_strides, offset, dtype)
    return ref, array, write_back


def _scalar_argument(value: Any, arg_type: Attribute, what: str, loc: str) -> Any:
    if isinstance(arg_type, IndexType | IntegerType):
        if isinstance(value, IntegerAttr):
            return value
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise HwRunError(f"{_at(loc)}{what} is {arg_type}: pass an integer", (loc,))
        return scalar_attr(int(value), arg_type, 64)
    if isinstance(arg_type, AnyFloat):
        if isinstance(value, FloatAttr):
            return value
        if not isinstance(value, int | float | np.floating | np.integer):
            raise HwRunError(f"{_at(loc)}{what} is {arg_type}: pass a number", (loc,))
        if isinstance(arg_type, BFloat16Type):
            value = float(bf16_values(bf16_bits(np.array([value])))[0])
        return FloatAttr(float(value), arg_type)
    raise HwRunError(f"{_at(loc)}{what} has unsupported type {arg_type}", (loc,))


def run_hw_function(
    module: ModuleOp,
    name: str,
    args: Sequence[Any],
    target: Target,
    block_dim: int | None = None,
) -> HwRunResult:
    """Run kernel `name` of `module` on `block_dim` cores of `target`.

    `args`: a numpy array per memref argument (GM; written in place), a number per
    index/integer/float argument. `block_dim` defaults to the function's
    `ascend_hw.block_dim` attribute, else 1. Each core runs the function with its
    own `block_idx`, one after the other (epoch by epoch when the kernel has
    `sync_all`: every core up to its next sync_all before any goes past it);
    `Machine.finish()` then replays every record. Raises `SimError` (races, deadlocks, out-of-range and uninitialised
    accesses, bad arguments...) whose `locs` name the ops involved.
    """
    func_op = SymbolTable.lookup_symbol(module, name)
    if not isinstance(func_op, func.FuncOp):
        raise HwRunError(f"no function @{name} in the module")
    loc = _op_loc(func_op)
    arg_types = func_op.function_type.inputs.data
    if len(args) != len(arg_types):
        raise HwRunError(
            f"{_at(loc)}@{name} takes {len(arg_types)} arguments, got {len(args)}",
            (loc,),
        )
    if block_dim is None:
        block_dim = declared_block_dim(func_op) or 1
    if not 1 <= block_dim <= target.cores:
        raise HwRunError(
            f"{_at(loc)}block_dim {block_dim} is not in 1..{target.cores} "
            f"(cores of {target.name})",
            (loc,),
        )
    machine = Machine(target, block_dim)
    runtime_args: list[Any] = []
    outputs: list[np.ndarray] = []
    write_backs: list[Callable[[], None]] = []
    block_args = func_op.body.block.args
    for i, (value, arg_type) in enumerate(zip(args, arg_types, strict=True)):
        arg_name = block_args[i].name_hint or f"arg{i}"
        what = f"argument #{i} (%{arg_name})"
        if isinstance(arg_type, MemRefType):
            ref, array, write_back = _gm_argument(
                machine,
                arg_name if arg_name not in machine._gm_by_name else f"{arg_name}.{i}",
                value,
                arg_type,
                what,
                loc,
            )
            runtime_args.append(ref)
            outputs.append(array)
            if write_back is not None:
                write_backs.append(write_back)
        else:
            runtime_args.append(_scalar_argument(value, arg_type, what, loc))
    runtime = HwRuntime(machine)
    interpreter = hw_interpreter(module, runtime)
    entry_work = runtime.scalar_work(func_op.body.block)
    start = perf_counter()
    with np.errstate(all="ignore"), gc_paused():
        if block_dim > 1 and any(isinstance(op, hw.SyncAllOp) for op in module.walk()):
            interpreters = [interpreter] + [
                hw_interpreter(module, runtime) for _ in range(block_dim - 1)
            ]

            def run_core(block_idx: int) -> None:
                runtime.core.scalar(entry_work)
                interpreters[block_idx].call_op(func_op, tuple(runtime_args))

            runtime.threads = _CoreThreads(runtime, run_core)
            try:
                runtime.threads.run()
            finally:
                runtime.threads = None
        else:
            for block_idx in range(block_dim):
                runtime.core = machine.core(block_idx)
                runtime.core.scalar(entry_work)
                interpreter.call_op(func_op, tuple(runtime_args))
        records = len(machine.records)
        interpreted = perf_counter()
        report = machine.finish()
        finished = perf_counter()
    for write_back in write_backs:
        write_back()
    return HwRunResult(
        outputs, report, records, interpreted - start, finished - interpreted
    )
