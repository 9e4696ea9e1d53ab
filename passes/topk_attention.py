"""Fused top-k attention: one nest per query row instead of the gathers to GM.

`tv-sparse-to-tile{fuse-topk-attention=true}` (the default) finds the chain the
frontend traces from

    p = pto.softmax(q[:, None, :] @ k[idx].mT * s)
    out = (p @ v[idx])[:, 0]

(reshape, gather of k, transpose, batched matmul with m = 1, optional scale by
a constant, softmax over the keys, gather of v, batched matmul, window) and
lowers it as one nest over the query rows, split over the cores by tile-to-hw
(docs/sparse.md, *Top-k attention*). Per query: its row of q and its row of
indices loaded into UB (not prefetched: tile-pipeline leaves a static loop
with nested loops alone; it pipelines the loops over single rows), the keys' rows gathered GM -> UB by the
indices read on the scalar unit (`tile.extract`), a group of `run`
consecutive indices as one `run`-row DMA (the run check of the gather nest:
`idx[j + t] == idx[j] + t`), each key row's score `q . k` on the vector unit
(f32 multiply and row sum) written into a `1 x k` score tile (`tile.insert`),
the scale and a plain softmax over the k scores in UB, the same gather of the
value rows, each weighted by its probability and summed into a `1 x d` f32
accumulator, and one store of the output row. The scores and probabilities
never go to GM, and no `S x k x d` temporary is written.

The scores go to the vector unit, not the cube: the cube needs a query's k
key rows as one `k x d` operand in L1, which the tile dialect cannot build
from rows at run-time indices (`tile.load` makes a new tile of one GM
window); the remark says so.

Rounding follows the reference (each op's result type): the scores and the
scaled scores are rounded to the element type, the softmax is taken in f32 and
its probabilities rounded; the products accumulate in f32.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import FloatAttr, MemRefType, bf16, f16, f32, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.diagnostics import emit_remark
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType, element_bytes
from pypto_mlir.targets import Target, cost

from .located_builder import LocatedBuilder
from .nest_builder import Valid, compute_type
from .sparse_nests import SparseBuffers, SparseNest
from .tiling_model import BUFFERING, column_unit
from .topk_dense import (
    DenseAttention,
    DenseEstimate,
    dense_estimate,
    dense_refusal,
    emit_dense,
    mask_unit,
)

ELEMENT_TYPES: tuple[Attribute, ...] = (f16, bf16, f32)
"""Element types of q, k and v the fused nest takes (the vector unit casts
them to f32)."""


@dataclass(frozen=True)
class TopkChain:
    """`view((softmax(reshape(q) @ transpose(gather(k, idx)) [* s]) @
    gather(v, idx)))`: the ops of one top-k attention, root last."""

    reshape: tv.ReshapeOp
    keys: tv.GatherOp
    scores: tv.MatmulOp
    scaled: Operation | None
    softmax: tv.SoftmaxOp
    values: tv.GatherOp
    scale: float | None
    ops: tuple[Operation, ...]

    @property
    def root(self) -> Operation:
        return self.ops[-1]

    @property
    def shape(self) -> tuple[int, int, int]:
        """Queries, keys per query, head dim."""
        s, top = _tensor(self.keys.indices).get_shape()
        return s, top, _tensor(self.keys.source).get_shape()[1]


def _only_use(value: SSAValue, user: Operation) -> bool:
    uses = list(value.uses)
    return len(uses) == 1 and uses[0].operation is user


def _tensor(value: SSAValue) -> tv.TensorViewType:
    return cast(tv.TensorViewType, value.type)


def topk_chain(op: Operation) -> TopkChain | None:
    """The top-k attention chain whose root is `op` (the window of the
    second product, or that product when it is returned whole), if any."""
    root = op
    product = op
    if isinstance(op, tv.ViewOp):
        product = op.source.owner
        if not isinstance(product, tv.MatmulOp) or not _only_use(product.result, op):
            return None
        if any(op.static_offsets.get_values()) or op.offsets or op.sizes:
            return None
    if (
        not isinstance(product, tv.MatmulOp)
        or len(_tensor(product.result).get_shape()) != 3
    ):
        return None
    if root is product and any(
        isinstance(use.operation, tv.ViewOp) for use in product.result.uses
    ):
        return None  # its window is the root
    softmax, values = product.lhs.owner, product.rhs.owner
    if not isinstance(softmax, tv.SoftmaxOp) or not isinstance(values, tv.GatherOp):
        return None
    if softmax.axis.value.data != 2 or product.transpose_a or product.transpose_b:
        return None
    scores = softmax.input.owner
    scale: float | None = None
    scaled: Operation | None = None
    if isinstance(scores, tv.MulOp):
        constant = scores.rhs.owner
        if not isinstance(constant, arith.ConstantOp) or not isinstance(
            constant.value, FloatAttr
        ):
            return None
        scale = float(cast(FloatAttr, constant.value).value.data)
        scaled = scores
        scores = scores.lhs.owner
    first = scores
    if not isinstance(first, tv.MatmulOp) or first.transpose_a:
        return None
    reshape, keys = first.lhs.owner, first.rhs.owner
    transpose: Operation | None = None
    if first.transpose_b is None:  # `k[idx].mT` not yet folded (canonicalize)
        if not isinstance(keys, tv.TransposeOp) or tuple(
            keys.permutation.get_values()
        ) != (0, 2, 1):
            return None
        transpose, keys = keys, keys.input.owner
    if not isinstance(reshape, tv.ReshapeOp) or not isinstance(keys, tv.GatherOp):
        return None
    if keys.indices is not values.indices or len(_tensor(keys.source).get_shape()) != 2:
        return None
    if _tensor(keys.source).get_shape() != _tensor(values.source).get_shape():
        return None
    ops: list[Operation] = [reshape, keys]
    ops += [first] if transpose is None else [transpose, first]
    if scaled is not None:
        ops.append(scaled)
    ops += [softmax, values, product]
    if root is not product:
        ops.append(root)
    if any(len(list(inner.results[0].uses)) != 1 for inner in ops[:-1]):
        return None
    return TopkChain(reshape, keys, first, scaled, softmax, values, scale, tuple(ops))


def _refusal(chain: TopkChain, target: Target, run: int) -> str | None:
    """Why the fused nest does not take `chain` (None: it does)."""
    types = {_tensor(v).element_type for v in (chain.reshape.input, chain.keys.source)}
    types.add(_tensor(chain.values.source).element_type)
    if len(types) != 1 or next(iter(types)) not in ELEMENT_TYPES:
        return (
            f"q, k and v must share one of f16/bf16/f32, got {sorted(map(str, types))}"
        )
    if _tensor(chain.keys.indices).element_type != i32:
        return "the indices must be i32 (read from UB on the scalar unit)"
    _, top, depth = chain.shape
    ub = cast(int, target.memories["ub"].size)
    # Fewer indices than a run: row by row (TopkNest.groups), one row's tiles.
    needs = _ub_bytes(top, depth, run if top >= run else 1, target)
    if needs > ub:
        return (
            f"k = {top} scores and d = {depth} columns need {needs} bytes of ub "
            f"(the gathered rows double-buffered), target '{target.name}' holds {ub}"
        )
    return None


def _ub_bytes(top: int, depth: int, run: int, target: Target) -> int:
    """UB bytes live at once for one query: q in f32, the index row and the
    scores, three steps of the softmax, a run of gathered rows (loaded,
    double-buffered, then in f32 and their products), its `run x 1` column
    and the accumulator."""
    unit = column_unit([f32], target.memories["ub"].alignment)
    k_cols, d_cols = _round_up(top, unit), _round_up(depth, unit)
    alignment = target.memories["ub"].alignment
    rows = BUFFERING * 2 * run * d_cols + 2 * 4 * run * d_cols + alignment * run
    return 4 * d_cols * 2 + 4 * k_cols * 5 + rows


def _round_up(value: int, unit: int) -> int:
    return -(-value // unit) * unit


class TopkAttentionPlan:
    """The top-k attention chains of one function's tv ops that the fused
    nest, or its dense fallback (passes/topk_dense.py), lowers, each at its
    root; the chains' other ops are `covered`."""

    def __init__(
        self,
        ops: Sequence[Operation],
        target: Target,
        options: TopkOptions,
        function: func.FuncOp,
    ):
        self.target = target
        self.run = options.topk_gather_run
        self.mode = options.topk_dense_fallback
        self.mask_pipeline = options.topk_mask_pipeline
        self.mask_overlap = options.topk_mask_overlap
        self.function = function
        self.chains: dict[Operation, TopkChain] = {}
        self.dense: dict[Operation, DenseEstimate] = {}
        """The chains lowered by the dense fallback, with its estimate."""
        self.dense_remarks: dict[Operation, str] = {}
        """Why a chain the fused nest takes has no dense fallback."""
        self.covered: set[Operation] = set()
        for op in ops:
            chain = topk_chain(op)
            if chain is None:
                continue
            fuse = options.fuse_topk_attention
            reason = "fuse-topk-attention=false" if not fuse else None
            reason = reason or _refusal(chain, target, self.run)
            mode = options.topk_dense_fallback
            dense, why = None, "topk-dense-fallback=never"
            if fuse and mode != "never":
                dense, why = self._dense(chain, options.attention_cube_sum)
            if dense is not None and self._takes(dense, mode, reason, chain):
                self.dense[op] = dense
            elif reason is not None:
                no_dense = ""
                if fuse and dense is not None:
                    no_dense = f"; no dense fallback: estimated {dense.text()}"
                elif fuse:
                    no_dense = f"; no dense fallback: {why}"
                emit_remark(
                    op,
                    "tv-sparse-to-tile: top-k attention not fused: "
                    f"{reason}; the gathers go to GM temporaries (unfused){no_dense}",
                )
                continue
            else:
                self.dense_remarks[op] = why or self._costs(chain, dense)
            self.chains[op] = chain
            self.covered.update(chain.ops[:-1])

    def _dense(
        self, chain: TopkChain, cube_sum: bool
    ) -> tuple[DenseEstimate | None, str | None]:
        """The dense fallback's estimate, or why there is none."""
        s, top, depth = chain.shape
        keys = _tensor(chain.keys.source).get_shape()[0]
        element_type = _tensor(chain.keys.source).element_type
        types = {
            _tensor(v).element_type
            for v in (chain.reshape.input, chain.keys.source, chain.values.source)
        }
        if len(types) != 1:
            return None, "q, k and v differ in type"
        why = dense_refusal(
            element_type,
            _tensor(chain.keys.indices).element_type,
            keys,
            len(_tensor(chain.root.results[0]).get_shape()),
            mask_unit(element_type, self.target),
        )
        if why is not None:
            return None, why
        found = dense_estimate(
            self.target,
            (s, top, keys, depth),
            element_type,
            cube_sum,
            self.mask_pipeline,
            self.mask_overlap,
        )
        if found is None:
            return None, (
                "its tiles do not fit (the mask nest's rows or the flash nest's "
                f"blocks) on target '{self.target.name}'"
            )
        return found, None

    def _takes(
        self, dense: DenseEstimate, mode: str, refused: str | None, chain: TopkChain
    ) -> bool:
        """Whether the dense fallback lowers `chain`: always, or when
        estimated cheaper than the fused nest (or that is `refused`)."""
        if mode == "always":
            return True
        if dense.total is None:
            return False
        return refused is not None or dense.total < self._estimate(chain)

    def _costs(self, chain: TopkChain, dense: DenseEstimate | None) -> str:
        """Both estimates, for the remarks."""
        assert dense is not None
        return (
            f"estimated {dense.text()}; the gather nest {self._estimate(chain)} "
            "(one L2-hit DMA per gathered row)"
        )

    def handles(self, op: Operation) -> bool:
        return op in self.covered or op in self.chains

    def emit(
        self,
        op: Operation,
        out: SSAValue,
        builder: LocatedBuilder,
        sparse: dict[SSAValue, SparseBuffers],
        dense: dict[SSAValue, SSAValue],
    ) -> bool:
        """Emit the nest of a root `op` (False: not a root of this plan)."""
        del sparse
        chain = self.chains.get(op)
        if chain is None:
            return False
        s, top, depth = chain.shape
        shape = f"(S={s}, k={top}, d={depth})"
        q, k, v = (
            dense[chain.reshape.input],
            dense[chain.keys.source],
            dense[chain.values.source],
        )
        idx = dense[chain.keys.indices]
        element_type = _tensor(chain.keys.source).element_type
        estimate = self.dense.get(op)
        if estimate is not None:
            keys = _tensor(chain.keys.source).get_shape()[0]
            scale = None if chain.scaled is None else chain.scaled.operands[1]
            gather = chain.keys.location
            where = [gather, chain.scores.location]
            where += [(chain.scaled or chain.scores).location]
            where += [chain.softmax.location, chain.root.location]
            forced = " (topk-dense-fallback=always)" if self.mode == "always" else ""
            emit_dense(
                builder,
                self.function,
                self.target,
                DenseAttention(q, k, v, idx, out, scale, where),
                (s, top, keys, depth),
                element_type,
                estimate.rows,
                self.mask_pipeline,
                estimate.in_flash,
            )
            emit_remark(
                op,
                f"tv-sparse-to-tile: top-k attention {shape} by its dense "
                f"fallback: an {s}x{keys} additive mask (ln of each key's count in "
                "the query's index row: 0 named once, -inf not named) built on the "
                "scalar unit into a GM temporary, then softmax(q @ k.T"
                f"{'' if scale is None else ' * s'} + mask) @ v outlined for "
                "tv-to-tile (its flash-attention nest where the blocks fit)"
                f"{forced}; {self._costs(chain, estimate)}",
            )
            return True
        unit = column_unit(
            [element_type, f32, i32], self.target.memories["ub"].alignment
        )
        nest = TopkAttentionNest(builder, 1, unit)
        nest.attention(q, k, v, idx, out, chain, self.run)
        cycles = self._estimate(chain)
        scale_text = "" if chain.scale is None else f", the scale {chain.scale:g}"
        emit_remark(
            op,
            f"tv-sparse-to-tile: fused top-k attention {shape} "
            f"as one nest per query row over the cores: the index row in ub, the "
            f"k key rows and value rows gathered GM -> ub, {self._runs()}; the scores on the vector unit "
            "(f32 multiply and row sum; the cube would need the k gathered rows "
            f"as one tile, which no tile op builds){scale_text} and the softmax in ub; "
            "one store per output row, no GM temporary; estimated "
            f"{cycles} cycles of MTE2 a core (one L2-hit DMA per row)",
        )
        emit_remark(
            op,
            f"tv-sparse-to-tile: top-k attention {shape}: no dense fallback: "
            f"{self.dense_remarks[op]}",
        )
        return True

    def _runs(self) -> str:
        if self.run == 1:
            return (
                "each row its own DMA (topk-gather-run=1: tile-pipeline prefetches "
                "single rows, not the loads of a run, which sit in loops of 0/1 "
                "trips)"
            )
        return (
            f"{self.run} consecutive indices as one DMA (else row by row; "
            "not prefetched)"
        )

    def _estimate(self, chain: TopkChain) -> int:
        """MTE2 cycles of the busiest core if every gathered row were its own
        DMA hitting L2 (runs merge some): the gathers bound the nest
        (docs/sparse.md)."""
        s, top, depth = chain.shape
        row = depth * element_bytes(_tensor(chain.keys.source).element_type)
        return (
            -(-s // self.target.cores)
            * 2
            * top
            * cost.l2_hit_dma_cycles(self.target, ("gm", "ub"), 1, row)
        )


class TopkOptions(Protocol):
    """The tv-sparse-to-tile options the plan reads (passes/tv_sparse_to_tile.py)."""

    fuse_topk_attention: bool
    topk_gather_run: int
    topk_dense_fallback: str
    topk_mask_pipeline: bool
    topk_mask_overlap: bool
    attention_cube_sum: bool


class LoweringPlan(Protocol):
    """What tv-sparse-to-tile asks of a plan of fused chains."""

    covered: set[Operation]

    def handles(self, op: Operation) -> bool: ...

    def emit(
        self,
        op: Operation,
        out: SSAValue,
        builder: LocatedBuilder,
        sparse: dict[SSAValue, SparseBuffers],
        dense: dict[SSAValue, SSAValue],
    ) -> bool: ...


class Plans:
    """Several plans of disjoint chains, asked in turn."""

    def __init__(self, *plans: LoweringPlan):
        self.plans = plans
        self.covered: set[Operation] = set().union(*(p.covered for p in plans))

    def handles(self, op: Operation) -> bool:
        return any(p.handles(op) for p in self.plans)

    def emit(
        self,
        op: Operation,
        out: SSAValue,
        builder: LocatedBuilder,
        sparse: dict[SSAValue, SparseBuffers],
        dense: dict[SSAValue, SSAValue],
    ) -> bool:
        return any(p.emit(op, out, builder, sparse, dense) for p in self.plans)


GroupBody = Callable[[InsertPoint, Valid, SSAValue, list[SSAValue]], list[SSAValue]]
"""(where, first position in the index row, first row, carried) -> carried."""


class TopkAttentionNest(SparseNest):
    """Builds the fused top-k attention nest (the module's doc)."""

    def attention(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        idx: SSAValue,
        out: SSAValue,
        chain: TopkChain,
        run: int,
    ) -> None:
        s, top, depth = chain.shape
        element_type = _tensor(chain.keys.source).element_type
        d_cols, k_cols = _round_up(depth, self.unit), _round_up(top, self.unit)

        def rows_type(rows: int) -> TileType:
            return TileType(
                [rows, d_cols], element_type, MemorySpace.UB, valid=[rows, depth]
            )

        index_type = TileType([1, k_cols], i32, MemorySpace.UB, valid=[1, top])
        score_type = TileType([1, k_cols], f32, MemorySpace.UB, valid=[1, top])
        accumulator_type = TileType([1, d_cols], f32, MemorySpace.UB, valid=[1, depth])
        out_rank = len(cast(MemRefType[Attribute], out.type).get_shape())
        located = self.builder.located

        def query(at: InsertPoint, i: Valid, _: list[SSAValue]) -> list[SSAValue]:
            with located(chain.reshape.location):
                row = self.to_f32(at, self.load(at, q, [i, 0], rows_type(1)))
            with located(chain.keys.location):
                indices = self.load(at, idx, [i, 0], index_type)

            def gathered(at: InsertPoint, first: SSAValue, rows: int) -> SSAValue:
                return self.to_f32(at, self.load(at, k, [first, 0], rows_type(rows)))

            def score_rows(rows: int) -> GroupBody:
                def body(
                    at: InsertPoint, j: Valid, first: SSAValue, acc: list[SSAValue]
                ) -> list[SSAValue]:
                    with located(chain.keys.location):
                        keys = gathered(at, first, rows)
                    with located(chain.scores.location):
                        dots = self.value(
                            at,
                            tile.ReduceSumOp(self.value(at, tile.MulOp(keys, row)), 1),
                        )
                        scores = acc[0]
                        for t in range(rows):
                            dot = self.extract(at, dots, [t, 0])
                            scores = self.insert_element(
                                at, dot, scores, [0, self.add(at, j, t)]
                            )
                    return [scores]

                return body

            (scores,) = self.groups(
                at,
                indices,
                top,
                run,
                [self.zeros(at, score_type, [])],
                score_rows(run),
                score_rows(1),
            )
            with located(chain.scores.location):
                rounded = self.cast_to(at, scores, element_type)
            if chain.scaled is not None and chain.scale is not None:
                # bf16 scales in f32 (the vector unit has no bf16), rounded back
                # as tv.mul rounds.
                compute = compute_type(element_type)
                with located(chain.scaled.location):
                    product = self.value(
                        at,
                        tile.MulOp(
                            self.cast_to(at, rounded, compute),
                            self.constant(chain.scale, compute),
                        ),
                    )
                    rounded = self.cast_to(at, product, element_type)
            with located(chain.softmax.location):
                probabilities = self.softmax(at, self.to_f32(at, rounded), element_type)

            def value_rows(rows: int) -> GroupBody:
                def body(
                    at: InsertPoint, j: Valid, first: SSAValue, acc: list[SSAValue]
                ) -> list[SSAValue]:
                    with located(chain.values.location):
                        values = self.to_f32(
                            at, self.load(at, v, [first, 0], rows_type(rows))
                        )
                    if rows == 1:
                        weight = self.extract(at, probabilities, [0, j])
                        part = self.value(at, tile.MulOp(values, weight))
                    else:
                        column = self.zeros(
                            at, TileType([rows, 1], f32, MemorySpace.UB), []
                        )
                        for t in range(rows):
                            weight = self.extract(
                                at, probabilities, [0, self.add(at, j, t)]
                            )
                            column = self.insert_element(at, weight, column, [t, 0])
                        product = self.value(at, tile.MulOp(values, column))
                        part = self.value(at, tile.ReduceSumOp(product, 0))
                    return [self.value(at, tile.AddOp(acc[0], part))]

                return body

            (total,) = self.groups(
                at,
                indices,
                top,
                run,
                [self.zeros(at, accumulator_type, [])],
                value_rows(run),
                value_rows(1),
            )
            result = self.cast_to(at, total, element_type)
            self.store(at, result, out, [i, 0] if out_rank == 2 else [i, 0, 0])
            return []

        self.loop(self.top, 0, s, 1, [], query)

    def insert_element(
        self, at: InsertPoint, value: SSAValue, dest: SSAValue, position: list[Valid]
    ) -> SSAValue:
        """`dest` with one element written by the scalar unit."""
        return self.value(
            at, tile.InsertOp(value, dest, [self.index_value(p) for p in position])
        )

    def extract(
        self, at: InsertPoint, source: SSAValue, position: list[Valid]
    ) -> SSAValue:
        """One element of a ub tile read by the scalar unit."""
        return self.value(
            at, tile.ExtractOp(source, [self.index_value(p) for p in position])
        )

    def softmax(
        self, at: InsertPoint, scores: SSAValue, element_type: Attribute
    ) -> SSAValue:
        """`exp(x - max) / sum` of a `1 x k` f32 row, rounded to
        `element_type` as the reference's result, back in f32."""
        peak = self.value(at, tile.ReduceMaxOp(scores, 1))
        shifted = self.value(at, tile.ExpOp(self.value(at, tile.SubOp(scores, peak))))
        total = self.value(at, tile.ReduceSumOp(shifted, 1))
        quotient = self.value(at, tile.DivOp(shifted, total))
        return self.to_f32(at, self.cast_to(at, quotient, element_type))

    def groups(
        self,
        at: InsertPoint,
        indices: SSAValue,
        top: int,
        run: int,
        inits: list[SSAValue],
        whole: GroupBody,
        single: GroupBody,
    ) -> list[SSAValue]:
        """Over the `top` indices of a ub index row: groups of `run` checked
        on the scalar unit (`idx[j + t] == idx[j] + t`, `SparseNest.runs`), a
        run given to `whole`, else each index of the group to `single`; the
        last `top mod run` one by one. Carries `inits` through."""

        def read(at: InsertPoint, j: Valid) -> SSAValue:
            return self.extract(at, indices, [0, j])

        return self.runs(at, 0, top, run, read, inits, whole, single)
