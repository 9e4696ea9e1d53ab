"""The lowering of one function on sparse tensors: bufferize it and emit the
nest of each sparse op (`SparseFunctionLowering`, driven by the
`tv-sparse-to-tile` pass in passes/tv_sparse_to_tile.py, whose fields are its
options).

A sparse argument becomes its offsets, indices and values memrefs
(`sparse_memref_types`), each tensor result a trailing memref argument; the
nests come from passes/sparse_nests.py and the modules it names
(docs/sparse.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, cast

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    MemRefType,
    UnitAttr,
    bf16,
    f16,
    f32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.diagnostics import emit_remark, op_error
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects.tile import (
    EXTRACT_ELEMENT_TYPES,
    element_bytes,
    fractal_edge,
)
from pypto_mlir.targets import Target

from .bufferize import finish_function, memref_type
from .csr_entry_nests import SDDMM_WINDOW, CsrEntryNest
from .csr_masked_softmax import check_masked_window, masked_words
from .csr_spmm_nest import CsrSpmmNest, spmm_plan
from .csr_spmm_ranges import CsrRangeNest, RangeOptions, range_plan
from .located_builder import LocatedBuilder
from .multicore_split import INTERLEAVE_ATTR
from .sparse_attention import NestChoice, SparseAttentionPlan, scaled_pattern
from .sparse_epilogue import Epilogue, EpilogueRows, epilogue_of
from .sparse_fallback import FallbackCosts, spmm_fallback_costs
from .sparse_nests import SparseBuffers, SparseNest
from .sparse_outline import DISTRIBUTE_ATTR, outline
from .sparse_values import ValuesWindows, auto_window, window_view
from .tiling_model import BUFFERING, column_unit
from .topk_attention import Plans, TopkAttentionPlan

LOWERED_OPS: tuple[type[Operation], ...] = (
    tv.SpmmOp,
    tv.SpmvOp,
    tv.ToDenseOp,
    tv.GatherOp,
    tv.SddmmOp,
    tv.SparseSoftmaxOp,
)
"""The sparse ops this pass lowers to nests."""

_SPARSE_SIDE: tuple[type[Operation], ...] = (
    *LOWERED_OPS,
    tv.AssembleOp,
    tv.DisassembleOp,
)
"""The ops that stay in the sparse function: nests and the buffers of
assembled and disassembled tensors. The other `tv.SPARSE_OPS` are refused;
dense ops are outlined for tv-to-tile (passes/sparse_outline.py)."""

CUBE_TYPES = (f16, bf16)
"""Block-CSR values the cube path takes (16-bit: whole fractals of a block)."""


def _is_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, tv.TensorViewType)


def is_sparse(function: func.FuncOp) -> bool:
    """The function has a sparse op or a sparse tensor argument or result."""
    types = [*function.function_type.inputs.data, *function.function_type.outputs.data]
    if any(isinstance(t, tv.TensorViewType) and t.is_sparse for t in types):
        return True
    return any(isinstance(o, tv.SPARSE_OPS) for o in function.walk())


class SparseLoweringOptions(RangeOptions, Protocol):
    """The tv-sparse-to-tile options a function's lowering reads (the pass's
    fields, passes/tv_sparse_to_tile.py, which documents each)."""

    tile_cols: int
    bsr_cube: bool
    entry_window: int
    masked_window: int
    gather_run: int
    gather_runs: bool
    fuse_attention: bool
    attention_cube_sum: bool
    attention_scale_fold: bool
    attention_defer_update: bool
    attention_sum_column: bool
    attention_balance: bool
    attention_block_split: bool
    dense_fallback: bool
    dense_density: float
    entry_insert: bool
    values_window: int
    fuse_epilogue: bool
    b_ranges_density: float
    fuse_topk_attention: bool
    topk_gather_run: int
    topk_dense_fallback: str
    topk_mask_pipeline: bool
    interleave: bool


class SparseFunctionLowering:
    """Bufferizes one function and emits the nest of each sparse op."""

    def __init__(
        self, function: func.FuncOp, target: Target, options: SparseLoweringOptions
    ):
        if not function.body.blocks:
            raise op_error(function, "tv-sparse-to-tile cannot lower a declaration")
        self.function = function
        self.block = function.body.block
        self.target = target
        self.options = options
        self.dense: dict[SSAValue, SSAValue] = {}
        self.sparse: dict[SSAValue, SparseBuffers] = {}
        self.entries: dict[SSAValue, SparseBuffers] = {}
        """The values buffers (memrefs) and the sparse tensor they hold the
        stored values of."""
        self.parts: dict[SSAValue, tuple[SparseBuffers, str]] = {}
        """The offsets and indices results of a tv.disassemble."""
        self.epilogues: dict[Operation, Epilogue] = {}
        """The element-wise ops fused into each spmm's nest."""

    def run(self) -> None:
        return_op = self.block.last_op
        assert isinstance(return_op, func.ReturnOp)
        for op in reversed(list(self.block.ops)):
            if op.dialect_name() == "tv" and all(not r.uses for r in op.results):
                op.detach()
                op.erase()
        ops = [o for o in self.block.ops if o.dialect_name() == "tv"]
        for op in (o for o in ops if isinstance(o, tv.SPARSE_OPS)):
            shapes = [_tensor(v) for v in (*op.operands, *op.results) if _is_tensor(v)]
            for empty in (t for t in shapes if 0 in t.get_shape()):
                raise op_error(  # the nests and cost models divide by its sizes
                    op,
                    f"tv-sparse-to-tile cannot lower '{op.name}' on an empty tensor "
                    f"({empty}: a dimension of size 0); the tv reference (pypto-run "
                    "without --check) runs it",
                )
        plan = SparseAttentionPlan(
            ops,
            self.target,
            self.options.fuse_attention,
            NestChoice(
                self.options.attention_cube_sum,
                self.options.attention_defer_update,
                self.options.attention_scale_fold,
                self.options.attention_sum_column,
            ),
            self.options.attention_balance,
            self.options.attention_block_split,
        )
        plan = Plans(
            plan,
            TopkAttentionPlan(
                [o for o in ops if not plan.handles(o)],
                self.target,
                self.options,
                self.function,
            ),
        )
        self._check([o for o in ops if not plan.handles(o)], return_op, plan)
        fused = self._fuse_epilogues(ops, plan)
        self._arguments()
        outputs = self._results(return_op)
        end = InsertPoint.before(return_op)
        temporaries: list[SSAValue] = []
        written: set[SSAValue] = set()
        run: list[Operation] = []  # consecutive dense ops, outlined together
        for op in [*ops, return_op]:
            if op is not return_op and (op in plan.covered or op in fused):
                continue  # lowered with the root of its chain or its product
            if (
                op is not return_op
                and not plan.handles(op)
                and not isinstance(op, _SPARSE_SIDE)
            ):
                run.append(op)
                continue
            if run:
                written |= self._outline(run, outputs, temporaries, end)
                run = []
            if op is return_op:
                break
            if isinstance(op, tv.DisassembleOp | tv.AssembleOp) and not plan.handles(
                op
            ):
                self._buffers_of(op)
                continue
            builder = LocatedBuilder(end, location=op.location)
            result = op.results[0]
            if op in self.epilogues:  # the nest stores the epilogue's result
                result = self.epilogues[op].result
            out = outputs.get(result)
            if out is None:  # read by a later nest only: a GM temporary
                out = self._temporary(op, builder)
                temporaries.append(out)
            written.add(result)
            if not plan.emit(op, out, builder, self.sparse, self.dense):
                self._emit(op, out, builder)
            pattern = pattern_operand(op)
            if pattern is not None:  # a sparse result: values on its operand's pattern
                operand = self.sparse[pattern]
                self.sparse[result] = SparseBuffers(
                    operand.offsets, operand.indices, out, operand.shape, operand.block
                )
            else:
                self.dense[result] = out
        for value in outputs:
            if value not in written:
                raise op_error(
                    return_op,
                    "tv-sparse-to-tile: a function on sparse tensors returns a value "
                    "no op computes (an argument's buffers)",
                )
        for buffer in temporaries:
            LocatedBuilder.before(return_op).insert(memref.DeallocOp.get(buffer))
        scalars = [v for v in return_op.arguments if not _is_tensor(v)]
        finish_function(
            self.function,
            return_op,
            scalars,
            [o for o in ops if o.parent is self.block],
        )

    def _fuse_epilogues(self, ops: Sequence[Operation], plan: Plans) -> set[Operation]:
        """The element-wise ops that read only an spmm's result, applied to its
        rows in UB (passes/sparse_epilogue.py), with a remark each; returns
        the ops fused."""
        fused: set[Operation] = set()
        for op in ops:
            if not isinstance(op, tv.SpmmOp) or plan.handles(op):
                continue
            epilogue, why = epilogue_of(op, ops)
            if epilogue is None and why is None:
                continue
            if epilogue is not None and not self.options.fuse_epilogue:
                why, epilogue = "fuse-epilogue=false", None
            if epilogue is None:
                emit_remark(
                    op,
                    f"tv-sparse-to-tile: no epilogue fused into {op.name} ({why}): "
                    "the element-wise ops read its result from GM",
                )
                continue
            self.epilogues[op] = epilogue
            fused.update(epilogue.ops)
            rest = f"; the chain stops there: {why}" if why else ""
            emit_remark(
                op,
                f"tv-sparse-to-tile: {epilogue.names} fused into the rows of "
                f"{op.name} in UB before its one store (the product never goes "
                f"to GM){rest}",
            )
        return fused

    def _temporary(self, op: Operation, builder: LocatedBuilder) -> SSAValue:
        """A GM buffer for `op`'s result: its dense shape, or for a sparse result
        the values of its operand's pattern (`nnz` read from that operand)."""
        result_type = _tensor(op.results[0])
        pattern = pattern_operand(op)
        if pattern is None:
            return builder.value(memref.AllocOp([], [], memref_type(result_type)))
        zero = builder.value(arith.ConstantOp(IntegerAttr(0, IndexType())))
        nnz = builder.value(memref.DimOp(self.sparse[pattern].values, zero))
        values_type = sparse_memref_types(result_type)[2]
        return builder.value(memref.AllocOp([nnz], [], values_type))

    def _buffers_of(self, op: tv.DisassembleOp | tv.AssembleOp) -> None:
        """The buffers of a disassembled sparse tensor (its values a dense 1-d
        tensor), or of one assembled from a tensor's index arrays and values."""
        if isinstance(op, tv.DisassembleOp):
            a = self.sparse[op.input]
            self.parts[op.offsets] = (a, "offsets")
            self.parts[op.indices] = (a, "indices")
            self.dense[op.values] = a.values
            self.entries[a.values] = a
            return
        offsets, indices = self.parts.get(op.offsets), self.parts.get(op.indices)
        if (
            offsets is None
            or indices is None
            or offsets[0] is not indices[0]
            or (offsets[1], indices[1]) != ("offsets", "indices")
        ):
            raise op_error(
                op,
                "tv-sparse-to-tile lowers a tv.assemble of the offsets and indices "
                "of one disassembled sparse tensor only (the values may be "
                "computed)",
            )
        a = offsets[0]
        self.sparse[op.result] = SparseBuffers(
            a.offsets, a.indices, self.dense[op.values], a.shape, a.block
        )

    def _outline(
        self,
        run: Sequence[Operation],
        outputs: dict[SSAValue, SSAValue],
        temporaries: list[SSAValue],
        end: InsertPoint,
    ) -> set[SSAValue]:
        """Move the dense ops `run` into a function tv-to-tile tiles
        (passes/sparse_outline.py); their results read later go to the output
        they are returned as (or assembled into), else to a GM temporary.
        Returns the outputs written."""
        builder = LocatedBuilder(end, location=run[0].location)
        inside = set(run)
        pattern = self._entry_pattern(run)
        destinations: dict[SSAValue, SSAValue] = {}
        written: set[SSAValue] = set()
        for op in run:
            for result in op.results:
                users = [u.operation for u in result.uses]
                if all(u in inside for u in users):
                    continue
                if not _is_tensor(result):
                    raise op_error(
                        op,
                        f"tv-sparse-to-tile: the scalar result of '{op.name}' is "
                        "read by sparse ops",
                    )
                returned = [result] if result in outputs else []
                returned += [
                    u.result
                    for u in users
                    if isinstance(u, tv.AssembleOp) and u.result in outputs
                ]
                if returned:
                    destination = outputs[returned[0]]
                    written.update(returned)
                else:
                    destination = self._dense_temporary(op, result, run, builder)
                    temporaries.append(destination)
                destinations[result] = destination
                self.dense[result] = destination
                if pattern is not None:
                    self.entries[destination] = pattern
        if pattern is None:
            outline(run, self._dense_buffer, destinations, self.function, builder)
            what = "on GM buffers of the sparse nests"
        else:
            what = self._outline_entries(run, pattern, destinations, builder)
        emit_remark(
            run[0],
            f"tv-sparse-to-tile: {len(run)} dense op{'s' if len(run) > 1 else ''} "
            f"outlined for tv-to-tile, {what}",
        )
        return written

    def _entry_pattern(self, run: Sequence[Operation]) -> SparseBuffers | None:
        """The sparse tensor whose stored values the dense ops `run` map (every
        tensor `? x ...`, read from its values), None for other dense ops."""
        for op in run:
            for value in op.operands:
                if value in self.parts:
                    self._dense_buffer(op, value)  # refused
        tensors = [v for o in run for v in (*o.operands, *o.results) if _is_tensor(v)]
        if not tensors or any(
            _tensor(v).get_shape()[0] != DYNAMIC_INDEX
            or DYNAMIC_INDEX in _tensor(v).get_shape()[1:]
            for v in tensors
        ):
            return None
        patterns = [
            self.entries[self.dense[v]]
            for v in tensors
            if v in self.dense and self.dense[v] in self.entries
        ]
        if not patterns:
            raise op_error(
                run[0],
                "tv-sparse-to-tile: a dense op on a tensor whose size is known at "
                "run time only maps the values of a sparse tensor only",
            )
        return patterns[0]

    def _outline_entries(
        self,
        run: Sequence[Operation],
        a: SparseBuffers,
        destinations: dict[SSAValue, SSAValue],
        builder: LocatedBuilder,
    ) -> str:
        """The dense ops on values as a function of a window of stored entries,
        called per window of the values array split over the cores
        (passes/sparse_values.py): `? x ...` buffers seen `count x ...` at the
        window (sizes static, as ascend_hw needs). Returns the remark's text."""
        tensors = [v for o in run for v in (*o.operands, *o.results) if _is_tensor(v)]
        types = [_tensor(v).element_type for v in tensors]
        entry = a.block[0] * a.block[1]
        window = self.options.values_window or auto_window(
            entry, max(element_bytes(t) for t in types)
        )
        gm = self.target.memories["gm"].alignment
        aligned = all(window * entry * element_bytes(t) % gm == 0 for t in types)
        cores = self.target.cores if aligned else 1
        nest = ValuesWindows(builder, 1, 1)
        nnz = nest.value(nest.top, memref.DimOp(a.values, nest.constant(0)))

        def emit(inner: LocatedBuilder, position: SSAValue, count: int) -> None:
            views: dict[SSAValue, SSAValue] = {}

            def view(buffer: SSAValue) -> SSAValue:
                if buffer not in views:
                    views[buffer] = window_view(inner, buffer, position, count)
                return views[buffer]

            def shaped(value_type: tv.TensorViewType) -> tv.TensorViewType:
                return tv.TensorViewType(
                    value_type.element_type, [count, *value_type.get_shape()[1:]]
                )

            copies: dict[SSAValue, SSAValue] = {}  # each window outlines a copy
            ops = [o.clone(value_mapper=copies) for o in run]
            outline(
                ops,
                lambda op, value: view(self._dense_buffer(op, value)),
                {copies[r]: view(d) for r, d in destinations.items()},
                self.function,
                inner,
                shaped,
            )

        nest.windows(nnz, window, cores, emit)
        split = (
            f"split over {cores} cores"
            if cores > 1
            else "on one core"
            + (
                ""
                if aligned
                else f" (a window is not whole {gm}-byte GM blocks: two cores "
                "would write one)"
            )
        )
        return (
            f"by windows of {window} stored {'entry' if window == 1 else 'entries'} "
            f"(one tile each, {split}; the rest of the run-time count on the "
            "last core: one more window ending at the last entry, or static "
            "pieces of powers of two when there are fewer entries than a window)"
        )

    def _dense_buffer(self, op: Operation, value: SSAValue) -> SSAValue:
        """The GM memref of a dense tensor a dense op reads."""
        if value in self.parts:
            raise op_error(
                op,
                "tv-sparse-to-tile: dense ops on the index arrays of a sparse tensor "
                "are not lowered (its values may be computed)",
            )
        return self.dense[value]

    def _dense_temporary(
        self,
        op: Operation,
        value: SSAValue,
        run: Sequence[Operation],
        builder: LocatedBuilder,
    ) -> SSAValue:
        """A GM buffer for a dense result; a size known at run time only is
        that of an input of the same shape (the values of a sparse tensor)."""
        value_type = _tensor(value)
        dynamic: list[SSAValue] = []
        if DYNAMIC_INDEX in value_type.get_shape():
            inputs = [
                v
                for o in run
                for v in o.operands
                if v in self.dense and _tensor(v).get_shape() == value_type.get_shape()
            ]
            if not inputs:
                raise op_error(
                    op,
                    "tv-sparse-to-tile: the size of this result is known at run "
                    "time only and no input has its shape",
                )
            buffer = self.dense[inputs[0]]
            for dim, size in enumerate(value_type.get_shape()):
                if size == DYNAMIC_INDEX:
                    index = builder.value(
                        arith.ConstantOp(IntegerAttr(dim, IndexType()))
                    )
                    dynamic.append(builder.value(memref.DimOp(buffer, index)))
        return builder.value(memref.AllocOp(dynamic, [], memref_type(value_type)))

    # Checks --------------------------------------------------------------------------

    def _check(
        self,
        ops: Sequence[Operation],
        return_op: func.ReturnOp,
        plan: Plans,
    ) -> None:
        for op in ops:
            if isinstance(op, tv.SPARSE_OPS) and not isinstance(op, _SPARSE_SIDE):
                raise op_error(
                    op,
                    f"tv-sparse-to-tile cannot lower the sparse op '{op.name}' yet "
                    "(docs/sparse.md)",
                )
            if not isinstance(op, tv.SPARSE_OPS) and any(
                _is_tensor(v) and _tensor(v).is_sparse
                for v in (*op.operands, *op.results)
            ):
                raise op_error(
                    op, f"tv-sparse-to-tile cannot lower '{op.name}' on a sparse tensor"
                )
        for op in self.function.walk():
            if op is self.function or op is return_op:
                continue
            if op.parent_block() is not self.block and op.dialect_name() == "tv":
                raise op_error(
                    op, "tv-sparse-to-tile lowers tv ops only at the top level"
                )
            if plan.handles(op):
                continue
            if op.dialect_name() != "tv":
                if any(_is_tensor(v) for v in (*op.operands, *op.results)):
                    raise op_error(
                        op, f"tv-sparse-to-tile cannot lower '{op.name}' on tensors"
                    )
                continue
            if not isinstance(op, LOWERED_OPS):
                continue  # dense ops: tv-to-tile checks them
            for value in (*op.operands, *op.results):
                if (
                    DYNAMIC_INDEX in _tensor(value).get_shape()
                    and not _tensor(value).is_sparse
                ):
                    raise op_error(
                        op,
                        f"tv-sparse-to-tile needs static dense shapes, got {value.type}",
                    )
        returned = [v for v in return_op.arguments if _is_tensor(v)]
        for value in returned:
            if returned.count(value) > 1:
                raise op_error(
                    return_op,
                    "tv-sparse-to-tile: a function on sparse tensors returns a "
                    "tensor twice",
                )
        for value in return_op.arguments:
            if _is_tensor(value) and value.owner is self.block:
                raise op_error(
                    return_op,
                    "tv-sparse-to-tile: a function on sparse tensors cannot return "
                    "an argument",
                )

    # Signature -----------------------------------------------------------------------

    def _arguments(self) -> None:
        for arg in list(self.block.args):
            if not _is_tensor(arg):
                continue
            arg_type = _tensor(arg)
            name = arg.name_hint
            encoding = arg_type.sparse_encoding
            if encoding is None:
                buffer = self.block.insert_arg(memref_type(arg_type), arg.index + 1)
                buffer.name_hint = name
                self.dense[arg] = buffer
                continue
            buffers: list[SSAValue] = []
            for position, (suffix, buffer_type) in enumerate(
                zip(
                    ("offsets", "indices", "values"),
                    sparse_memref_types(arg_type),
                    strict=True,
                )
            ):
                buffer = self.block.insert_arg(buffer_type, arg.index + 1 + position)
                buffer.name_hint = f"{name}_{suffix}" if name else None
                buffers.append(buffer)
            rows, cols = arg_type.get_shape()
            self.sparse[arg] = SparseBuffers(
                *buffers, (rows, cols), tuple(encoding.block_shape)
            )

    def _results(self, return_op: func.ReturnOp) -> dict[SSAValue, SSAValue]:
        count = sum(_is_tensor(v) for v in return_op.arguments)
        outputs: dict[SSAValue, SSAValue] = {}
        for value in return_op.arguments:
            if not _is_tensor(value):
                continue
            value_type = _tensor(value)
            buffer_type = (
                sparse_memref_types(value_type)[2]
                if value_type.is_sparse
                else memref_type(value_type)
            )  # a sparse result is its values (docs/sparse.md)
            buffer = self.block.insert_arg(buffer_type, len(self.block.args))
            buffer.name_hint = "out" if count == 1 else f"out{len(outputs)}"
            outputs[value] = buffer
        return outputs

    # Nests ---------------------------------------------------------------------------

    def _emit(self, op: Operation, out: SSAValue, builder: LocatedBuilder) -> None:
        if isinstance(op, tv.GatherOp):
            source = self.dense[op.source]
            if _tensor(op.source).get_num_dims() != 2:
                raise op_error(
                    op,
                    "tv-sparse-to-tile gathers rows of a matrix only, got "
                    f"{op.source.type}",
                )
            element_type = _tensor(op.source).element_type
            run = self.options.gather_run
            if run < 1:
                raise op_error(
                    op, f"tv-sparse-to-tile: gather-run must be >= 1, got {run}"
                )
            indices = _tensor(op.indices).get_shape()
            run = 1 if indices[-1] < run else run
            cols = self._columns(
                op, [element_type], _tensor(op.source).get_shape()[1], 2, run
            )
            self._nest(builder, cols, element_type).gather(
                source, self.dense[op.indices], out, run
            )
            how = (
                f"; {run} consecutive indices (compared on the scalar unit) move "
                f"as one {run}-row DMA, other groups row by row"
                if run > 1
                else " (runs of consecutive indices not merged: gather-run=1 or "
                "fewer indices than a run)"
            )
            # A gather shares its phase with the nests beside it (a copy of q,
            # the other gather of top-k attention): each is split over all the
            # cores, not the later ones left to the last core.
            if self.options.interleave:
                self.function.attributes[INTERLEAVE_ATTR] = UnitAttr()
                how += "; each nest of its phase split over all the cores (interleave)"
            emit_remark(
                op, f"tv-sparse-to-tile: gather by rows, {_columns(cols)} a tile{how}"
            )
            return
        if isinstance(op, tv.ToDenseOp):
            a = self.sparse[op.input]
            if self._to_dense_rows(op, a, out, builder):
                return
            cols = self._columns(op, [a.element_type], a.shape[1], 2, a.block[0])
            self._check_block_fits(op, a)
            self._nest(builder, cols, a.element_type).to_dense(a, out)
            emit_remark(
                op,
                f"tv-sparse-to-tile: to_dense by {a.block[0]}-row blocks: zero "
                f"tiles of {_columns(cols)}, then each stored block scattered",
            )
            return
        if isinstance(op, tv.SparseSoftmaxOp):
            a = self.sparse[op.input]
            window = self.options.entry_window
            if window < 1:
                raise op_error(
                    op, f"tv-sparse-to-tile: entry-window must be >= 1, got {window}"
                )
            plan, _ = spmm_plan(a, 1, self.target, self.options)
            if a.block == (1, 1) and (window > 1 or plan.cores > 1):
                words = (
                    "sparse_softmax by rows: the max and the quotients over windows "
                    f"of {window} entries (one DMA each way), the rest of a row and "
                    "the sum of exp entry by entry (in entry order)"
                )
                if plan.cores > 1:
                    alignment = self.target.memories["ub"].alignment
                    unit = column_unit([a.element_type, f32], alignment)
                    masked = self.options.masked_window
                    check_masked_window(op, masked, unit, alignment)
                    CsrEntryNest(builder, 1, unit).softmax_split(
                        a, out, window, plan, masked
                    )
                    if masked:
                        words = masked_words(masked, window, words)
                    emit_remark(
                        op,
                        f"tv-sparse-to-tile: {words}; the entries split over "
                        f"{plan.cores} cores in whole blocks of {SDDMM_WINDOW} "
                        "(a row straddling two cores: its max and sum computed "
                        "by both, its quotients written by each for its entries)",
                    )
                    return
                self._nest(builder, 1, a.element_type).csr_softmax(a, out, window)
                emit_remark(op, f"tv-sparse-to-tile: {words}")
                return
            self._nest(builder, 1, a.element_type).sparse_softmax(a, out)
            (bm, bn), gm = a.block, self.target.memories["gm"].alignment
            cores = (
                "the block rows split over the cores"
                if bm * bn * element_bytes(a.element_type) % gm == 0
                else f"one core (a block is not whole {gm}-byte GM blocks: two "
                "cores would write one)"
            )
            emit_remark(
                op,
                f"tv-sparse-to-tile: sparse_softmax by {bm}-row blocks: row max, "
                "sum of exp and the quotients over the stored blocks in three "
                f"passes, each block one {bm}x{bn} tile; {cores}",
            )
            return
        if isinstance(op, tv.SddmmOp):
            self._sddmm(op, out, builder)
            return
        assert isinstance(op, tv.SpmmOp | tv.SpmvOp)
        a, b = self.sparse[op.lhs], self.dense[op.rhs]
        shape = _tensor(op.rhs).get_shape()
        n = shape[1] if len(shape) == 2 else 1
        reason = self._cube_refusal(a)
        epilogue = self.epilogues.get(op)
        rows = None
        live = 0  # UB tiles of the epilogue: its result and its operands
        if epilogue is not None:
            rows = EpilogueRows(
                epilogue, {v: self.dense[v] for v in epilogue.operands()}
            )
            live = 1 + len(epilogue.operands())
        if reason is None:
            cols = self._cube_columns(op, a, n)
            if live:
                unit = fractal_edge(a.element_type, self.target)
                ub = cast(int, self.target.memories["ub"].size)
                most = ub // (BUFFERING * live * a.block[0] * 4) // unit * unit
                cols = min(cols, max(unit, most))
            nest = self._nest(
                builder, cols, a.element_type, fractal_edge(a.element_type, self.target)
            )
            nest.epilogue = rows
            nest.spmm_cube(a, b, out)
            emit_remark(
                op,
                f"tv-sparse-to-tile: {op.name} of {a.block[0]}x{a.block[1]} blocks on "
                f"the cube, {_columns(cols)} a tile: the stored blocks of a block row "
                "accumulate in L0C; empty block rows store zeros",
            )
            return
        # value, gathered row (T and f32), product and accumulator (f32), result
        cols = self._columns(op, [a.element_type, f32], n, 5 + live)
        rows_builder = builder
        if reason == "csr" and isinstance(op, tv.SpmmOp):
            rows_builder = self._dense_fallback(op, a, b, out, cols, builder)
        if reason == "csr":
            plan, why = spmm_plan(a, n, self.target, self.options)
            ranges, ranges_why = range_plan(
                a, n, self.target, self.options, plan, self.options.b_ranges_density
            )
            why = (
                f"{why}; {ranges_why}"
                if ranges is None
                else f"{ranges_why} (instead of the row nest: {why})"
            )
            alignment = self.target.memories["ub"].alignment
            unit = column_unit([a.element_type, f32], alignment)
            if ranges is not None:
                range_nest = CsrRangeNest(rows_builder, cols, unit)
                range_nest.epilogue = rows
                range_nest.spmm_ranges(a, b, out, plan, ranges)
            else:
                nest = CsrSpmmNest(rows_builder, cols, unit)
                nest.epilogue = rows
                if plan.window and not plan.width:  # rows of b from GM
                    why += "; " + nest.take_runs(
                        self.target,
                        self.options.gather_runs,
                        (a.shape[1], n),
                        a.element_type,
                        5 + live,
                    )
                nest.spmm_csr(a, b, out, plan)
            emit_remark(
                op,
                f"tv-sparse-to-tile: {op.name} by rows, {_columns(cols)} a tile: per "
                "stored entry a gathered row of the rhs multiply-accumulated in f32 "
                f"in UB; {why}",
            )
            return
        nest = self._nest(builder, cols, a.element_type)
        nest.epilogue = rows
        nest.spmm_rows(a, b, out)
        emit_remark(
            op,
            f"tv-sparse-to-tile: {op.name} by rows, {_columns(cols)} a tile: per "
            f"stored entry a gathered row of the rhs multiply-accumulated in f32 "
            f"in UB ({reason})",
        )

    def _to_dense_rows(
        self, op: tv.ToDenseOp, a: SparseBuffers, out: SSAValue, builder: LocatedBuilder
    ) -> bool:
        """CSR to_dense by rows built in UB (`tile.insert`) when a row fits one
        tile; False (with the reason in the remark of the plain nest) if not."""
        if a.block != (1, 1):
            return False
        n = a.shape[1]
        cols = self._columns(op, [a.element_type], n, 2)
        why = self._entry_insert_refusal(a, n, cols)
        if why is not None:
            emit_remark(
                op, f"tv-sparse-to-tile: to_dense not by rows built in ub: {why}"
            )
            return False
        plan, why = spmm_plan(a, n, self.target, self.options)
        alignment = self.target.memories["ub"].alignment
        CsrEntryNest(
            builder, cols, column_unit([a.element_type], alignment)
        ).to_dense_rows(a, out, plan)
        emit_remark(
            op,
            f"tv-sparse-to-tile: to_dense by rows: each row a zero tile of {n} "
            "columns in ub, the stored values inserted at their columns "
            f"(tile.insert), stored with one DMA; {why}",
        )
        return True

    def _entry_insert_refusal(self, a: SparseBuffers, n: int, cols: int) -> str | None:
        """Why a CSR result is not built in ub by `tile.insert` (None: it is)."""
        if not self.options.entry_insert:
            return "entry-insert=false"
        if a.element_type not in EXTRACT_ELEMENT_TYPES:
            return f"tile.insert writes i16, i32, f16, f32, not {a.element_type}"
        if n > cols:
            return f"a row of {n} columns is more than one ub tile ({cols})"
        return None

    def _dense_fallback(
        self,
        op: tv.SpmmOp,
        a: SparseBuffers,
        b: SSAValue,
        out: SSAValue,
        cols: int,
        builder: LocatedBuilder,
    ) -> LocatedBuilder:
        """When the cost model finds a count of stored entries from which
        `to_dense` and the dense matmul are faster, branch on `nnz` (the last
        row offset) between them and the row nest; returns where the row nest
        goes (docs/sparse.md, *The dense fallback*)."""
        m, k = a.shape
        if not self.options.dense_fallback:
            return builder
        element_type = a.element_type
        if element_type not in CUBE_TYPES:
            emit_remark(
                op,
                f"tv-sparse-to-tile: no dense fallback for {element_type} values "
                "(the cube takes f16/bf16)",
            )
            return builder
        dense_cols = self._columns(op, [element_type], k, 2)
        costs = self.fallback_costs(op, cols)
        modelled = costs.threshold() if costs is not None else None
        if self.options.dense_density > 0:
            threshold = math.ceil(self.options.dense_density * m * k)
            why = f"dense-density {self.options.dense_density:g}"
        else:
            threshold = modelled
            why = "the cost model's"
        estimate = (
            "no matmul tiling fits" if costs is None else costs.text(modelled or 0)
        )
        model_text = "never" if modelled is None else f"from nnz = {modelled}"
        if threshold is None or threshold > m * k:
            emit_remark(
                op,
                f"tv-sparse-to-tile: no dense fallback: the row nest is estimated "
                f"no slower at any nnz ({estimate}; dense {model_text})",
            )
            return builder
        emit_remark(
            op,
            f"tv-sparse-to-tile: dense fallback when nnz >= {threshold} (density "
            f"{threshold / (m * k):.4%}, {why}; the model's: {model_text}): "
            f"to_dense into a GM temporary and the dense matmul, else the row "
            f"nest; estimated {estimate}",
        )
        scalars = SparseNest(builder, 1, 1)
        nnz = scalars.read_index(scalars.top, a.offsets, m)
        condition = builder.value(arith.CmpiOp(nnz, scalars.constant(threshold), "sge"))
        then_block, else_block = Block(), Block()
        branch = builder.insert(
            scf.IfOp(condition, [], Region(then_block), Region(else_block))
        )
        branch.attributes[DISTRIBUTE_ATTR] = UnitAttr()
        for block in (then_block, else_block):
            block.add_op(scf.YieldOp())
        dense = LocatedBuilder(
            InsertPoint.before(then_block.last_op), location=builder.location
        )
        dense_type = MemRefType(element_type, [m, k])
        buffer = dense.value(memref.AllocOp([], [], dense_type))
        self._nest(dense, dense_cols, element_type).to_dense(a, buffer)
        tensors = Block(
            arg_types=[
                tv.TensorViewType(element_type, [m, k]),
                _tensor(op.rhs),
            ]
        )
        product = tv.MatmulOp(tensors.args[0], tensors.args[1])
        product.location = op.location
        tensors.add_op(product)
        sources = {tensors.args[0]: buffer, tensors.args[1]: b}
        ops: list[Operation] = [product]
        epilogue = self.epilogues.get(op)
        if epilogue is not None:  # tv-to-tile fuses it into the matmul's nest
            copies: dict[SSAValue, SSAValue] = {epilogue.source: product.result}
            ops += [o.clone(value_mapper=copies) for o in epilogue.ops]
            sources |= {v: self.dense[v] for v in epilogue.operands()}
        outline(
            ops,
            lambda _, value: sources[value],
            {ops[-1].results[0]: out},
            self.function,
            dense,
        )
        dense.insert(memref.DeallocOp.get(buffer))
        return LocatedBuilder(
            InsertPoint.before(else_block.last_op), location=builder.location
        )

    def fallback_costs(self, op: tv.SpmmOp, cols: int = 0) -> FallbackCosts | None:
        """The cost model's estimates of CSR spmm `op` by the row nest (row
        tiles of `cols`, else those the nest takes) and by the dense fallback."""
        (m, k), (_, n) = _tensor(op.lhs).get_shape(), _tensor(op.rhs).get_shape()
        element_type = _tensor(op.lhs).element_type
        cols = cols or self._columns(op, [element_type, f32], n, 5)
        return spmm_fallback_costs(
            self.target,
            (m, k, n),
            str(element_type),
            element_bytes(element_type),
            cols,
            self._columns(op, [element_type], k, 2),
            fractal_edge(element_type, self.target),
        )

    def _sddmm(self, op: tv.SddmmOp, out: SSAValue, builder: LocatedBuilder) -> None:
        mask, q, k = self.sparse[op.mask], self.dense[op.lhs], self.dense[op.rhs]
        transpose_b = op.transpose_b is not None
        element_type = _tensor(op.lhs).element_type
        depth = _tensor(op.lhs).get_shape()[1]
        if mask.block == (1, 1):
            if not transpose_b:
                raise op_error(
                    op,
                    "tv-sparse-to-tile lowers a CSR tv.sddmm with transpose_b only "
                    "(the rhs as rows, gathered by the column indices)",
                )
            cols = self._columns(op, [element_type, f32], depth, 4)
            if self.options.entry_insert:
                plan, _ = spmm_plan(mask, 1, self.target, self.options)
                alignment = self.target.memories["ub"].alignment
                unit = column_unit([element_type, f32], alignment)
                nest = CsrEntryNest(builder, cols, unit)
                # a run's rows of k come with their f32 copy and product
                runs = nest.take_runs(
                    self.target,
                    self.options.gather_runs,
                    (mask.shape[1], depth),
                    element_type,
                    4,
                    f32_copies=2,
                )
                nest.sddmm_windows(mask, q, k, out, plan)
                indices = (
                    "the window's column indices loaded into ub with one DMA"
                    if plan.window
                    else "column indices read from GM per entry"
                    + (
                        " (index-prefetch=false)"
                        if not self.options.index_prefetch
                        else " (prefetch takes i32 indices)"
                    )
                )
                cores = (
                    f"whole windows split over {plan.cores} cores"
                    if plan.cores > 1
                    else "one core"
                    + (" (nnz-balance=false)" if not self.options.nnz_balance else "")
                )
                emit_remark(
                    op,
                    f"tv-sparse-to-tile: tv.sddmm by windows of {SDDMM_WINDOW} "
                    f"entries, {_columns(cols)} of K a tile: each dot product (a row "
                    "of lhs times the gathered row of rhs, summed in f32) inserted "
                    f"into a 1x{SDDMM_WINDOW} f32 tile (tile.insert), stored with one "
                    f"DMA; {indices}; {cores}; rows of k: {runs}",
                )
                return
            self._nest(builder, cols, element_type).sddmm_rows(mask, q, k, out)
            emit_remark(
                op,
                f"tv-sparse-to-tile: tv.sddmm by rows, {_columns(cols)} of K a tile: "
                "per stored entry a row of lhs times the gathered row of rhs, summed "
                "in f32, stored alone (entry-insert=false); one core",
            )
            return
        reason = self._cube_refusal(mask, element_type) or self._sddmm_fits(
            mask, element_type, depth
        )
        if reason is not None:
            raise op_error(
                op,
                f"tv-sparse-to-tile lowers a block-CSR tv.sddmm on the cube: {reason}",
            )
        self._nest(builder, 1, element_type).sddmm_cube(mask, q, k, transpose_b, out)
        emit_remark(
            op,
            f"tv-sparse-to-tile: tv.sddmm of {mask.block[0]}x{mask.block[1]} blocks "
            f"on the cube, K = {depth} in one step: the q rows of a block row are "
            "loaded once, only the stored blocks are computed",
        )

    def _sddmm_fits(
        self, mask: SparseBuffers, element_type: Attribute, depth: int
    ) -> str | None:
        """Why a block's q rows and k columns (K whole) do not fit, double-buffered."""
        (bm, bn), size = mask.block, element_bytes(element_type)
        edge = fractal_edge(element_type, self.target)
        if depth % edge:
            return f"K = {depth} is not a multiple of the {edge}-element fractal"
        needs = {
            "l1": (bm + bn) * depth * size,
            "l0a": bm * depth * size,
            "l0b": bn * depth * size,
            "l0c": bm * bn * 4,
        }
        for memory, count in needs.items():
            held = cast(int, self.target.memories[memory].size)
            if BUFFERING * count > held:
                return (
                    f"K = {depth} does not fit: {memory} of target "
                    f"'{self.target.name}' holds {held} bytes, two tiles need "
                    f"{BUFFERING * count}"
                )
        return None

    def _nest(
        self, builder: LocatedBuilder, cols: int, element_type: Attribute, unit: int = 0
    ) -> SparseNest:
        alignment = self.target.memories["ub"].alignment
        unit = unit or column_unit([element_type, f32], alignment)
        return SparseNest(builder, cols, unit)

    def _cube_refusal(
        self, a: SparseBuffers, element_type: Attribute | None = None
    ) -> str | None:
        """Why the block-CSR operand `a` is not multiplied on the cube (None: it
        is); `csr` for a CSR operand."""
        element_type = element_type or a.element_type
        if a.block == (1, 1):
            return "csr"
        if not self.options.bsr_cube:
            return "bsr-cube=false"
        if element_type not in CUBE_TYPES:
            return f"the cube path takes f16/bf16 blocks, not {element_type}"
        edge = fractal_edge(element_type, self.target)
        if a.block[0] % edge or a.block[1] % edge:
            return f"the block is not a multiple of the {edge}x{edge} fractal"
        if self._cube_most(a) < edge:
            return f"{a.block[0]}x{a.block[1]} blocks do not fit the cube's memories"
        return None

    def _columns(
        self,
        op: Operation,
        element_types: Sequence[Attribute],
        n: int,
        live: int,
        rows: int = 1,
    ) -> int:
        """Columns of the UB tiles of `rows` rows: `tile-cols`, else the most
        that `live` tiles of the widest type hold, double-buffered."""
        ub = self.target.memories["ub"]
        unit = column_unit([*element_types], ub.alignment)
        widest = max(element_bytes(t) for t in element_types)
        most = cast(int, ub.size) // (live * rows * widest * BUFFERING)
        return self._chosen(op, n, unit, most // unit * unit, "ub")

    def _check_block_fits(self, op: Operation, a: SparseBuffers) -> None:
        """A stored block passes through UB whole (to_dense), double-buffered."""
        ub = self.target.memories["ub"]
        unit = column_unit([a.element_type], ub.alignment)
        (bm, bn), size = a.block, element_bytes(a.element_type)
        needs = BUFFERING * bm * (bn if bn == 1 else -(-bn // unit) * unit) * size
        if needs > cast(int, ub.size):
            raise op_error(
                op,
                f"tv-sparse-to-tile: a {bm}x{bn} block needs {needs} bytes of ub "
                f"(double-buffered), target '{self.target.name}' holds {ub.size}",
            )

    def _cube_most(self, a: SparseBuffers) -> int:
        """The most columns of the cube's B and L0C tiles: each of L1 (a block
        and the B rows), L0B and L0C holds two (double-buffered)."""
        (bm, bn), size = a.block, element_bytes(a.element_type)
        unit = fractal_edge(a.element_type, self.target)
        sizes = {
            k: cast(int, m.size) for k, m in self.target.memories.items() if m.size
        }
        l1 = (sizes["l1"] // BUFFERING - bm * bn * size) // (bn * size)
        most = min(
            l1,
            sizes["l0b"] // (BUFFERING * bn * size),
            sizes["l0c"] // (BUFFERING * bm * 4),
            sizes["ub"] // (bm * size),
        )
        return most // unit * unit

    def _cube_columns(self, op: Operation, a: SparseBuffers, n: int) -> int:
        unit = fractal_edge(a.element_type, self.target)
        return self._chosen(op, n, unit, self._cube_most(a), "l0c")

    def _chosen(self, op: Operation, n: int, unit: int, most: int, memory: str) -> int:
        """`tile-cols` (checked) or `most`, for `n` columns."""
        if n == 1:
            return 1
        if most < unit:
            raise op_error(
                op,
                f"tv-sparse-to-tile: no tile of {unit} columns fits in {memory} of "
                f"target '{self.target.name}' (double-buffered)",
            )
        wanted = self.options.tile_cols or min(most, -(-n // unit) * unit)
        if wanted < n and wanted % unit:
            raise op_error(
                op,
                f"tv-sparse-to-tile: tile-cols {wanted} is not a multiple of "
                f"{unit} (the alignment unit of the tiles)",
            )
        if min(wanted, n) > most:
            raise op_error(
                op,
                f"tv-sparse-to-tile: a row tile of {min(wanted, n)} columns does not "
                f"fit: {memory} of target '{self.target.name}' holds {max(most, 0)}",
            )
        return min(wanted, n)


def sparse_memref_types(
    sparse_type: tv.TensorViewType,
) -> tuple[MemRefType[Attribute], ...]:
    """The GM memrefs of a sparse tensor: offsets `(block rows + 1) x I`,
    indices `? x I`, values `? x T` (`? x bm x bn x T` for block-CSR), where
    `I` is the encoding's index type (i16, i32; i64 as `index`): i32 indices
    can be DMAed into ub tiles and read with `tile.extract` (docs/sparse.md)."""
    offsets, indices, values = tv.sparse_buffer_types(sparse_type)
    index_type = offsets.element_type
    if index_type == i64:
        index_type = IndexType()
    return (
        MemRefType(index_type, offsets.get_shape()),
        MemRefType(index_type, [DYNAMIC_INDEX]),
        MemRefType(values.element_type, [DYNAMIC_INDEX, *values.get_shape()[1:]]),
    )


def pattern_operand(op: Operation) -> SSAValue | None:
    """The sparse operand whose pattern a sparse result has (None: dense result)."""
    if isinstance(op, tv.SddmmOp):
        return op.mask
    if isinstance(op, tv.SparseSoftmaxOp):
        return op.input
    return scaled_pattern(op)


def _columns(count: int) -> str:
    return f"{count} column" + ("" if count == 1 else "s")


def _tensor(value: SSAValue) -> tv.TensorViewType:
    return cast(tv.TensorViewType, value.type)
