"""First-order forward error bounds of a `tv` function's values.

A lowering may round differently from the reference: it reorders sums (tiles,
K blocks, passes) and evaluates composite functions step by step. The error that
causes is proportional to the magnitude of what was summed, not to the result:
`sum([1e4, 1, -1e4])` is 1, but a reordered f32 sum may be off by an ulp of
1e4. `pypto_mlir.check` therefore allows, per element, a few ulps of the larger
of the output's largest magnitude and the bound computed here.

The bound `E(v)` of a value is an absolute error, in units of "one rounding":
each op adds its own rounding (`eps(type) * |v|`, and `eps(f32) * sum|x|` for the
terms a sum or matmul accumulates) to the errors of its operands carried through
its derivative (`|f'(x)| * E(x)` for a unary op, `E(a) * |b| + |a| * E(b)` for a
product, ...). Inputs and constants are exact. Integer values have no bound
(they are compared exactly).

Where the first-order rule breaks down the bound stays sound, never "anything":
an exact operand carries no error whatever the derivative (`sqrt` at an exact 0
is exact, not `inf * 0`; `op_facts.carry_product`); an op whose derivative is
infinite at a finite result has a bound for any perturbation in its facts
(`sqrt(e)` for sqrt); and an infinite or NaN value has bound 0, since the check
requires the lowering to give the same infinity or NaN there, so the ops
that consume it start from an exact operand (`1 / exp(100)` is exactly 0). A
bound that is still infinite at a finite value (an approximation with no claim
there, sin beyond 2^22) makes `pypto_mlir.check` require the exact value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Operation, SSAValue
from xdsl.traits import SymbolTable

import pypto_mlir.op_facts as op_facts
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.interp.sparse import SparseArray, to_dense
from pypto_mlir.interp.tensor_view import (
    _resolve_dynamic,
    _result,
    run_tv_function,
    view,
)
from pypto_mlir.numerics import epsilon, largest_computed

_FactsT = TypeVar("_FactsT")


def _suffix(op: Operation) -> str:
    return op.name.split(".", 1)[1]


def _facts(op: Operation, table: Mapping[str, _FactsT], family: str) -> _FactsT:
    """The facts of `op` in `table`; an op of the family without them is an
    error naming it (test_op_facts checks every tv op has them)."""
    if _suffix(op) not in table:
        raise ValueError(f"{op.name} has no {family} entry in pypto_mlir.op_facts")
    return table[_suffix(op)]


def _unary_carry(
    op: tv.UnaryOp, x: np.ndarray, v: np.ndarray, error: np.ndarray | float
) -> np.ndarray | float:
    """The operand's error `error` through a unary op at operand `x` with
    result `v` (float64): `|f'(x)| E(x)`, at most the op's perturbation bound
    (finite where the derivative is not: sqrt at 0)."""
    facts = _facts(op, op_facts.UNARY, "unary")
    derivative = np.asarray(facts.derivative(x, v), dtype=np.float64)
    carried = op_facts.carry_product(error, derivative)
    if facts.perturbation is not None:
        carried = np.fmin(carried, facts.perturbation(x, error))
    return carried


OTHER_OPS = (
    tv.ReshapeOp,
    tv.CastOp,
    tv.MatmulOp,
    tv.SoftmaxOp,
    tv.TransposeOp,
    tv.ViewOp,
    tv.FillOp,
    tv.SelectOp,
    *tv.SPARSE_OPS,
)
"""The tv ops besides the elementwise and reduction families (whose rules come
from `pypto_mlir.op_facts`) that `_carried` has a rule for."""

_EXACT = (
    tv.TransposeOp,
    tv.ViewOp,
    tv.ReshapeOp,
    tv.FillOp,
    tv.AssembleOp,
    tv.DisassembleOp,
    tv.ToDenseOp,
    tv.GatherOp,
    tv.SelectOp,
)
"""Ops besides the elementwise and reduction families (whose facts say it) whose
result is one of their operands' values: they do not round."""


def _is_exact(op: Operation) -> bool:
    if isinstance(op, tv.UnaryOp):
        return _facts(op, op_facts.UNARY, "unary").exact
    if isinstance(op, tv.BinaryOp):
        return _facts(op, op_facts.BINARY, "binary").exact
    if isinstance(op, tv.ReduceOp):
        return not _facts(op, op_facts.REDUCE, "reduction").accumulates
    return isinstance(op, _EXACT)


def _select_carry(op: tv.SelectOp, args: PythonValues, errs: list[Any]) -> Any:
    """The chosen operand's error where the compare is decided (the compared
    values are exact, or farther apart than their errors); elsewhere the errors
    may flip it: the larger operand error plus the operands' distance."""
    lhs, rhs, on_true, on_false = (np.asarray(a, dtype=np.float64) for a in args)
    e_lhs, e_rhs, e_true, e_false = errs
    with np.errstate(all="ignore"):
        margin = np.add(e_lhs, e_rhs)
        decided = (margin == 0) | (np.abs(lhs - rhs) > margin)
        chosen = op_facts.select(op.cmp.data, lhs, rhs, e_true, e_false)
        flip = np.maximum(e_true, e_false) + np.abs(on_true - on_false)
    return np.where(decided, chosen, flip)


class ErrorBounds(Interpreter.Listener):
    """Computes `E(v)` for every tensor value while the tv interpreter runs."""

    def __init__(self) -> None:
        self.values: dict[SSAValue, np.ndarray] = {}
        self.bounds: dict[SSAValue, np.ndarray] = {}
        self._args: PythonValues = ()

    def bound(self, value: SSAValue) -> np.ndarray | float:
        return self.bounds.get(value, 0.0)

    def magnitude(self, value: SSAValue, runtime: Any) -> np.ndarray:
        if value in self.values:
            return self.values[value]
        return np.abs(np.asarray(_result(runtime), dtype=np.float64))

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        self._args = args

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        if isinstance(op, tv.SPARSE_OPS) and not isinstance(op, tv.GatherOp):
            self._sparse_op(op, results)
            return
        if len(op.results) != 1 or not isinstance(
            op.results[0].type, tv.TensorViewType
        ):
            return
        result = op.results[0]
        element_type = result.type.element_type
        v = np.asarray(results[0], dtype=np.float64)
        self.values[result] = np.abs(v)
        if not tv.is_float_element_type(element_type):
            return
        rounding = 0.0 if _is_exact(op) else epsilon(element_type)
        magnitude = np.abs(v)
        approximation: np.ndarray | float = 0.0
        if isinstance(op, tv.UnaryOp):
            facts = _facts(op, op_facts.UNARY, "unary")
            # e.g. tanh, evaluated as 2 / (1 + e^-2x) - 1: the last step rounds
            # a value of magnitude |v| + 1 (accurate in absolute terms near 0)
            magnitude = magnitude + facts.rounding_offset
            x = np.asarray(self._args[0], dtype=np.float64)
            if facts.approximation is not None:
                approximation = facts.approximation(x)
            if facts.exponent is not None:
                # e^t overflowing the computed type flushes the result to 0
                with np.errstate(over="ignore", invalid="ignore"):
                    t = facts.exponent(x)
                limit = np.log(largest_computed(element_type))
                approximation = approximation + np.where(t > limit, np.abs(v), 0.0)
        with np.errstate(all="ignore"):
            bound = magnitude * rounding + approximation + self._carried(op, v)
            # an infinity or NaN is required as it is (pypto_mlir.check); a
            # NaN bound at a finite value is no bound: exact required too
            bound = np.where(
                np.isfinite(v), np.where(np.isnan(bound), np.inf, bound), 0.0
            )
        self.bounds[result] = np.broadcast_to(bound, v.shape)

    def _carried(self, op: Operation, v: np.ndarray) -> np.ndarray | float:
        """The operands' errors through the op, plus accumulation errors."""
        args = self._args
        operands = list(op.operands)
        mags = [self.magnitude(o, a) for o, a in zip(operands, args, strict=True)]
        errs = [self.bound(o) for o in operands]
        acc = epsilon(f32)
        if isinstance(op, tv.UnaryOp):
            x = np.asarray(args[0], dtype=np.float64)
            return _unary_carry(op, x, v, errs[0])
        if isinstance(op, tv.BinaryOp):
            carry = _facts(op, op_facts.BINARY, "binary").carry
            return carry(errs[0], errs[1], mags[0], mags[1])
        if isinstance(op, tv.CastOp):
            return errs[0]
        if isinstance(op, tv.ReduceOp):
            axes = tuple(op.axes.get_values())
            keep = op.keepdims is not None
            err = np.broadcast_to(errs[0], mags[0].shape)
            if _facts(op, op_facts.REDUCE, "reduction").accumulates:
                total = np.sum(mags[0], axis=axes, keepdims=keep)
                return np.sum(err, axis=axes, keepdims=keep) + acc * total
            return np.max(err, axis=axes, keepdims=keep, initial=0.0)
        if isinstance(op, tv.MatmulOp):
            a_err = np.broadcast_to(errs[0], mags[0].shape)
            b_err = np.broadcast_to(errs[1], mags[1].shape)
            a, b, ea, eb = mags[0], mags[1], a_err, b_err
            if op.transpose_a:
                a, ea = np.swapaxes(a, -1, -2), np.swapaxes(ea, -1, -2)
            if op.transpose_b:
                b, eb = np.swapaxes(b, -1, -2), np.swapaxes(eb, -1, -2)
            return ea @ b + a @ eb + acc * (a @ b)
        if isinstance(op, tv.SoftmaxOp):
            axis = op.axis.value.data
            err = np.broadcast_to(errs[0], mags[0].shape)
            return 2.0 * np.abs(v) * np.max(err, axis=axis, keepdims=True, initial=0.0)
        if isinstance(op, tv.TransposeOp):
            err = np.broadcast_to(errs[0], mags[0].shape)
            return np.transpose(err, op.permutation.get_values())
        if isinstance(op, tv.ViewOp):
            return self._view(op, np.broadcast_to(errs[0], mags[0].shape))
        if isinstance(op, tv.ReshapeOp):
            err = np.broadcast_to(errs[0], mags[0].shape)
            return err.reshape(np.shape(v))
        if isinstance(op, tv.FillOp):
            return 0.0
        if isinstance(op, tv.GatherOp):
            err = np.broadcast_to(errs[0], mags[0].shape)
            return err[np.asarray(args[1], dtype=np.int64)]
        if isinstance(op, tv.SelectOp):
            return _select_carry(op, args, errs)
        raise ValueError(f"pypto_mlir.error_bound has no rule for {op.name}")

    # Sparse ops: a sparse value's magnitude and bound are arrays of the shape
    # of its stored values; the products are bounded on the dense forms (this
    # is a checking tool, not a hot path: quadratic in the dense shape).

    def _dense(self, value: SSAValue, runtime: Any) -> tuple[np.ndarray, np.ndarray]:
        """|value| and E(value) as dense float64 arrays."""
        if isinstance(runtime, SparseArray):
            shape = runtime.values.shape
            magnitude = np.abs(runtime.values.astype(np.float64))
            err = np.broadcast_to(self.bound(value), shape).astype(np.float64)
            return (
                to_dense(runtime.with_values(magnitude)),
                to_dense(runtime.with_values(err)),
            )
        magnitude = self.magnitude(value, runtime)
        return magnitude, np.broadcast_to(self.bound(value), magnitude.shape)

    def _sparse_op(self, op: Operation, results: PythonValues) -> None:
        """E(v) of the sparse ops' float results (values for sparse ones)."""
        args = self._args
        if isinstance(op, tv.DisassembleOp):
            self._record(op.values, results[2], self.bound(op.input), exact=True)
            return
        result, runtime = op.results[0], results[0]
        if isinstance(op, tv.AssembleOp):
            self._record(result, runtime, self.bound(op.values), exact=True)
            return
        if isinstance(op, tv.ToDenseOp):
            _, err = self._dense(op.input, args[0])
            self._record(result, runtime, err, exact=True)
            return
        acc = epsilon(f32)
        if isinstance(op, tv.SpmmOp | tv.SpmvOp):
            a, ea = self._dense(op.lhs, args[0])
            b, eb = self._dense(op.rhs, args[1])
            carried = ea @ b + a @ eb + acc * (a @ b)
        elif isinstance(op, tv.SddmmOp):
            a, ea = self._dense(op.lhs, args[1])
            b, eb = self._dense(op.rhs, args[2])
            if op.transpose_b is not None:
                b, eb = b.T, eb.T
            carried = _sample(runtime, ea @ b + a @ eb + acc * (a @ b))
        else:
            assert isinstance(op, tv.SparseSoftmaxOp)
            _, err = self._dense(op.input, args[0])
            row_max = np.broadcast_to(np.max(err, axis=1, keepdims=True), err.shape)
            v = np.abs(runtime.values.astype(np.float64))
            carried = 2.0 * v * _sample(runtime, row_max)
        self._record(result, runtime, carried, exact=False)

    def _record(self, value: SSAValue, runtime: Any, carried: Any, exact: bool) -> None:
        assert isinstance(value.type, tv.TensorViewType)
        element_type = value.type.element_type
        stored = runtime.values if isinstance(runtime, SparseArray) else runtime
        v = np.asarray(stored, dtype=np.float64)
        self.values[value] = np.abs(v)
        if not tv.is_float_element_type(element_type):
            return
        rounding = 0.0 if exact else epsilon(element_type)
        with np.errstate(all="ignore"):
            bound = np.abs(v) * rounding + carried
            bound = np.where(
                np.isfinite(v), np.where(np.isnan(bound), np.inf, bound), 0.0
            )
        self.bounds[value] = np.broadcast_to(bound, v.shape)

    def _view(self, op: tv.ViewOp, err: np.ndarray) -> np.ndarray:
        _, *dynamic = self._args
        n_off, n_size = len(op.offsets), len(op.sizes)
        offsets = _resolve_dynamic(op.static_offsets.get_values(), dynamic[:n_off])
        sizes = _resolve_dynamic(
            op.static_sizes.get_values(), dynamic[n_off : n_off + n_size]
        )
        strides = _resolve_dynamic(
            op.static_strides.get_values(), dynamic[n_off + n_size :]
        )
        return view(err, offsets, sizes, strides, op.dropped_dims())


def _sample(pattern: SparseArray, dense: np.ndarray) -> np.ndarray:
    """The entries of a dense array at a sparse tensor's stored positions, in
    the shape of its values."""
    (grid_rows, grid_cols), (bm, bn) = pattern.grid, pattern.block
    blocks = dense.reshape(grid_rows, bm, grid_cols, bn).transpose(0, 2, 1, 3)
    sampled = blocks[pattern.block_rows(), pattern.indices.astype(np.int64)]
    return sampled.reshape(pattern.values.shape)


def run_with_error_bounds(
    module: ModuleOp, name: str, args: Sequence[Any]
) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """`run_tv_function`, with the error bound of each result (None for
    integer and scalar results)."""
    listener = ErrorBounds()
    outputs = run_tv_function(module, name, args, listeners=(listener,))
    func_op = SymbolTable.lookup_symbol(module, name)
    assert isinstance(func_op, func.FuncOp)
    returned = func_op.body.block.last_op
    assert isinstance(returned, func.ReturnOp)
    bounds: list[np.ndarray | None] = []
    for value, output in zip(returned.arguments, outputs, strict=True):
        if not isinstance(
            value.type, tv.TensorViewType
        ) or not tv.is_float_element_type(value.type.element_type):
            bounds.append(None)
        else:  # an argument returned as it is has no error
            bound = listener.bounds.get(value, np.zeros(np.shape(output)))
            bounds.append(np.asarray(bound))
    return outputs, bounds
