"""The steps of the online softmax that the flash-attention nest
(passes/attention_nests.py) and the block-sparse attention nest
(passes/sparse_attention.py) share: moves between the cube's memories and
UB, the running row maximum and its correction, the probabilities to L0A,
the block of ones the cube sums them with, and the accumulator's rescale.
Kept apart from the nests so that each stays one job (docs/tiling.md,
*Attention*).
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import f16, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType

from .attention_model import ONES
from .nest_builder import LoopBuilder

F32_MAX = 3.4028234663852886e38
"""The largest finite f32."""


def to_l0(
    loops: LoopBuilder,
    at: InsertPoint,
    source: SSAValue,
    space: MemorySpace,
    transpose: bool,
) -> SSAValue:
    """An L1 tile moved to L0A/L0B (transposed: shape and valid reversed)."""
    source_type = cast(TileType, source.type)
    shape, valid = list(source_type.get_shape()), list(source_type.get_valid())
    if transpose:
        shape, valid = shape[::-1], valid[::-1]
    result_type = TileType(
        shape, source_type.element_type, space, valid, pad=source_type.pad_value
    )
    return loops.value(at, tile.MoveOp(source, result_type, transpose))


def product_ub(
    loops: LoopBuilder, at: InsertPoint, lhs: SSAValue, rhs: SSAValue
) -> SSAValue:
    """lhs @ rhs on the cube, moved to UB in f32."""
    o_l0c = loops.value(at, tile.MatmulOp(lhs, rhs))
    o_type = cast(TileType, o_l0c.type)
    return loops.value(
        at,
        tile.MoveOp(
            o_l0c,
            TileType(o_type.get_shape(), f32, MemorySpace.UB, o_type.get_valid()),
        ),
    )


def running_max(
    loops: LoopBuilder, at: InsertPoint, local: SSAValue, maximum: SSAValue | None
) -> tuple[SSAValue, SSAValue | None]:
    """The new row maximum from a block's `local` one and the running
    `maximum` (None: the first block), and the correction exp(old - new) the
    sums and the accumulator are scaled by (None first). A row whose scores so
    far are all -inf (masked) subtracts the lowest finite value instead of
    -inf: its exponents are 0, not NaN."""
    if maximum is None:
        return loops.value(at, tile.MaxOp(local, loops.constant(-F32_MAX, f32))), None
    new_max = loops.value(at, tile.MaxOp(maximum, local))
    correction = loops.value(
        at, tile.ExpOp(loops.value(at, tile.SubOp(maximum, new_max)))
    )
    return new_max, correction


def probabilities_l0(
    loops: LoopBuilder,
    at: InsertPoint,
    exponent: SSAValue,
    element_type: Attribute,
    pad: bool,
) -> SSAValue:
    """The probabilities (unnormalised) in `element_type` (cast unless they
    are), in L0A through L1 (nz). With `pad` (a partial block) the product sums over the valid keys
    only: the cube reads whole fractals, so the keys past them are zeros in
    both operands (and the rows past the valid ones are defined bytes when
    moved)."""
    p_ub = exponent
    if cast(TileType, exponent.type).element_type != element_type:
        p_ub = loops.value(at, tile.CastOp(exponent, element_type))
    if pad:
        p_ub = loops.value(at, tile.PadOp(p_ub, tile.PadValue.ZERO))
    p_type = cast(TileType, p_ub.type)
    p_l1 = loops.value(
        at,
        tile.MoveOp(
            p_ub,
            TileType(
                p_type.get_shape(),
                element_type,
                MemorySpace.L1,
                p_type.get_valid(),
                tile.Layout.NZ,
                p_type.pad_value,
            ),
        ),
    )
    return to_l0(loops, at, p_l1, MemorySpace.L0A, False)


def ones_l0b(
    loops: LoopBuilder,
    at: InsertPoint,
    rows: int,
    valid: int,
    element_type: Attribute = f16,
) -> SSAValue:
    """A rows x ONES block of ones (f16 by default) in L0B (filled in UB,
    moved through L1 in nz), its first `valid` rows valid and the others
    zero: `p @ ones` gives every row sum of `p` over the valid keys in each
    column."""
    ub = TileType([rows, ONES], element_type, MemorySpace.UB, [valid, ONES])
    filled = loops.value(at, tile.FillOp(loops.constant(1.0, element_type), ub))
    if valid != rows:
        filled = loops.value(at, tile.PadOp(filled, tile.PadValue.ZERO))
    pad = cast(TileType, filled.type).pad_value
    l1 = loops.value(
        at,
        tile.MoveOp(
            filled,
            TileType(
                [rows, ONES],
                element_type,
                MemorySpace.L1,
                [valid, ONES],
                tile.Layout.NZ,
                pad,
            ),
        ),
    )
    return to_l0(loops, at, l1, MemorySpace.L0B, False)


def rescale(
    loops: LoopBuilder,
    at: InsertPoint,
    acc: SSAValue,
    product: SSAValue,
    correction: SSAValue,
) -> SSAValue:
    """acc * correction + product: the accumulator after a key block."""
    scaled = loops.value(at, tile.MulOp(acc, correction))
    return loops.value(at, tile.AddOp(scaled, product))
