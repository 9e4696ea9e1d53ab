"""Block-sparse attention and the scale of sparse values in `tv-sparse-to-tile`.

Two forms of a function on sparse tensors are lowered here rather than op by op
(passes/tv_sparse_to_tile.py asks `SparseAttentionPlan`):

- **The scale** `a * s` / `a / s` of a sparse tensor, which the frontend spells
  `tv.disassemble`, `tv.mul` (or `tv.div`) of the values by a scalar and
  `tv.assemble` of the same offsets and indices (`ScaleForm`): one nest over the
  stored blocks, each multiplied (divided) in UB and stored to the values of a
  result on the operand's pattern.
- **Block-sparse attention** `spmm(sparse_softmax(sddmm(mask, q, k, transpose_b)
  [scaled]), v)` with a block-CSR mask whose intermediates nothing else reads
  (`AttentionChain`): one flash-attention nest per block row over its stored
  blocks only (`SparseAttentionNest.attention`), so the scores and the
  probabilities never go to GM:

      for each block row (split over the cores: by stored blocks with
                          `attention-balance`, else by count):
          Q rows -> L1 (and the block of ones -> L0B)
          start, end = offsets[br], offsets[br + 1]         (scalar unit)
          if start < end:
              Q -> L0A; m = lowest, l = 0, acc = 0; s = scores(start)
              for j in start .. end - 2 (run-time bounds), then j = end - 1:
                  K block of indices[j + 1], V block of indices[j] -> L1
                  s = s * scale; m' = max(m, rowmax(s)); c = exp(m - m')
                  p = exp(s - m'); s' = scores(j + 1) (cube, carried)
                  l, acc += the previous block's sums and product, times its c
                  sums = p @ ones, o = p(f16) @ V (cube)
              the last block's update; out rows = acc * (1 / l)
          else: zeros (the reference's spmm of an empty row)

  where scores(j) = Q @ K(j)^T on the cube, moved to UB in f32. The
  online-softmax steps are passes/attention_nests.py's (`running_max`,
  `probabilities_l0`, `product_ub`, `rescale`, `ones_l0b`). The online
  softmax reorders the sums of the softmax's denominator and of the product,
  and the scores are kept and scaled in f32 (the reference rounds them to f16
  twice), so the result is within the reference's error bound, not bit-exact.

  With more block rows than cores, `attention-balance` splits them over the
  cores by their stored blocks at run time (passes/balanced_split.py, as the
  CSR spmm nest: each core searches the offsets, loaded into UB, for its
  block rows; whole block rows, so no output row is shared).

  The decisions (`NestChoice`), each taken when its tiles fit and each
  switchable: the row sums on the cube (`attention-cube-sum`), reduced to
  one column a block before they are added (`attention-sum-column`), each block's
  update of the sums and the accumulator after the next block's softmax so
  that the vector unit (in order) does not wait for the cube's product
  (`attention-defer-update`), the scores in f32 (`attention-scale-fold`; off:
  in their type, scaled as the reference rounds). The key loop carries the
  statistics, so `tile-pipeline` leaves it alone (docs/sparse.md); the nest
  pipelines itself: the next block's K is loaded and its scores computed on
  the cube while the vector unit works on this block.

A chain that has the shape but cannot be fused (an intermediate read
elsewhere, a CSR mask, values the cube does not take, blocks that do not fit)
keeps its nests (the scale as above) and gets a remark saying why;
`fuse-attention=false` (`pypto-lower{sparse-fuse-attention=false}`) switches
the fusion off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import FloatAttr, MemRefType, f32, i32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.diagnostics import emit_remark
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType, element_bytes, fractal_edge
from pypto_mlir.targets import Target

from .attention_model import ONES
from .attention_steps import (
    F32_MAX,
    ones_l0b,
    probabilities_l0,
    product_ub,
    rescale,
    running_max,
    to_l0,
)
from .balanced_split import (
    EntryShare,
    EntryWork,
    LoopBody,
    Reader,
    core_loop,
    core_rows,
    entry_share,
    offsets_in_ub,
    smaller,
)
from .located_builder import LocatedBuilder
from .nest_builder import Valid, compute_type
from .sparse_nests import SparseBuffers, SparseNest
from .tiling_model import column_unit

CUBE_TYPES = ("f16", "bf16")
"""Element types of the fused nest (both matmuls on the cube)."""

SHARE_ROW_COST = 4
"""A block row's fixed work in stored blocks for `attention-block-split`
(measured: on ascend910b at S=4096 a core's phase took about two blocks'
time more per block row, the first scores and the last update not
overlapped, Q loaded, the output or the partials stored)."""

SUM_COLUMN_CYCLES = (33, 456, 150)
"""For the remark of `attention-sum-column` (ascend910b, 64-row blocks): a
block's sums reduced to one column with tile-to-hw's block-reduce (a `vmax`
and a `vblock_reduce_max`), without it (a `vreduce_max` repeat per row), and
the running sums' rescale saved (a broadcast `vmul` repeat per row of ONES
lanes and a `vadd`, against one repeat each)."""

ROW_COST = 1
"""A block row's fixed work in stored blocks, for the core split: its Q
load, offsets reads, first scores, final division and store against a
block's K and V loads, two matmuls and softmax."""


# --------------------------------------------------------------------------------------
# Recognition
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScaleForm:
    """`assemble(o, i, values * s)` (or `/ s`) of `disassemble(x) = (o, i,
    values)`, s a scalar: x scaled, on x's pattern."""

    disassemble: tv.DisassembleOp
    op: tv.MulOp | tv.DivOp
    assemble: tv.AssembleOp

    @property
    def input(self) -> SSAValue:
        return self.disassemble.input

    @property
    def scalar(self) -> SSAValue:
        return self.op.rhs

    @property
    def ops(self) -> tuple[Operation, ...]:
        return (self.disassemble, self.op, self.assemble)


def _only_use(value: SSAValue, user: Operation) -> bool:
    uses = list(value.uses)
    return len(uses) == 1 and uses[0].operation is user


def scale_form(op: Operation) -> ScaleForm | None:
    """`op` as the assemble of a scaled sparse tensor, if it is one."""
    if not isinstance(op, tv.AssembleOp):
        return None
    scaled = op.values.owner
    if not isinstance(scaled, tv.MulOp | tv.DivOp):
        return None
    parts = scaled.lhs.owner
    if not isinstance(parts, tv.DisassembleOp) or isinstance(
        scaled.rhs.type, tv.TensorViewType
    ):
        return None
    if op.offsets is not parts.offsets or op.indices is not parts.indices:
        return None
    if not (
        _only_use(parts.offsets, op)
        and _only_use(parts.indices, op)
        and _only_use(parts.values, scaled)
        and _only_use(scaled.result, op)
    ):
        return None
    return ScaleForm(parts, scaled, op)


@dataclass(frozen=True)
class AttentionChain:
    """`spmm(sparse_softmax(sddmm(...) [scaled]), v)`."""

    sddmm: tv.SddmmOp
    scale: ScaleForm | None
    softmax: tv.SparseSoftmaxOp
    spmm: tv.SpmmOp

    @property
    def covered(self) -> tuple[Operation, ...]:
        """The ops lowered with the spmm (the chain's last op)."""
        scale = () if self.scale is None else self.scale.ops
        return (self.sddmm, *scale, self.softmax)

    @property
    def names(self) -> str:
        scale = [] if self.scale is None else [self.scale.op.name]
        return ", ".join([self.sddmm.name, *scale, self.softmax.name, self.spmm.name])


def attention_chain(op: Operation) -> AttentionChain | None:
    """The chain ending at `op`, a `tv.spmm`, if it has the shape (whether it
    can be fused is `_refusal`'s)."""
    if not isinstance(op, tv.SpmmOp):
        return None
    softmax = op.lhs.owner
    if not isinstance(softmax, tv.SparseSoftmaxOp):
        return None
    scores = softmax.input.owner
    scale = None
    if isinstance(scores, tv.AssembleOp):
        scale = scale_form(scores)
        if scale is None:
            return None
        scores = scale.input.owner
    if not isinstance(scores, tv.SddmmOp):
        return None
    return AttentionChain(scores, scale, softmax, op)


def _tensor(value: SSAValue) -> tv.TensorViewType:
    return cast(tv.TensorViewType, value.type)


@dataclass(frozen=True)
class NestChoice:
    """The decisions of a fused nest: the row sums on the cube (`cube_sum`),
    each block's update after the next block's softmax (`defer`), the scores
    kept in f32 and a constant scale applied in f32 (`f32_scores`: no f16
    rounding of the scores and no cast, within the reference's error bound,
    which carries those roundings)."""

    cube_sum: bool
    defer: bool
    f32_scores: bool = False
    sum_column: bool = False
    """With `cube_sum`: each block's row sums (ONES equal columns) reduced
    to one column before they are added to the running ones, so the running
    sums and their rescale are one column instead of ONES."""


def _refusal(
    chain: AttentionChain, target: Target, wanted: NestChoice
) -> tuple[str | None, NestChoice]:
    """Why `chain` is not fused (None: it is), and the decisions taken: those
    `wanted` whose tiles fit, the row sums on the cube first."""
    none = NestChoice(False, False)
    sddmm, softmax, spmm = chain.sddmm, chain.softmax, chain.spmm
    scores = chain.scale.assemble.result if chain.scale else sddmm.result
    for value, user in (
        (sddmm.result, chain.scale.disassemble if chain.scale else softmax),
        (scores, softmax),
        (softmax.result, spmm),
    ):
        if not _only_use(value, user):
            return (
                "the scores or the probabilities are also read elsewhere or "
                "returned (the fused nest keeps them on chip)"
            ), none
    encoding = _tensor(sddmm.mask).sparse_encoding
    assert encoding is not None
    bm, bn = (int(b) for b in encoding.block_shape)
    if (bm, bn) == (1, 1):
        return (
            "the mask is CSR (the fused nest takes block-CSR blocks on the cube)",
            none,
        )
    if sddmm.transpose_b is None:
        return "the sddmm has no transpose_b (the keys as rows)", none
    types = {
        str(_tensor(v).element_type)
        for v in (sddmm.lhs, sddmm.rhs, spmm.rhs, softmax.result, spmm.result)
    }
    if len(types) != 1 or not types <= set(CUBE_TYPES):
        return (
            f"the values are {', '.join(sorted(types))}: the fused nest takes "
            "f16 or bf16 operands (both matmuls on the cube)"
        ), none
    element_type = _tensor(sddmm.lhs).element_type
    edge = fractal_edge(element_type, target)
    d = _tensor(sddmm.lhs).get_shape()[1]
    dv = _tensor(spmm.rhs).get_shape()[1]
    if bm % edge or bn % edge:
        return f"{bm}x{bn} blocks are not whole {edge}x{edge} fractals", none
    if d % edge or dv % edge:
        return (
            f"head dims {d}, {dv} are not multiples of the {edge}-element fractal",
            none,
        )
    size = element_bytes(element_type)
    reason = None
    wide = wanted.f32_scores and (
        chain.scale is None or _constant(chain.scale.scalar) is not None
    )
    for cube_sum in (True, False) if wanted.cube_sum else (False,):
        for defer in (True, False) if wanted.defer else (False,):
            for f32_scores in (True, False) if wide else (False,):
                column = cube_sum and wanted.sum_column
                choice = NestChoice(cube_sum, defer, f32_scores, column)
                reason = _fits(target, (bm, bn, d, dv), size, choice)
                if reason is None:
                    return None, choice
    return reason, none


def _constant(value: SSAValue) -> float | None:
    """The value of a float `arith.constant` (None otherwise)."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return owner.value.value.data
    return None


def _computed_scalar(
    nest: SparseNest, at: InsertPoint, scalar: SSAValue, element_type: Attribute
) -> SSAValue:
    """`scalar` (of `element_type`) in the type the vector unit computes that
    type in: a bf16 scale in f32 (a constant as such, else through a
    one-element tile cast, exact), as the vector nests take it."""
    compute = compute_type(element_type)
    if compute == element_type:
        return scalar
    if (value := _constant(scalar)) is not None:
        return nest.constant(value, compute)
    ones = TileType([1, 1], element_type, MemorySpace.UB)
    filled = nest.value(at, tile.FillOp(scalar, ones))
    return nest.value(at, tile.CastOp(filled, compute))


def _fits(
    target: Target, dims: tuple[int, int, int, int], size: int, choice: NestChoice
) -> str | None:
    """Why one block's tiles (`dims`: bm, bn, d, dv) do not fit (None: they
    do): L1 the Q rows, two K and V blocks and the probabilities; L0A Q and P;
    L0B K and V; L0C the scores and the product in f32; UB what is live at
    once with the in-place reuse of memory planning: the scores in their type
    (then P; the next block's take their carried buffer), one f32 block (the
    scores, shifted, their exponent), the product and the accumulator in f32 (rescaled in place) and
    the row statistics; with `cube_sum` also the block of ones (UB, L1, L0B)
    and the sums of a block and the running ones, ONES wide (L0C, UB); with
    `defer` the previous block's product, sums and correction."""
    bm, bn, d, dv = dims
    scores = 4 if choice.f32_scores else size
    ones = bn * ONES * size if choice.cube_sum else 0
    sums = bm * ONES * 4 if choice.cube_sum else 0
    pending = bm * dv * 4 + max(sums, bm * 4) + bm * 4 if choice.defer else 0
    needs = {
        "l1": bm * d * size + 2 * bn * (d + dv) * size + bm * bn * size + ones,
        "l0a": bm * (d + bn) * size,
        "l0b": bn * (d + dv) * size + ones,
        "l0c": bm * (bn + dv) * 4 + sums,
        "ub": bm * bn * (scores + 4)
        + bm * dv * 2 * 4
        + 8 * bm * 4
        + ones
        + 2 * sums
        + pending,
    }
    for memory, count in needs.items():
        held = cast(int, target.memories[memory].size)
        if count > held:
            return (
                f"{bm}x{bn} blocks with head dims {d}, {dv} do not fit: {memory} "
                f"of target '{target.name}' holds {held} bytes, a block needs {count}"
            )
    return None


class SparseAttentionPlan:
    """The chains and scales of one function's tv ops that this module
    lowers, each at its last op (the root); the other ops of each are
    `covered` (lowered with their root). Remarks say which chains are fused
    and why the others are not."""

    def __init__(
        self,
        ops: Sequence[Operation],
        target: Target,
        fuse: bool,
        wanted: NestChoice = NestChoice(True, True),
        balance: bool = True,
        block_split: bool = True,
    ):
        self.target = target
        self.wanted = wanted
        self.balance = balance
        self.block_split = block_split
        self.chains: dict[Operation, AttentionChain] = {}
        self.choices: dict[Operation, NestChoice] = {}
        """Per fused chain, the decisions of its nest."""
        self.scales: dict[Operation, ScaleForm] = {}
        self.covered: set[Operation] = set()
        for op in ops:
            chain = attention_chain(op) if fuse else None
            if chain is not None:
                reason, choice = _refusal(chain, target, wanted)
                if reason is None:
                    self.chains[op] = chain
                    self.choices[op] = choice
                    self.covered.update(chain.covered)
                else:
                    emit_remark(
                        op,
                        f"tv-sparse-to-tile: block-sparse attention not fused: {reason}",
                    )
        for op in ops:
            form = scale_form(op)
            if form is not None and op not in self.covered:
                self.scales[op] = form
                self.covered.update(form.ops[:-1])

    def _unit(self, element_type: Attribute) -> int:
        """The alignment unit of UB tiles of `element_type` (and f32)."""
        return column_unit([element_type, f32], self.target.memories["ub"].alignment)

    def handles(self, op: Operation) -> bool:
        return op in self.covered or op in self.chains or op in self.scales

    def emit(
        self,
        op: Operation,
        out: SSAValue,
        builder: LocatedBuilder,
        sparse: dict[SSAValue, SparseBuffers],
        dense: dict[SSAValue, SSAValue],
    ) -> bool:
        """Emit the nest of a root `op` (False: not a root of this plan)."""
        if op in self.scales:
            form = self.scales[op]
            a = sparse[form.input]
            SparseAttentionNest(builder, 1, self._unit(a.element_type)).scale_values(
                a, form, out
            )
            verb = "multiplied" if isinstance(form.op, tv.MulOp) else "divided"
            emit_remark(
                op,
                f"tv-sparse-to-tile: the scale of a sparse tensor ({form.op.name} of "
                f"its values by a scalar) by {a.block[0]}x{a.block[1]} stored "
                f"blocks, each {verb} in UB",
            )
            return True
        chain = self.chains.get(op)
        if chain is None:
            return False
        mask = sparse[chain.sddmm.mask]
        q, k, v = (dense[x] for x in (chain.sddmm.lhs, chain.sddmm.rhs, chain.spmm.rhs))
        nest = SparseAttentionNest(builder, 1, self._unit(mask.element_type))
        choice = self.choices[op]
        cores, mode, split = self._split(mask)
        nest.attention(mask, q, k, v, out, chain.scale, choice, cores, mode)
        bm, bn = mask.block
        if choice.cube_sum:
            sums = "row sums on the cube (p @ ones)"
        elif self.wanted.cube_sum:
            sums = "row sums on the vector unit (the cube's block of ones does not fit)"
        else:
            sums = "row sums on the vector unit"
        if choice.f32_scores:
            sums += "; the scores kept in f32" + (
                ", scaled in f32" if chain.scale is not None else ""
            )
        if choice.defer:
            sums += (
                "; each block's update of the sums and the accumulator after the "
                "next block's softmax"
            )
        elif self.wanted.defer:
            sums += "; each block's update right after it (deferred ones do not fit)"
        emit_remark(
            op,
            f"tv-sparse-to-tile: fused block-sparse attention ({chain.names}) as one "
            f"nest per block row of {bm}: per stored {bm}x{bn} block, K^T and V to "
            f"the cube, online softmax in UB, {sums}; the scores and the "
            "probabilities stay on chip (no GM temporary); empty block rows store "
            f"zeros; {split}{_sum_column_note(choice)}",
        )
        return True

    def _split(self, mask: SparseBuffers) -> tuple[int, str, str]:
        """The cores the block rows are split over (1: by count, tile-to-hw's
        split), how (`SparseAttentionNest.attention`'s `split`) and why."""
        cores = self.target.cores
        offsets = _element_type(mask.offsets)
        count = "block rows split over the cores by count"
        if not self.balance and not self.block_split:
            return (
                1,
                "count",
                f"{count} (attention-balance=false, attention-block-split=false)",
            )
        if cores < 2:
            return 1, "count", f"one core on target '{self.target.name}': no split"
        rows = mask.shape[0] // mask.block[0]
        ub = cast(int, self.target.memories["ub"].size)
        if offsets != i32 or (rows + 1) * 4 * 8 > ub:
            return 1, "count", f"{count} (the offsets are not i32 or do not fit in ub)"
        if rows <= cores:
            return (
                1,
                "count",
                (
                    f"{count} ({rows} block rows, {cores} cores: one block row a core "
                    "at most, shorter than dividing rows and combining them after a "
                    "sync_all)"
                ),
            )
        if self.block_split:
            return (
                cores,
                "blocks",
                (
                    f"the stored blocks split evenly over {cores} cores, a block row "
                    f"weighing {SHARE_ROW_COST} blocks more than its stored ones and "
                    "divided where a core's share ends (each core searches the "
                    "offsets, loaded into ub, for its share; a divided row's partial "
                    "max, sum and accumulator go to GM workspaces and are merged by "
                    "the core where it begins, after a sync_all)"
                ),
            )
        return (
            cores,
            "rows",
            (
                f"block rows split over {cores} cores by stored blocks (each core "
                f"searches the offsets, loaded into ub, for its first block row; a "
                f"block row weighs {ROW_COST} block more than its stored ones; "
                "attention-block-split=false: whole block rows)"
            ),
        )


def _sum_column_note(choice: NestChoice) -> str:
    """The remark's words on `attention-sum-column`, with its estimate (it
    loses with tile-to-hw's block-reduce off)."""
    if not choice.sum_column:
        return ""
    reduced, per_row, saved = SUM_COLUMN_CYCLES
    return (
        f"; each block's row sums reduced to one column before the rescale (~"
        f"{reduced} cycles with tile-to-hw's block-reduce, ~{per_row} without; "
        f"a one-column rescale saves ~{saved})"
    )


# --------------------------------------------------------------------------------------
# The nests
# --------------------------------------------------------------------------------------


def _element_type(buffer: SSAValue) -> Attribute:
    return cast(MemRefType[Attribute], buffer.type).get_element_type()


def _cols(buffer: SSAValue) -> int:
    return cast(MemRefType[Attribute], buffer.type).get_shape()[1]


class SparseAttentionNest(SparseNest):
    """The scale and the fused attention nests (see the module doc)."""

    def scale_values(self, a: SparseBuffers, form: ScaleForm, out: SSAValue) -> None:
        """Per stored block of `a`: loaded into UB, multiplied (divided) by the
        scalar as `tv.mul` (`tv.div`) does, stored to `out`'s block."""
        values, results = self.block_values(a), self.block_values_of(out, a)
        (bm, bn), element_type = a.block, a.element_type
        physical = 1 if bn == 1 else -(-bn // self.unit) * self.unit
        block_type = TileType(
            [bm, physical], element_type, MemorySpace.UB, valid=[bm, bn]
        )
        nnz = self.value(self.top, memref.DimOp(values, self.constant(0)))
        kind = tile.MulOp if isinstance(form.op, tv.MulOp) else tile.DivOp
        # bf16 in f32 (the vector unit has no bf16), rounded back as tv rounds.
        compute = compute_type(element_type)
        scalar = _computed_scalar(self, self.top, form.scalar, element_type)

        def block(at: InsertPoint, j: Valid, _: list[SSAValue]) -> list[SSAValue]:
            loaded = self.load(at, values, [j, 0, 0], block_type)
            scaled = self.value(at, kind(self.cast_to(at, loaded, compute), scalar))
            self.store(at, self.cast_to(at, scaled, element_type), results, [j, 0, 0])
            return []

        self.loop(self.top, 0, nnz, 1, [], block)

    def attention(
        self,
        mask: SparseBuffers,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        out: SSAValue,
        scale: ScaleForm | None,
        choice: NestChoice,
        cores: int = 1,
        split: str = "count",
    ) -> None:
        """`out = spmm(softmax(sddmm(mask, q, k^T) [scaled]), v)` by block rows
        (see the module doc), with the decisions of `choice`: the row sums of
        the probabilities as `p @ ones` on the cube (ONES equal columns), each
        block's update deferred (`_Blocks.step`). `split` (over `cores`): by
        count (tile-to-hw's), `"rows"` whole block rows by stored blocks,
        `"blocks"` the stored blocks evenly, rows divided and their partial
        statistics combined after a `sync_all` (`_combine`)."""
        cube_sum, defer = choice.cube_sum, choice.defer
        (bm, bn), element_type = mask.block, _element_type(q)
        d, dv = _cols(q), _cols(v)
        q_type = TileType([bm, d], element_type, MemorySpace.L1, layout="nz")
        zero_type = TileType([bm, dv], element_type, MemorySpace.UB)
        stat_type = TileType([bm, 1], f32, MemorySpace.UB)
        sum_columns = ONES if cube_sum and not choice.sum_column else 1
        sum_type = TileType([bm, sum_columns], f32, MemorySpace.UB)
        block_rows = mask.shape[0] // bm
        workspaces: list[SSAValue] = []
        if split == "blocks":
            # per core, two slots of bm rows: a row begun by an earlier core
            # (0), a row ended by a later one (1); row max, sum, accumulator
            workspaces = [
                self.value(
                    self.top,
                    memref.AllocOp([], [], MemRefType(f32, [2 * cores * bm, cols])),
                )
                for cols in (1, 1, dv)
            ]

        def gm_offset(at: InsertPoint, row: Valid) -> SSAValue:
            return self.read_index(at, mask.offsets, row)

        def write_out(
            at: InsertPoint, acc: SSAValue, total: SSAValue, row0: Valid
        ) -> None:
            """The output rows acc / l as acc * (1 / l): one division per row,
            then a multiply (the quotient rounded twice in f32, far below the
            f16 result's rounding)."""
            one = self.value(at, tile.FillOp(self.constant(1.0, f32), stat_type))
            inverse = self.value(at, tile.DivOp(one, total))
            result = self.value(at, tile.MulOp(acc, inverse))
            self.store(at, self.cast_to(at, result, element_type), out, [row0, 0])

        def rows_reading(offset: Reader, share: _Share | None = None) -> LoopBody:
            """The body of the block-row loop, reading the offsets by `offset`;
            with `share`, a core's share of the stored blocks only."""

            def block_row(
                at: InsertPoint, br: Valid, _: list[SSAValue]
            ) -> list[SSAValue]:
                # The Q rows (and the ones) before the offsets are read: the loads
                # overlap the scalar unit's GM reads (an empty block row loads
                # them for nothing).
                row0 = self.scaled(at, br, bm)
                q_l1 = self.load(at, q, [row0, 0], q_type)
                ones = ones_l0b(self, at, bn, bn, element_type) if cube_sum else None
                start, end = offset(at, br), offset(at, self.add(at, br, 1))
                begun = ended = None
                if share is not None:
                    begun = self.value(at, arith.CmpiOp(start, share.first, "slt"))
                    ended = self.value(at, arith.CmpiOp(share.end, end, "slt"))
                    start = self.value(at, arith.SelectOp(begun, share.first, start))
                    end = smaller(self, at, end, share.end)
                stored, empty = Block(), Block()
                here = InsertPoint.at_end(stored)
                q_l0 = to_l0(self, here, q_l1, MemorySpace.L0A, False)
                blocks = _Blocks(
                    self,
                    mask,
                    k,
                    v,
                    q_l0,
                    scale,
                    ones,
                    defer,
                    choice.f32_scores,
                    choice.sum_column,
                )
                # m = lowest finite (the first block's correction exp(m - m') is
                # 0), l = 0, acc = 0
                lowest = self.constant(-F32_MAX, f32)
                acc_type = TileType([bm, dv], f32, MemorySpace.UB)
                first = [
                    self.value(here, tile.FillOp(lowest, stat_type)),
                    self.zeros(here, sum_type, []),
                    self.zeros(here, acc_type, []),
                ]
                if defer:  # nothing to add before the first block
                    first += [
                        self.zeros(here, sum_type, []),
                        self.zeros(here, acc_type, []),
                        self.zeros(here, stat_type, []),
                    ]
                # The stored blocks but the last, each computing the next one's
                # scores; then the last.
                first.append(blocks.scores(here, blocks.keys(here, start)))
                last = self.value(here, arith.SubiOp(end, self.constant(1)))
                carried = self.loop(
                    here, start, last, 1, first, blocks.prefetching_step
                )
                maximum, total, acc, *pending = blocks.step(here, last, carried)
                if defer:
                    total, acc = blocks.settle(here, total, acc, pending)
                if sum_columns > 1:  # the ONES columns of the sums are equal
                    total = self.value(here, tile.ReduceMaxOp(total, 1))
                if share is None or begun is None or ended is None:
                    write_out(here, acc, total, row0)
                else:
                    # a row divided between cores: its statistics to the slot
                    # of this core, combined after the sync_all
                    partial = self.value(here, arith.OrIOp(begun, ended))
                    divided, whole = Block(), Block()
                    inner = InsertPoint.at_end(divided)
                    slot = self.value(
                        inner,
                        arith.SelectOp(
                            begun,
                            share.slot(self, inner, 0),
                            share.slot(self, inner, 1),
                        ),
                    )
                    for value, workspace in zip(
                        (maximum, total, acc), workspaces, strict=True
                    ):
                        self.store(inner, value, workspace, [slot, 0])
                    self.insert(inner, scf.YieldOp())
                    inner = InsertPoint.at_end(whole)
                    write_out(inner, acc, total, row0)
                    self.insert(inner, scf.YieldOp())
                    self.insert(here, scf.IfOp(partial, [], [divided], [whole]))
                self.insert(here, scf.YieldOp())
                here = InsertPoint.at_end(empty)
                self.store(here, self.zeros(here, zero_type, []), out, [row0, 0])
                self.insert(here, scf.YieldOp())
                nonempty = self.value(at, arith.CmpiOp(start, end, "slt"))
                self.insert(at, scf.IfOp(nonempty, [], [stored], [empty]))
                return []

            return block_row

        if cores <= 1:
            self.loop(self.top, 0, block_rows, 1, [], rows_reading(gm_offset))
            return
        nnz = self.value(self.top, memref.DimOp(mask.indices, self.constant(0)))

        def reader(at: InsertPoint) -> Reader:
            return offsets_in_ub(self, at, mask.offsets, block_rows)

        def work(at: InsertPoint) -> EntryWork:
            return EntryWork.of(self, at, nnz, block_rows, cores, SHARE_ROW_COST)

        if split == "rows":

            def core(at: InsertPoint, c: Valid, _: list[SSAValue]) -> list[SSAValue]:
                offset = reader(at)
                lo, hi = core_rows(
                    self, at, offset, c, cores, nnz, block_rows, ROW_COST
                )
                self.loop(at, lo, hi, 1, [], rows_reading(offset))
                return []

            core_loop(self, cores, core)
            return

        def blocks(at: InsertPoint, c: Valid, _: list[SSAValue]) -> list[SSAValue]:
            offset = reader(at)
            share = _Share(
                entry_share(self, at, offset, c, cores, block_rows, work(at)), c, bm
            )
            # the rows ending in the share, then the one straddling its end
            past = self.value(at, arith.AddiOp(share.hi, self.constant(1)))
            hi = self.value(at, arith.SelectOp(share.straddles, past, share.hi))
            self.loop(at, share.lo, hi, 1, [], rows_reading(offset, share))
            return []

        def combine(at: InsertPoint, c: Valid, _: list[SSAValue]) -> list[SSAValue]:
            offset = reader(at)
            share = _Share(
                entry_share(self, at, offset, c, cores, block_rows, work(at)), c, bm
            )
            # the core where a divided row begins completes it
            begins = self.value(
                at, arith.CmpiOp(share.first, offset(at, share.hi), "sle")
            )
            owns = self.value(at, arith.AndIOp(share.straddles, begins))
            body = Block()
            here = InsertPoint.at_end(body)
            self._combine(here, share, offset, work(here), workspaces, write_out)
            self.insert(here, scf.YieldOp())
            self.insert(at, scf.IfOp(owns, [], [body]))
            return []

        core_loop(self, cores, blocks)
        core_loop(self, cores, combine)
        for workspace in workspaces:
            self.insert(self.top, memref.DeallocOp.get(workspace))

    def _combine(
        self,
        at: InsertPoint,
        share: _Share,
        offset: Reader,
        work: EntryWork,
        workspaces: list[SSAValue],
        write_out: Callable[[InsertPoint, SSAValue, SSAValue, Valid], None],
    ) -> None:
        """Row `share.hi`, begun by this core and ended by the next ones: its
        partial statistics (this core's slot 1, then slot 0 of each later
        core whose share begins before the row's end) merged one by one
        (`merge_partials`), the output rows written once."""
        bm = share.bm
        dv = cast(MemRefType[Attribute], workspaces[2].type).get_shape()[1]
        row_end = offset(at, self.add(at, share.hi, 1))
        later = work.cores_before(self, at, work.position(self, at, row_end, share.hi))
        stat_type = TileType([bm, 1], f32, MemorySpace.UB)
        acc_type = TileType([bm, dv], f32, MemorySpace.UB)

        def partial(at: InsertPoint, slot: SSAValue) -> list[SSAValue]:
            return [
                self.load(at, workspace, [slot, 0], tile_type)
                for workspace, tile_type in zip(
                    workspaces, (stat_type, stat_type, acc_type), strict=True
                )
            ]

        mine = partial(at, share.slot(self, at, 1))

        def merge(at: InsertPoint, c: Valid, carried: list[SSAValue]) -> list[SSAValue]:
            other = partial(at, _Share.slot_of(self, at, c, bm, 0))
            return merge_partials(self, at, carried, other)

        following = self.value(
            at, arith.AddiOp(self.index_value(share.core), self.constant(1))
        )
        maximum, total, acc = self.loop(at, following, later, 1, mine, merge)
        del maximum
        write_out(at, acc, total, self.scaled(at, share.hi, bm))


@dataclass(frozen=True)
class _Share:
    """A core's `EntryShare` of the stored blocks, the core and the block
    rows' height (for its workspace slots)."""

    entries: EntryShare
    core: Valid
    bm: int

    @property
    def first(self) -> SSAValue:
        return self.entries.first

    @property
    def end(self) -> SSAValue:
        return self.entries.end

    @property
    def lo(self) -> SSAValue:
        return self.entries.lo

    @property
    def hi(self) -> SSAValue:
        return self.entries.hi

    @property
    def straddles(self) -> SSAValue:
        return self.entries.straddles

    def slot(self, nest: SparseNest, at: InsertPoint, which: int) -> SSAValue:
        """The first workspace row of this core's slot `which`."""
        return self.slot_of(nest, at, self.core, self.bm, which)

    @staticmethod
    def slot_of(
        nest: SparseNest, at: InsertPoint, core: Valid, bm: int, which: int
    ) -> SSAValue:
        """The first workspace row of core `core`'s slot `which` (0, 1)."""
        return nest.index_value(nest.scaled(at, core, 2 * bm, which * bm))


def merge_partials(
    nest: SparseNest, at: InsertPoint, mine: list[SSAValue], other: list[SSAValue]
) -> list[SSAValue]:
    """Two partial softmax statistics of one row (row max, row sum,
    accumulator) as one: m = max(m1, m2), l = l1 c1 + l2 c2, acc = acc1 c1 +
    acc2 c2 with ci = exp(mi - m) (the online softmax's `running_max` and
    `rescale` steps)."""
    maximum, total, acc = mine
    other_max, other_total, other_acc = other
    new_max, correction = running_max(nest, at, other_max, maximum)
    assert correction is not None
    factor = nest.value(at, tile.ExpOp(nest.value(at, tile.SubOp(other_max, new_max))))
    total = rescale(
        nest, at, total, nest.value(at, tile.MulOp(other_total, factor)), correction
    )
    acc = rescale(
        nest, at, acc, nest.value(at, tile.MulOp(other_acc, factor)), correction
    )
    return [new_max, total, acc]


@dataclass
class _Blocks:
    """One stored block's step of the fused nest."""

    nest: SparseAttentionNest
    mask: SparseBuffers
    k: SSAValue
    v: SSAValue
    q_l0: SSAValue
    scale: ScaleForm | None
    ones: SSAValue | None
    """The block of ones in L0B the cube sums the probabilities with (None:
    the row sums on the vector unit)."""
    defer: bool
    """Each block's update of the sum and the accumulator after the next
    block's softmax (`step`)."""
    f32_scores: bool
    """The scores moved to UB in f32, a constant scale applied in f32."""
    sum_column: bool = False
    """Each block's row sums from the cube reduced to one column
    (`NestChoice.sum_column`)."""

    def keys(self, at: InsertPoint, j: Valid) -> SSAValue:
        """The K block of stored block `j` in L1, addressed by its column
        index read on the scalar unit."""
        nest, bn = self.nest, self.mask.block[1]
        element_type, d = _element_type(self.k), _cols(self.k)
        col0 = nest.scaled(at, nest.read_index(at, self.mask.indices, j), bn)
        k_type = TileType([bn, d], element_type, MemorySpace.L1, layout="nz")
        return nest.load(at, self.k, [col0, 0], k_type)

    def scores(self, at: InsertPoint, k_l1: SSAValue) -> SSAValue:
        """The scores of a K block in L1: transposed to L0B, Q @ K^T on the
        cube, moved to UB in the scores' type."""
        nest, (bm, bn) = self.nest, self.mask.block
        k_l0 = to_l0(nest, at, k_l1, MemorySpace.L0B, True)
        s_l0c = nest.value(at, tile.MatmulOp(self.q_l0, k_l0))
        element_type = f32 if self.f32_scores else _element_type(self.k)
        return nest.value(
            at, tile.MoveOp(s_l0c, TileType([bm, bn], element_type, MemorySpace.UB))
        )

    def prefetching_step(
        self, at: InsertPoint, j: Valid, carried: list[SSAValue]
    ) -> list[SSAValue]:
        """`step` of block `j`, computing the next block's scores (carried)
        between its softmax and its product with V."""
        return self.step(at, j, carried, self.nest.add(at, j, 1))

    def step(
        self,
        at: InsertPoint,
        j: Valid,
        carried: list[SSAValue],
        following: Valid | None = None,
    ) -> list[SSAValue]:
        """Block `j` from `carried` (row max, row sum, accumulator, with
        `defer` the previous block's sums, product and correction still to be
        added, and this block's scores last): the same after it, and the
        scores of block `following` when given (computed once this block's
        softmax has read its own, before its product with V: the cube then
        runs the next block's Q @ K^T while the vector unit works on this
        one). With `defer`, the previous block's update of the sum and the
        accumulator comes after this block's softmax, so that the vector unit
        (in order) does not wait for the cube's product before it."""
        nest, bn = self.nest, self.mask.block[1]
        element_type, dv = _element_type(self.k), _cols(self.v)
        maximum, total, acc, *pending, scores = carried
        # The next K block is loaded before this V block: with `defer` the
        # next scores are needed before this block's product.
        next_keys = None if following is None else self.keys(at, following)
        col0 = nest.scaled(at, nest.read_index(at, self.mask.indices, j), bn)
        v_type = TileType([bn, dv], element_type, MemorySpace.L1, layout="nz")
        v_l1 = nest.load(at, self.v, [col0, 0], v_type)
        if self.scale is not None and self.f32_scores:
            # s * c (s * (1 / c) for s / c) in f32
            factor = _constant(self.scale.scalar)
            assert factor is not None
            if isinstance(self.scale.op, tv.DivOp):
                factor = 1.0 / factor
            scores = nest.value(at, tile.MulOp(scores, nest.constant(factor, f32)))
        elif self.scale is not None:  # in the scores' type, as the reference
            kind = tile.MulOp if isinstance(self.scale.op, tv.MulOp) else tile.DivOp
            scalar = _computed_scalar(nest, at, self.scale.scalar, element_type)
            computed = nest.cast_to(at, scores, compute_type(element_type))
            scores = nest.cast_to(
                at, nest.value(at, kind(computed, scalar)), element_type
            )
        # The row maximum in the scores' type (exact: a cast changes no value;
        # bf16 in f32).
        scores_type = cast(TileType, scores.type).element_type
        computed = nest.cast_to(at, scores, compute_type(scores_type))
        local = nest.to_f32(at, nest.value(at, tile.ReduceMaxOp(computed, 1)))
        new_max, correction = running_max(nest, at, local, maximum)
        assert correction is not None
        shifted = nest.value(at, tile.SubOp(nest.to_f32(at, scores), new_max))
        exponent = nest.value(at, tile.ExpOp(shifted))
        ahead = [] if next_keys is None else [self.scores(at, next_keys)]
        if self.ones is None:
            local_sum = nest.value(at, tile.ReduceSumOp(exponent, 1))
        p_ub = nest.cast_to(at, exponent, element_type)
        if self.defer:
            # the previous block's update here: after this block's softmax on
            # the vector unit, before this block's sums and product are
            # written (they take the buffers it reads)
            total, acc = self.settle(at, total, acc, pending)
        p_l0 = probabilities_l0(nest, at, p_ub, element_type, False)
        if self.ones is not None:
            local_sum = product_ub(nest, at, p_l0, self.ones)
            if self.sum_column:  # its ONES equal columns as one
                local_sum = nest.value(at, tile.ReduceMaxOp(local_sum, 1))
        v_l0 = to_l0(nest, at, v_l1, MemorySpace.L0B, False)
        product = product_ub(nest, at, p_l0, v_l0)
        if self.defer:
            return [new_max, total, acc, local_sum, product, correction, *ahead]
        total, acc = self.settle(at, total, acc, [local_sum, product, correction])
        return [new_max, total, acc, *ahead]

    def settle(
        self, at: InsertPoint, total: SSAValue, acc: SSAValue, pending: list[SSAValue]
    ) -> tuple[SSAValue, SSAValue]:
        """The row sum and accumulator with a block's (sums, product,
        correction) added: l * c + sums, acc * c + product."""
        sums, product, correction = pending
        return (
            rescale(self.nest, at, total, sums, correction),
            rescale(self.nest, at, acc, product, correction),
        )


def scaled_pattern(op: Operation) -> SSAValue | None:
    """The sparse operand on whose pattern `op`'s result lies, for the
    assemble of a scale (None otherwise)."""
    form = scale_form(op)
    return None if form is None else form.input
