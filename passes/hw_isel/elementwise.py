"""Elementwise tile ops: unary functions, binary ops (with tile, broadcast or
scalar operands) and broadcasts.

Each unary op has a recipe (`UNARY_RECIPES`): its vector primitives, computed
in the result buffer, and whether the result may overwrite the operand. A row
operand (`[M, 1]` against `[M, N]`) of a binary op or a broadcast is first
broadcast into one 32-byte block per row with `vbrcb` and read with block
stride 0 (`block_operand`); a column operand (`[1, N]`) is read with repeat
stride 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import gcd
from typing import NoReturn

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, i16, i32
from xdsl.ir import Attribute, Operation, SSAValue

from pypto_mlir.diagnostics import op_error
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace, TileType
from pypto_mlir.numerics import GELU_CUBIC, GELU_SCALE
from pypto_mlir.passes.hw_isel.emitter import (
    BufferOf,
    Emitter,
    Kind,
    Lanes,
    MakeOp,
    as_buffer,
    as_tile,
    binary,
    dup,
    matrix_shape,
    round_up,
    scalar_op,
    unary,
)
from pypto_mlir.passes.hw_isel.strategy import (
    IselContext,
    NoScratch,
    Term,
    Terms,
    TileOpStrategy,
)


class ExpandedMathStrategy(TileOpStrategy):
    """`tile.sin`, `tile.cos`, `tile.erf`: the vector unit has no instruction for
    them. `pypto-lower` expands their tv forms into other tv ops (`tv-expand-math`,
    from `op_facts`) before tiling, so tile-to-hw meets them only in tile IR
    written by hand, and refuses them naming the pass that expands them."""

    ops = (tile.SinOp, tile.CosOp, tile.ErfOp)

    def _refuse(self, op: Operation) -> NoReturn:
        raise op_error(
            op,
            f"tile-to-hw cannot lower {op.name}: the vector unit has no instruction "
            f"for it; expand tv.{op.name.split('.', 1)[1]} before tiling with "
            "tv-expand-math (pypto-lower does) or write the expanded tile ops",
        )

    def inplace(self, op: Operation) -> tuple[int, ...]:
        self._refuse(op)

    def scratch(self, op: Operation) -> list[hw.BufferType]:
        self._refuse(op)

    def scratch_terms(self, op: Operation, terms: Terms) -> list[Term]:
        self._refuse(op)

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> Sequence[SSAValue] | None:
        self._refuse(op)


# --------------------------------------------------------------------------------------
# Unary functions
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UnaryKernel:
    """What a unary recipe computes with: the operand `x` and the result `d`
    over the valid region, and the element type."""

    em: Emitter
    x: Lanes
    d: Lanes
    rows: int
    cols: int
    element_type: Attribute

    def step(self, make: MakeOp, *lanes: Lanes) -> None:
        """One vector primitive over the region."""
        self.em.vector(make, lanes, self.rows, 0, self.cols)

    def constant(self, value: float) -> SSAValue:
        return self.em.scalar(value, self.element_type)


@dataclass(frozen=True)
class UnaryRecipe:
    """The vector primitives of one unary op, and whether its result may
    overwrite its operand: true when its instructions read each element before
    writing it (and never again) for operands of that element type."""

    emit: Callable[[UnaryKernel], None]
    in_place: Callable[[Attribute], bool]


def _always(element_type: Attribute) -> bool:
    return True


def _never(element_type: Attribute) -> bool:
    return False


def _primitive(op_type: type[hw.VectorUnaryOp]) -> Callable[[UnaryKernel], None]:
    """A unary op that is one vector instruction."""

    def emit(k: UnaryKernel) -> None:
        k.step(unary(op_type), k.x, k.d)

    return emit


def _neg(k: UnaryKernel) -> None:
    k.step(scalar_op(hw.VMulsOp, k.constant(-1)), k.x, k.d)


def _abs(k: UnaryKernel) -> None:
    """vabs for floats; max(x, -x) for integers, which reads x after writing d."""
    if tile.is_float(k.element_type):
        k.step(unary(hw.VAbsOp), k.x, k.d)
    else:
        k.step(scalar_op(hw.VMulsOp, k.constant(-1)), k.x, k.d)
        k.step(binary(hw.VMaxOp), k.x, k.d, k.d)


def _relu(k: UnaryKernel) -> None:
    if k.element_type == i16:
        k.step(scalar_op(hw.VMaxsOp, k.constant(0)), k.x, k.d)
    else:
        k.step(unary(hw.VReluOp), k.x, k.d)


def _sigmoid(k: UnaryKernel) -> None:
    """1 / (1 + e^-x)."""
    x, d = k.x, k.d
    k.step(scalar_op(hw.VMulsOp, k.constant(-1)), x, d)
    k.step(unary(hw.VExpOp), d, d)
    k.step(scalar_op(hw.VAddsOp, k.constant(1)), d, d)
    k.step(unary(hw.VReciprocalOp), d, d)


def _silu(k: UnaryKernel) -> None:
    """x / (1 + e^-x), one step fewer than x * sigmoid(x); reads x at the end."""
    x, d = k.x, k.d
    k.step(scalar_op(hw.VMulsOp, k.constant(-1)), x, d)
    k.step(unary(hw.VExpOp), d, d)
    k.step(scalar_op(hw.VAddsOp, k.constant(1)), d, d)
    k.step(binary(hw.VDivOp), x, d, d)


def _tanh(k: UnaryKernel) -> None:
    """2 / (1 + e^-2x) - 1: no overflow to inf - inf for any x."""
    x, d = k.x, k.d
    k.step(scalar_op(hw.VMulsOp, k.constant(-2)), x, d)
    k.step(unary(hw.VExpOp), d, d)
    k.step(scalar_op(hw.VAddsOp, k.constant(1)), d, d)
    k.step(unary(hw.VReciprocalOp), d, d)
    k.step(scalar_op(hw.VMulsOp, k.constant(2)), d, d)
    k.step(scalar_op(hw.VAddsOp, k.constant(-1)), d, d)


def _gelu(k: UnaryKernel) -> None:
    """x / (1 + e^(-s (x + c x^3))), the form of the tv reference; reads x
    after writing d."""
    x, d = k.x, k.d
    k.step(binary(hw.VMulOp), x, x, d)
    k.step(binary(hw.VMulOp), d, x, d)
    k.step(scalar_op(hw.VMulsOp, k.constant(GELU_CUBIC)), d, d)
    k.step(binary(hw.VAddOp), d, x, d)
    k.step(scalar_op(hw.VMulsOp, k.constant(-GELU_SCALE)), d, d)
    k.step(unary(hw.VExpOp), d, d)
    k.step(scalar_op(hw.VAddsOp, k.constant(1)), d, d)
    k.step(binary(hw.VDivOp), x, d, d)


UNARY_RECIPES: dict[type[tile.TileUnaryOp], UnaryRecipe] = {
    tile.NegOp: UnaryRecipe(_neg, _always),
    tile.AbsOp: UnaryRecipe(_abs, tile.is_float),
    tile.ExpOp: UnaryRecipe(_primitive(hw.VExpOp), _always),
    tile.LogOp: UnaryRecipe(_primitive(hw.VLnOp), _always),
    tile.SqrtOp: UnaryRecipe(_primitive(hw.VSqrtOp), _always),
    tile.RsqrtOp: UnaryRecipe(_primitive(hw.VRsqrtOp), _always),
    tile.ReciprocalOp: UnaryRecipe(_primitive(hw.VReciprocalOp), _always),
    tile.ReluOp: UnaryRecipe(_relu, _always),
    tile.SigmoidOp: UnaryRecipe(_sigmoid, _always),
    tile.TanhOp: UnaryRecipe(_tanh, _always),
    tile.GeluOp: UnaryRecipe(_gelu, _never),
    tile.SiluOp: UnaryRecipe(_silu, _never),
}
"""Every unary tile op: its vector primitives and its in-place rule."""


class UnaryStrategy(NoScratch):
    """Unary tile ops: their recipe over the valid region, in the result buffer.

    `neg abs exp log sqrt rsqrt reciprocal relu`: `vmuls(-1)`, `vabs` (integers:
    `vmax(x, -x)`), `vexp`, `vln`, `vsqrt`, `vrsqrt`, `vreciprocal`, `vrelu` (i16:
    `vmaxs(x, 0)`)

    `sigmoid`: `1 / (1 + e^-x)`: `vmuls -1, vexp, vadds 1, vreciprocal`

    `silu`: `x / (1 + e^-x)`: `vmuls -1, vexp, vadds 1, vdiv` (tv-to-tile makes `x *
    sigmoid(x)` one silu)

    `tanh`: `2 / (1 + e^-2x) - 1`: `vmuls -2, vexp, vadds 1, vreciprocal, vmuls 2,
    vadds -1` (no inf − inf for any x)

    `gelu`: the tv form `x / (1 + e^(-s (x + 0.044715 x^3)))`: `vmul, vmul, vmuls,
    vadd, vmuls, vexp, vadds 1, vdiv`
    """

    ops = tuple(UNARY_RECIPES)

    def _recipe(self, op: Operation) -> UnaryRecipe:
        recipe = UNARY_RECIPES.get(type(op))  # type: ignore[arg-type]
        if recipe is None:
            raise op_error(op, f"tile-to-hw cannot lower {op.name}")
        return recipe

    def inplace(self, op: Operation) -> tuple[int, ...]:
        assert isinstance(op, tile.TileUnaryOp)
        in_place = self._recipe(op).in_place(as_tile(op.source).element_type)
        return (0,) if in_place else ()

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.TileUnaryOp)
        self.check_vector_shape(op, op.result)
        region = self.region(op.result)
        kernel = UnaryKernel(
            em,
            region.lanes(buffer(op.source)),
            region.lanes(buffer(op.result)),
            region.rows,
            region.cols,
            as_tile(op.result).element_type,
        )
        self._recipe(op).emit(kernel)


# --------------------------------------------------------------------------------------
# Binary ops and broadcasts
# --------------------------------------------------------------------------------------


BINARY_PRIMITIVES: dict[type[tile.TileBinaryOp], type[hw.VectorBinaryOp]] = {
    tile.AddOp: hw.VAddOp,
    tile.SubOp: hw.VSubOp,
    tile.MulOp: hw.VMulOp,
    tile.DivOp: hw.VDivOp,
    tile.MaxOp: hw.VMaxOp,
    tile.MinOp: hw.VMinOp,
}

SCALAR_PRIMITIVES: dict[type[tile.TileBinaryOp], type[hw.VectorScalarOp]] = {
    tile.AddOp: hw.VAddsOp,
    tile.MulOp: hw.VMulsOp,
    tile.MaxOp: hw.VMaxsOp,
    tile.MinOp: hw.VMinsOp,
}
"""Binary ops with a scalar operand that are one vector-scalar instruction."""


def row_block_scratch(
    isel: IselContext, element_type: Attribute, count: int
) -> list[hw.BufferType]:
    """vbrcb's output (one block per value) and, for a count that is not a
    multiple of the blocks per repeat, a padded copy of the values."""
    ub = str(MemorySpace.UB)
    padded = round_up(count, isel.blocks_per_repeat)
    per_block = isel.per_block(element_type)
    types = [hw.BufferType([padded * per_block], element_type, ub)]
    if count % isel.blocks_per_repeat:
        types.append(hw.BufferType([round_up(padded, per_block)], element_type, ub))
    return types


def block_operand(
    isel: IselContext,
    em: Emitter,
    value: SSAValue,
    count: int,
    buffer: BufferOf,
    scratch: list[SSAValue],
) -> SSAValue:
    """Broadcast the first `count` values of a column tile to one 32-byte block
    each (vbrcb reads whole repeats of values: pad a partial one first).
    Consumes its scratch buffers from the front of `scratch`."""
    blocks = scratch.pop(0)
    source = buffer(value)
    element_type = as_tile(value).element_type
    if count % isel.blocks_per_repeat:
        padded = scratch.pop(0)
        size = as_buffer(padded).element_count()
        em.vector(dup(em.scalar(0, element_type)), [Lanes(padded)], 1, 0, size)
        em.vector(unary(hw.VCopyOp), [Lanes(source), Lanes(padded)], 1, 0, count)
        source = padded
    repeats = -(-count // isel.blocks_per_repeat)
    # Chunks of repeats start on a block of the source values.
    step = isel.block // gcd(
        isel.block, isel.blocks_per_repeat * as_buffer(source).element_bytes
    )
    most = em.max_repeat - em.max_repeat % step
    done = 0
    while done < repeats:
        chunk = min(repeats - done, most)
        per_repeat = isel.blocks_per_repeat
        em.emit(
            hw.VBrcbOp(
                em.subview(source, done * per_repeat),
                em.subview(blocks, done * per_repeat * isel.per_block(element_type)),
                repeat=chunk,
            )
        )
        done += chunk
    return blocks


def block_operand_terms(
    isel: IselContext, terms: Terms, value: SSAValue, result: SSAValue, e: int
) -> list[Term]:
    """The `scratch_terms` of `block_operand` for operand `value` of `result`."""
    shape, out = matrix_shape(as_tile(value)), matrix_shape(as_tile(result))
    if shape == out or (shape != (1, 1) and shape[0] == 1):
        return []  # a full or a row-vector operand needs none (as operand_lanes)
    # vbrcb's blocks (a block per value, whole repeats) and a padded copy
    return [
        terms.term(value, isel.block + e, cols=False),
        terms.constant(value, 320),
    ]


def operand_scratch(
    isel: IselContext, value: SSAValue, result: SSAValue
) -> list[hw.BufferType]:
    """The scratch of `block_operand` for operand `value` of `result` (none for
    a full or a row-vector operand)."""
    kind, count = isel.operand_lanes(value, result)
    if kind in (Kind.ROW_BLOCK, Kind.SPLAT_BLOCK):
        return row_block_scratch(isel, as_tile(value).element_type, count)
    return []


def _has_scalar(op: tile.TileBinaryOp) -> bool:
    return not all(isinstance(o.type, TileType) for o in op.operands)


class BinaryStrategy(TileOpStrategy):
    """Binary tile ops: one vector instruction over tile (or broadcast) operands,
    or a vector-scalar one (a few for `sub` and `div`) with a scalar operand.

    `add sub mul div max min`: `vadd vsub vmul vdiv vmax vmin`; a `[M, 1]` operand
    is broadcast into one 32-byte block per row (`vbrcb`, from a zero-padded copy
    when M is not a multiple of 8) and read with block stride 0; a `[1, N]` operand
    is read with repeat stride 0

    binary with a scalar: `vadds vmuls vmaxs vmins`; `t - s` = `vadds(t, -s)`, `s -
    t` = `vadds(vmuls(t, -1), s)`; division: `vdup` the scalar into one repeat, read
    with repeat stride 0
    """

    ops = (tile.AddOp, tile.SubOp, tile.MulOp, tile.DivOp, tile.MaxOp, tile.MinOp)

    def inplace(self, op: Operation) -> tuple[int, ...]:
        assert isinstance(op, tile.TileBinaryOp)
        return tuple(
            i
            for i, operand in enumerate(op.operands)
            if isinstance(operand.type, TileType)
            and matrix_shape(operand.type) == matrix_shape(as_tile(op.result))
        )

    def scratch(self, op: Operation) -> list[hw.BufferType]:
        assert isinstance(op, tile.TileBinaryOp)
        types: list[hw.BufferType] = []
        element_type = as_tile(op.result).element_type
        for operand in op.operands:
            if isinstance(operand.type, TileType):
                types += operand_scratch(self, operand, op.result)
        if isinstance(op, tile.DivOp) and _has_scalar(op):
            ub = str(MemorySpace.UB)
            types.append(
                hw.BufferType([self.lanes_for(element_type)], element_type, ub)
            )
        return types

    def scratch_terms(self, op: Operation, terms: Terms) -> list[Term]:
        assert isinstance(op, tile.TileBinaryOp)
        e = tile.element_bytes(as_tile(op.result).element_type)
        found: list[Term] = []
        for operand in op.operands:
            if isinstance(operand.type, TileType):
                found += block_operand_terms(self, terms, operand, op.result, e)
        if isinstance(op, tile.DivOp) and _has_scalar(op):
            # the scalar divisor in a repeat
            found.append(terms.constant(op.result, self.target.vector.repeat_bytes))
        return found

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.TileBinaryOp)
        self.check_vector_shape(op, op.result)
        self._binary(op, em, buffer, scratch)

    def _binary(
        self,
        op: tile.TileBinaryOp,
        em: Emitter,
        buffer: BufferOf,
        scratch: list[SSAValue],
    ) -> None:
        region = self.region(op.result)
        element_type = as_tile(op.result).element_type
        d = region.lanes(buffer(op.result))
        operands: list[Lanes | SSAValue] = []
        for operand in op.operands:
            if not isinstance(operand.type, TileType):
                operands.append(operand)
                continue
            kind, count = self.operand_lanes(operand, op.result)
            if kind == Kind.FULL:
                operands.append(region.lanes(buffer(operand)))
            elif kind == Kind.ROW_VECTOR:
                operands.append(Lanes(buffer(operand), kind))
            else:
                blocks = block_operand(self, em, operand, count, buffer, scratch)
                operands.append(Lanes(blocks, kind))
        lhs, rhs = operands

        def step(make: MakeOp, *lanes: Lanes) -> None:
            em.vector(make, lanes, region.rows, 0, region.cols)

        if isinstance(lhs, Lanes) and isinstance(rhs, Lanes):
            step(binary(BINARY_PRIMITIVES[type(op)]), lhs, rhs, d)
            return
        tile_first = isinstance(lhs, Lanes)
        t, s = (lhs, rhs) if tile_first else (rhs, lhs)
        assert isinstance(t, Lanes) and isinstance(s, SSAValue)
        if type(op) in SCALAR_PRIMITIVES:
            step(scalar_op(SCALAR_PRIMITIVES[type(op)], s), t, d)
        elif isinstance(op, tile.SubOp) and tile_first:
            step(scalar_op(hw.VAddsOp, self._negate(em, s)), t, d)
        elif isinstance(op, tile.SubOp):
            step(scalar_op(hw.VMulsOp, em.scalar(-1, element_type)), t, d)
            step(scalar_op(hw.VAddsOp, s), d, d)
        else:
            assert isinstance(op, tile.DivOp)
            splat = scratch.pop(0)
            count = as_buffer(splat).element_count()
            em.vector(dup(s), [Lanes(splat)], 1, 0, count)
            s_lanes = Lanes(splat, Kind.SPLAT_REPEAT)
            pair = (t, s_lanes) if tile_first else (s_lanes, t)
            step(binary(hw.VDivOp), *pair, d)

    def _negate(self, em: Emitter, value: SSAValue) -> SSAValue:
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            attr = owner.value
            if isinstance(attr, FloatAttr):
                return em.scalar(-attr.value.data, value.type)
            if isinstance(attr, IntegerAttr):
                return em.scalar(-attr.value.data, value.type)
        minus_one = em.scalar(-1, value.type)
        if tile.is_float(value.type):
            return em.emit(arith.MulfOp(value, minus_one)).results[0]
        return em.emit(arith.MuliOp(value, minus_one)).results[0]


def operand_lanes_of(
    isel: IselContext,
    em: Emitter,
    value: SSAValue,
    result: SSAValue,
    buffer: BufferOf,
    scratch: list[SSAValue],
) -> Lanes:
    """The lanes of tile operand `value` of `result`: its buffer over the
    region, a row vector read again for every row, or its values broadcast to
    a block each (`block_operand`, consuming its scratch)."""
    kind, count = isel.operand_lanes(value, result)
    if kind == Kind.FULL:
        return isel.region(result).lanes(buffer(value))
    if kind == Kind.ROW_VECTOR:
        return Lanes(buffer(value), kind)
    return Lanes(block_operand(isel, em, value, count, buffer, scratch), kind)


def compare_bits_bytes(isel: IselContext, element_type: Attribute, most: int) -> int:
    """The bytes of the bit buffer one `vcmp` of at most `most` repeats writes
    (a bit a lane), in whole 32-byte blocks."""
    bits = min(most, isel.target.vector.max_repeat) * isel.lanes_for(element_type)
    return round_up(-(-bits // 8), isel.block)


MIRRORED: dict[hw.CmpMode, hw.CmpMode] = {
    hw.CmpMode.LT: hw.CmpMode.GT,
    hw.CmpMode.LE: hw.CmpMode.GE,
    hw.CmpMode.GT: hw.CmpMode.LT,
    hw.CmpMode.GE: hw.CmpMode.LE,
    hw.CmpMode.EQ: hw.CmpMode.EQ,
    hw.CmpMode.NE: hw.CmpMode.NE,
}
"""`b <cmp> a` as `a <MIRRORED[cmp]> b` (NaN included: both false but ne)."""


def filled_scalar(value: SSAValue) -> SSAValue | None:
    """The scalar of the `tile.fill` defining tile `value`: a select reads
    only its valid region (a broadcast dim is 1 physical and valid, another
    one the result's valid extent), which holds it, never its pad."""
    fill = value.owner
    return fill.value if isinstance(fill, tile.FillOp) else None


@dataclass(frozen=True)
class ScalarCompare:
    """A select's compare as `vcmps`: the operand read as a scalar (1: rhs, 0:
    lhs with the compare mirrored), its scalar, and the compare mode."""

    index: int
    scalar: SSAValue
    cmp: hw.CmpMode


class SelectStrategy(TileOpStrategy):
    """`tile.select`: per instruction of the region, a `vcmp` of lhs and rhs
    into a scratch bit buffer, then a `vselect` of on_true and on_false by it,
    with the same repeats, mask and strides (both sides have one width, so one
    repeat covers the same lanes); operands broadcast as a binary op's do. A
    compared operand that a `tile.fill` defines is its scalar: a `vcmps` of
    the other one, and the fill writes nothing when no other op reads it.

    `select`: `vcmp <cmp>` into an i8 bit buffer (scratch, a bit a lane of the
    instruction's repeats), `vselect`; a `[M, 1]` operand through `vbrcb` as for
    binary ops; rhs a `tile.fill`: `vcmps <cmp>` of lhs and the fill's scalar
    (lhs a fill: `vcmps` of rhs, lt/le/gt/ge mirrored), the fill's `vdup` gone
    when only selects' scalars read it
    """

    ops = (tile.SelectOp,)

    def scalar_compare(self, op: tile.SelectOp) -> ScalarCompare | None:
        """The compare as a `vcmps`, when rhs (else lhs) is a fill's scalar."""
        cmp = hw.CmpMode(op.cmp.data)
        for index, mode in ((1, cmp), (0, MIRRORED[cmp])):
            scalar = filled_scalar(op.operands[index])
            if scalar is not None:
                return ScalarCompare(index, scalar, mode)
        return None

    def _read(self, op: tile.SelectOp) -> list[SSAValue]:
        """The operands read as lanes, in order: all but a `vcmps` scalar."""
        found = self.scalar_compare(op)
        skip = None if found is None else found.index
        return [v for k, v in enumerate(op.operands) if k != skip]

    def reads_through(self, op: Operation) -> tuple[int, ...]:
        assert isinstance(op, tile.SelectOp)
        found = self.scalar_compare(op)
        return () if found is None else (found.index,)

    def inplace(self, op: Operation) -> tuple[int, ...]:
        assert isinstance(op, tile.SelectOp)
        result = as_tile(op.result)
        return tuple(
            i
            for i, operand in enumerate(op.operands)
            if as_tile(operand).element_type == result.element_type
            and matrix_shape(as_tile(operand)) == matrix_shape(result)
        )

    def _most_repeats(self, op: tile.SelectOp) -> int:
        """Repeats one instruction can have over the result's physical shape."""
        result = as_tile(op.result)
        rows, pitch = matrix_shape(result)
        return rows * -(-pitch // self.lanes_for(result.element_type))

    def scratch(self, op: Operation) -> list[hw.BufferType]:
        assert isinstance(op, tile.SelectOp)
        element_type = as_tile(op.result).element_type
        size = compare_bits_bytes(self, element_type, self._most_repeats(op))
        types = [hw.BufferType([size], hw.MASK_ELEMENT, str(MemorySpace.UB))]
        if self._ordered_integers(op):  # min(lhs, rhs), laid out as the result
            shape = list(matrix_shape(as_tile(op.result)))
            types.append(hw.BufferType(shape, i32, str(MemorySpace.UB)))
        for operand in self._read(op):
            types += operand_scratch(self, operand, op.result)
        return types

    def scratch_terms(self, op: Operation, terms: Terms) -> list[Term]:
        assert isinstance(op, tile.SelectOp)
        # a bit per element, a repeat of bits more per row (the last chunk of a
        # row is a whole repeat), whole blocks: as `scratch` sizes it
        lanes = self.lanes_for(as_tile(op.result).element_type)
        found = [
            terms.term(op.result, Fraction(1, 8)),
            terms.term(op.result, Fraction(lanes, 8), cols=False),
            terms.constant(op.result, self.block),
        ]
        if self._ordered_integers(op):  # the i32 minima, as `scratch` sizes them
            found.append(terms.term(op.result, Fraction(4)))
        for operand in self._read(op):
            e = tile.element_bytes(as_tile(operand).element_type)
            found += block_operand_terms(self, terms, operand, op.result, e)
        return found

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.SelectOp)
        self.check_vector_shape(op, op.result)
        bits = scratch.pop(0)
        least = scratch.pop(0) if self._ordered_integers(op) else None
        lanes = [
            operand_lanes_of(self, em, operand, op.result, buffer, scratch)
            for operand in self._read(op)
        ]
        region = self.region(op.result)
        scalar = self.scalar_compare(op)
        compared = 2 if scalar is None else 1
        if least is not None:
            lanes.insert(compared, region.lanes(least))
        lanes.append(region.lanes(buffer(op.result)))
        cmp = hw.CmpMode(op.cmp.data) if scalar is None else scalar.cmp
        integers = as_tile(op.lhs).element_type == i32
        # i32 lanes compare for eq only (ascend_hw.vcmp): ne selects the other
        # way; a <= b is min(a, b) == a, a >= b is min(a, b) == b, and lt / gt
        # select the other way of ge / le
        swapped = integers and cmp in (hw.CmpMode.NE, hw.CmpMode.LT, hw.CmpMode.GT)
        on_min = cmp in (hw.CmpMode.LE, hw.CmpMode.GT)  # min == lhs (else rhs)

        def make(views: Sequence[SSAValue], props: dict[str, object]) -> Operation:
            given = {k: v for k, v in props.items() if v is not None}

            def at(*indices: int) -> dict[str, object]:
                """The props of an instruction on the lanes `indices`."""
                picked = dict(given)
                for key in ("blk_stride", "rep_stride"):
                    if key in given:
                        strides = given[key]
                        assert isinstance(strides, list)
                        picked[key] = [strides[i] for i in indices]
                return picked

            first = compared + (least is not None)  # on_true's lanes
            on_true, on_false, d = views[first:]
            selected = [first, first + 1, first + 2]
            if swapped:  # the lanes and their strides
                on_true, on_false = on_false, on_true
                selected[:2] = selected[1::-1]
            if least is None:
                mode = hw.CmpMode.EQ if integers else cmp
                if scalar is None:
                    em.emit(hw.VCmpOp(mode, views[0], views[1], bits, **at(0, 1)))  # type: ignore[arg-type]
                else:
                    em.emit(hw.VCmpsOp(mode, views[0], scalar.scalar, bits, **at(0)))  # type: ignore[arg-type]
            elif scalar is None:
                m = compared
                em.emit(hw.VMinOp(views[0], views[1], views[m], **at(0, 1, m)))  # type: ignore[arg-type]
                other = 0 if on_min else 1
                em.emit(
                    hw.VCmpOp(
                        hw.CmpMode.EQ, views[m], views[other], bits, **at(m, other)
                    )
                )  # type: ignore[arg-type]
            else:
                m = compared
                em.emit(hw.VMinsOp(views[0], scalar.scalar, views[m], **at(0, m)))  # type: ignore[arg-type]
                if on_min:
                    em.emit(
                        hw.VCmpOp(hw.CmpMode.EQ, views[m], views[0], bits, **at(m, 0))
                    )  # type: ignore[arg-type]
                else:
                    em.emit(
                        hw.VCmpsOp(
                            hw.CmpMode.EQ, views[m], scalar.scalar, bits, **at(m)
                        )
                    )  # type: ignore[arg-type]
            return hw.VSelectOp(bits, on_true, on_false, d, **at(*selected))  # type: ignore[arg-type]

        em.vector(make, lanes, region.rows, 0, region.cols)

    def _ordered_integers(self, op: tile.SelectOp) -> bool:
        """An ordered compare of i32 lanes: `vmin` into a scratch first."""
        return as_tile(op.lhs).element_type == i32 and op.cmp.data not in (
            hw.CmpMode.EQ,
            hw.CmpMode.NE,
        )


class BroadcastStrategy(TileOpStrategy):
    """`tile.broadcast`: a copy from a row, column or single value operand.

    `broadcast`: `vcopy` from the block-broadcast (`vbrcb`) or row-vector operand
    """

    ops = (tile.BroadcastOp,)

    def scratch(self, op: Operation) -> list[hw.BufferType]:
        assert isinstance(op, tile.BroadcastOp)
        return operand_scratch(self, op.source, op.result)

    def scratch_terms(self, op: Operation, terms: Terms) -> list[Term]:
        assert isinstance(op, tile.BroadcastOp)
        e = tile.element_bytes(as_tile(op.result).element_type)
        return block_operand_terms(self, terms, op.source, op.result, e)

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.BroadcastOp)
        self.check_vector_shape(op, op.result)
        self._broadcast(op, em, buffer, scratch)

    def _broadcast(
        self,
        op: tile.BroadcastOp,
        em: Emitter,
        buffer: BufferOf,
        scratch: list[SSAValue],
    ) -> None:
        region = self.region(op.result)
        kind, count = self.operand_lanes(op.source, op.result)
        if kind == Kind.FULL:
            source = region.lanes(buffer(op.source))
        elif kind == Kind.ROW_VECTOR:
            source = Lanes(buffer(op.source), kind)
        else:
            source = Lanes(
                block_operand(self, em, op.source, count, buffer, scratch), kind
            )
        em.vector(
            unary(hw.VCopyOp),
            [source, region.lanes(buffer(op.result))],
            region.rows,
            0,
            region.cols,
        )
