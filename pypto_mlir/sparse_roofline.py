"""The roofline bound of a sparse `tv` kernel for one run: the fewest cycles
the chip needs for the stored entries it is called with, whatever the compiler
does (docs/sparse.md, *The sparse roofline*).

The dense roofline (`pypto_mlir.roofline`) counts work from the types alone; a
sparse kernel's work depends on its pattern, so this one takes the run's
arguments (`SparseArray`s or (offsets, indices, values) triples, dense arrays)
and counts, with the same resources and rates:

- **GM reads, once each**: a sparse argument's offsets and column indices (its
  index type's bytes), its values when an op reads them (an sddmm mask's are
  not), and of a dense operand only the rows the stored entries gather (the
  distinct column indices of spmm, the distinct block columns of a BSR operand
  times the block's rows, the rows of q in block rows with entries, the rows a
  gather's indices name): on GM -> L1 for an operand of cube work, else
  GM -> UB;
- **cube**: a BSR product (spmm, sddmm) whose blocks are whole fractals, one
  multiply-accumulate per stored entry and output column (K for sddmm), at
  `cube.macs_per_cycle` of its type; each stored block and gathered row moves
  L1 -> L0A/L0B once;
- **vector**: a CSR product's multiply-adds (a `mul` and an `add` in f32 per
  stored entry and column, the row nest's instructions); sparse softmax's steps
  over the stored entries (with the casts of narrow floats, as the dense
  softmax), but for a softmax that only an spmm reads (attention) its
  quotients on the product's rows with entries instead, as the flash form
  (passes/sparse_attention.py) takes them;
- **the scale** of stored values (`a * s`, spelled `tv.disassemble`, `tv.mul`
  or `tv.div` by a scalar, `tv.assemble`): its vector steps per stored entry;
- **GM writes, once**: each returned dense result whole, a returned sparse
  result's stored values (L0C -> GM from the cube, else UB -> GM).
- **top-k attention** (a `tv.gather` that a batched `tv.matmul` reads, through
  a transpose: `q[:, None] @ kv[idx].mT`, docs/sparse.md): the gathered rows
  read once **per query** (`idx.size` rows, not the distinct ones: each query
  has its own key set, and the union of a block's key sets neither fits on
  chip at the issue's shape nor is much smaller than their sum for top-k
  indices), on GM -> L1; the products on the cube at its peak rate (one MAC
  per query, key and head column, as if no fractal were wasted), their
  operands moved L1 -> L0A/L0B once, the scores L0C -> UB; the dense ops on
  the scores (the scale, the softmax) by the dense roofline's vector steps.

Results that other sparse ops read are assumed fused (no GM traffic).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.traits import SymbolTable

from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.interp.sparse import SparseArray
from pypto_mlir.interp.tensor_view import sparse_argument
from pypto_mlir.roofline import (
    OTHER_STEPS,
    STORAGE_BYTES,
    Roofline,
    Work,
    bounds_of,
    ops_vector_cycles,
    vector_steps,
)
from pypto_mlir.sim.report import RooflineBound
from pypto_mlir.targets import Target

_NARROW_FLOATS = ("f16", "bf16")


def _type(value: SSAValue) -> tv.TensorViewType:
    assert isinstance(value.type, tv.TensorViewType)
    return value.type


def _bytes(value: SSAValue) -> int:
    return STORAGE_BYTES[str(_type(value).element_type)]


class _Reads:
    """The rows of each dense argument the kernel gathers, per DMA path: a
    row read by two ops is read once."""

    def __init__(self) -> None:
        self.rows: dict[tuple[int, str], np.ndarray] = {}
        self.arguments: dict[int, SSAValue] = {}

    def gather(self, value: SSAValue, rows: np.ndarray, path: str) -> None:
        if not isinstance(value, BlockArgument):
            return  # computed by another op: fused, no GM read
        key = (value.index, path)
        if key not in self.rows:
            self.rows[key] = np.zeros(_type(value).get_shape()[0], bool)
        self.rows[key][rows] = True
        self.arguments[value.index] = value

    def move(self, work: Work) -> None:
        for (index, path), rows in sorted(self.rows.items()):
            value = self.arguments[index]
            row_bytes = prod(_type(value).get_shape()[1:]) * _bytes(value)
            work.move("gm", path, int(rows.sum()) * row_bytes)


class _Kernel:
    """The work of one run of a sparse kernel, op by op."""

    def __init__(self, target: Target, inputs: dict[SSAValue, Any]):
        self.target = target
        self.work = Work(target)
        self.reads = _Reads()
        self.inputs = inputs
        self.patterns: dict[SSAValue, SparseArray] = {}
        self.values_read: dict[SSAValue, str] = {}
        """Sparse arguments whose values an op reads, and on which path."""
        self.from_cube: set[SSAValue] = set()
        self.disassembled: dict[SSAValue, SSAValue] = {}
        """The values of a disassembled sparse tensor, and that tensor."""
        self.views: dict[SSAValue, SSAValue] = {}
        """A reshape, window or transpose of a dense tensor and the tensor it
        shows (a transpose that a matmul reads folds into it: no data moves)."""

    def on_cube(self, pattern: SparseArray, dtype: str) -> bool:
        """BSR blocks of whole fractals of a type the cube multiplies."""
        bm, bn = pattern.block
        cube = self.target.cube
        return (
            pattern.block != (1, 1)
            and bm % cube.fractal_m == 0
            and bn % cube.fractal_n == 0
            and dtype in cube.macs_per_cycle
        )

    def multiply(self, elements: int, length: int, dtype: str, cube: bool) -> None:
        """`elements` stored entries each times `length` columns."""
        if cube:
            self.work.macs[dtype] = self.work.macs.get(dtype, 0.0) + elements * length
        else:
            self.work.vector("mul", elements * length, "f32")
            self.work.vector("add", elements * length, "f32")

    def read_values(self, value: SSAValue, path: str) -> None:
        if isinstance(value, BlockArgument):
            self.values_read.setdefault(value, path)

    def op(self, op: Operation) -> None:
        if isinstance(op, tv.SpmmOp | tv.SpmvOp):
            self.product(op)
        elif isinstance(op, tv.SddmmOp):
            self.sddmm(op)
        elif isinstance(op, tv.SparseSoftmaxOp):
            pattern = self.patterns[op.input]
            elements = pattern.values.size
            dtype = str(_type(op.input).element_type)
            self.read_values(op.input, "ub")
            steps = OTHER_STEPS["softmax"]
            if _normalised_later(op):
                # attention: the quotients are taken on the product's rows
                # (`product`), not on every probability
                steps = tuple(step for step in steps if step != "div")
            if dtype in _NARROW_FLOATS:
                steps = ("cast", *steps, "cast")
            for step in steps:
                self.work.vector(step, elements, "f32")
            self.patterns[op.result] = pattern
        elif isinstance(op, tv.ToDenseOp):
            self.read_values(op.input, "ub")
        elif isinstance(op, tv.GatherOp):
            indices = np.asarray(self.inputs.get(op.indices, []), np.int64)
            if not isinstance(op.indices, BlockArgument):
                raise ValueError("the sparse roofline needs a gather's indices")
            self.reads.gather(op.indices, np.arange(indices.shape[0]), "ub")
            if _read_by_matmul(op.result):
                # top-k attention: each query's rows, read once per query
                row_bytes = prod(_type(op.source).get_shape()[1:]) * _bytes(op.source)
                self.work.move("gm", "l1", indices.size * row_bytes)
            else:
                self.reads.gather(op.source, np.unique(indices), "ub")
        elif isinstance(op, tv.ReshapeOp | tv.TransposeOp | tv.ViewOp):
            if isinstance(op, tv.TransposeOp) and not _read_by_matmul(op.result):
                raise ValueError("the sparse roofline has no model of a tv.transpose")
            source = op.operands[0]
            self.views[op.results[0]] = self.views.get(source, source)
        elif isinstance(op, tv.MatmulOp):
            self.matmul(op)
        elif (
            isinstance(op, tv.SoftmaxOp | tv.MulOp | tv.DivOp)
            and op.operands[0] not in self.disassembled
        ):
            # a dense op on the scores: the dense roofline's steps
            self.work.vector_cycles += ops_vector_cycles([op], self.target)
        elif isinstance(op, arith.ConstantOp):
            pass  # a scalar (the scale)
        elif isinstance(op, tv.DisassembleOp):
            self.disassembled[op.values] = op.input
        elif (
            isinstance(op, tv.UnaryOp | tv.BinaryOp)
            and op.operands[0] in self.disassembled
        ):
            # an element-wise map of the stored values (`a * s`, `exp` of the
            # values): its steps once per stored entry
            source = self.disassembled[op.operands[0]]
            self.read_values(source, "ub")
            elements = self.patterns[source].values.size
            name = op.name.removeprefix("tv.")
            dtype = str(_type(op.operands[0]).element_type)
            scalar = not all(isinstance(v.type, tv.TensorViewType) for v in op.operands)
            for step in vector_steps(name, scalar):
                self.work.vector(step, elements, dtype)
            self.disassembled[op.results[0]] = source
        elif isinstance(op, tv.UnaryOp | tv.BinaryOp):
            # a dense element-wise op (an spmm's epilogue): its steps over its
            # result, its dense arguments read once, its other inputs fused
            result = _type(op.results[0])
            scalar = not all(isinstance(v.type, tv.TensorViewType) for v in op.operands)
            for step in vector_steps(op.name.removeprefix("tv."), scalar):
                self.work.vector(
                    step, prod(result.get_shape()), str(result.element_type)
                )
            for value in op.operands:
                if isinstance(value.type, tv.TensorViewType):
                    rows = np.arange(_type(value).get_shape()[0])
                    self.reads.gather(value, rows, "ub")
        elif isinstance(op, tv.AssembleOp) and op.values in self.disassembled:
            self.patterns[op.result] = self.patterns[self.disassembled[op.values]]
        elif isinstance(op, func.ReturnOp):
            for value in op.operands:
                self.write(value)
        else:
            raise ValueError(f"the sparse roofline has no model of {op.name}")

    def product(self, op: tv.SpmmOp | tv.SpmvOp) -> None:
        pattern = self.patterns[op.lhs]
        dtype = str(_type(op.lhs).element_type)
        cube = self.on_cube(pattern, dtype)
        path = "l1" if cube else "ub"
        columns = prod(_type(op.rhs).get_shape()[1:])
        bn = pattern.block[1]
        rows = np.unique(pattern.indices)[:, None] * bn + np.arange(bn)
        self.multiply(pattern.values.size, columns, dtype, cube)
        softmax = op.lhs.owner
        if isinstance(softmax, tv.SparseSoftmaxOp) and _normalised_later(softmax):
            # the flash form divides the rows of the product that have entries
            bm = pattern.block[0]
            rows_with_entries = int(np.count_nonzero(np.diff(pattern.offsets))) * bm
            self.work.vector("div", rows_with_entries * columns, "f32")
        self.read_values(op.lhs, path)
        self.reads.gather(op.rhs, rows.ravel(), path)
        if cube:
            self.work.move("l1", "l0a", pattern.values.size * _bytes(op.lhs))
            self.work.move("l1", "l0b", rows.size * columns * _bytes(op.rhs))
            self.from_cube.add(op.result)

    def sddmm(self, op: tv.SddmmOp) -> None:
        pattern = self.patterns[op.mask]
        dtype = str(_type(op.lhs).element_type)
        cube = self.on_cube(pattern, dtype)
        path = "l1" if cube else "ub"
        k = _type(op.lhs).get_shape()[1]
        bm, bn = pattern.block
        block_rows = np.flatnonzero(np.diff(pattern.offsets.astype(np.int64)))
        q_rows = (block_rows[:, None] * bm + np.arange(bm)).ravel()
        k_rows = (np.unique(pattern.indices)[:, None] * bn + np.arange(bn)).ravel()
        self.multiply(pattern.values.size, k, dtype, cube)
        self.reads.gather(op.lhs, q_rows, path)
        if op.transpose_b is not None:
            self.reads.gather(op.rhs, k_rows, path)
        elif isinstance(op.rhs, BlockArgument):  # the gathered columns of k
            self.work.move("gm", path, k * k_rows.size * _bytes(op.rhs))
        if cube:
            self.work.move("l1", "l0a", q_rows.size * k * _bytes(op.lhs))
            self.work.move("l1", "l0b", k_rows.size * k * _bytes(op.rhs))
            self.from_cube.add(op.result)
        self.patterns[op.result] = pattern

    def matmul(self, op: tv.MatmulOp) -> None:
        """A batched product of top-k attention on the cube: its MACs, its
        operands through L0 (the arguments' rows read whole, the gathered ones
        counted by their gather) and its result to UB or GM."""
        out = _type(op.result)
        lhs = _type(op.lhs).get_shape()
        k = lhs[-2] if op.transpose_a is not None else lhs[-1]
        dtype = str(_type(op.lhs).element_type)
        self.work.macs[dtype] = (
            self.work.macs.get(dtype, 0.0) + prod(out.get_shape()) * k
        )
        for operand, l0 in ((op.lhs, "l0a"), (op.rhs, "l0b")):
            nbytes = prod(_type(operand).get_shape()) * _bytes(operand)
            self.work.move("l1", l0, nbytes)
            source = self.views.get(operand, operand)
            if isinstance(source, BlockArgument):
                rows = np.arange(_type(source).get_shape()[0])
                self.reads.gather(source, rows, "l1")
            elif not isinstance(source.owner, tv.GatherOp):
                self.work.move("ub", "l1", nbytes)  # computed on the vector unit
        if any(not isinstance(use.operation, func.ReturnOp) for use in op.result.uses):
            nbytes = prod(out.get_shape()) * _bytes(op.result)
            self.work.move("l0c", "ub", nbytes)
        self.from_cube.add(op.result)

    def write(self, value: SSAValue) -> None:
        source = "l0c" if self.views.get(value, value) in self.from_cube else "ub"
        if value in self.patterns:
            nbytes = self.patterns[value].values.size * _bytes(value)
        else:
            nbytes = prod(_type(value).get_shape()) * _bytes(value)
        self.work.move(source, "gm", nbytes)

    def arguments(self) -> None:
        """The sparse arguments' buffers, read once."""
        for value, pattern in self.patterns.items():
            if not isinstance(value, BlockArgument):
                continue
            encoding = _type(value).sparse_encoding
            assert encoding is not None
            index_bytes = encoding.index_type.width.data // 8
            index_count = pattern.offsets.size + pattern.indices.size
            self.work.move("gm", "ub", index_count * index_bytes)
            if value in self.values_read:
                nbytes = pattern.values.size * _bytes(value)
                self.work.move("gm", self.values_read[value], nbytes)


def _read_by_matmul(value: SSAValue) -> bool:
    """`value` is read only by batched matmuls, directly or through a
    transpose (which folds into the matmul)."""
    uses = [use.operation for use in value.uses]
    return bool(uses) and all(
        isinstance(user, tv.MatmulOp)
        or (isinstance(user, tv.TransposeOp) and _read_by_matmul(user.result))
        for user in uses
    )


def _normalised_later(softmax: tv.SparseSoftmaxOp) -> bool:
    """A softmax read only by an spmm (attention): the normalisation can be
    done on the product's rows instead of on the probabilities, as the fused
    block-sparse attention nest does (passes/sparse_attention.py)."""
    uses = list(softmax.result.uses)
    return len(uses) == 1 and isinstance(uses[0].operation, tv.SpmmOp)


def sparse_roofline(
    module: ModuleOp, name: str, target: Target, inputs: Sequence[Any]
) -> Roofline:
    """The roofline of `func.func @name` (tv level, with sparse ops) of
    `module` on `target` for one run with `inputs`."""
    function = SymbolTable.lookup_symbol(module, name)
    if not isinstance(function, func.FuncOp):
        raise ValueError(f"no func.func @{name} in the module")
    arguments = function.body.block.args
    kernel = _Kernel(target, dict(zip(arguments, inputs, strict=True)))
    for argument, value in zip(arguments, inputs, strict=True):
        if isinstance(argument.type, tv.TensorViewType) and argument.type.is_sparse:
            kernel.patterns[argument] = sparse_argument(argument.type, value)
    for op in function.body.block.ops:
        kernel.op(op)
    kernel.arguments()
    kernel.reads.move(kernel.work)
    return bounds_of(kernel.work, target)


def sparse_roofline_bound(
    module: ModuleOp, name: str, target: Target, inputs: Sequence[Any]
) -> RooflineBound | None:
    """`sparse_roofline(...).summary`, or None for a kernel it cannot bound
    (a dense op in it, a path the target lacks)."""
    try:
        return sparse_roofline(module, name, target, inputs).summary
    except ValueError:
        return None


def has_sparse_ops(module: ModuleOp, name: str) -> bool:
    """Whether `func.func @name` has an op whose work depends on the run's
    pattern (so only `sparse_roofline` bounds it)."""
    function = SymbolTable.lookup_symbol(module, name)
    return isinstance(function, func.FuncOp) and any(
        isinstance(op, tv.SPARSE_OPS) for op in function.walk()
    )
