"""`tile.cast`: element type conversions, rounding once as `tv.cast` does.

One `vcast` where the hardware has the conversion; otherwise a plan of steps
(`cast_plan`): exact widenings, a clamp, the low bits of an integer
(`LowHalves`, `WrapToI8`) or a rounding computed exactly in f32 (`I32ToBf16`),
over chunks of the region small enough that the intermediates stay a fraction
of UB.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import bf16, f16, f32, i8, i16, i32
from xdsl.ir import Attribute, Operation, SSAValue

from pypto_mlir.diagnostics import op_error
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.dialects.tile import MemorySpace
from pypto_mlir.passes.hw_isel.emitter import (
    BufferOf,
    Emitter,
    Lanes,
    MakeOp,
    Region,
    as_buffer,
    as_tile,
    binary,
    cast,
    fill_offsets,
    lane_mask,
    round_up,
    scalar_op,
    unary,
)
from pypto_mlir.passes.hw_isel.strategy import IselContext, Term, Terms, TileOpStrategy

EXACT_CASTS: frozenset[tuple[Attribute, Attribute]] = frozenset(
    pair for pair, modes in hw.CAST_MODES.items() if modes == (hw.RoundMode.NONE,)
)
"""vcast conversions that are exact (round mode none)."""


@dataclass(frozen=True)
class Convert:
    """One `vcast`."""

    source: Attribute
    dest: Attribute
    mode: hw.RoundMode


@dataclass(frozen=True)
class Clamp:
    """Saturate integers to [low, high] in place (`vmaxs`, `vmins`)."""

    type: Attribute
    low: int
    high: int

    @property
    def source(self) -> Attribute:
        return self.type

    @property
    def dest(self) -> Attribute:
        return self.type


@dataclass(frozen=True)
class LowHalves:
    """i32 -> i16 keeping the low 16 bits (int -> int casts wrap): a 16-bit
    `vgather` of the even halfwords of the i32 bytes (little-endian)."""

    source: Attribute = i32
    dest: Attribute = i16


@dataclass(frozen=True)
class WrapToI8:
    """i16 -> i8 keeping the low 8 bits, `x - 256 floor((x + 128) / 256)`,
    computed exactly in f32 (vcast has no i16 -> f16 or i16 -> i8; f16 -> i8
    then converts the value, in [-128, 127])."""

    source: Attribute = i16
    dest: Attribute = i8


@dataclass(frozen=True)
class I32ToBf16:
    """i32 -> bf16 rounded once: `t = trunc_f32(x)` loses `e = x - t`; when
    `e != 0`, x lies strictly beyond t (bf16 midpoints are f32 values), so the
    result is t rounded with ties away from zero, else t rounded to even."""

    source: Attribute = i32
    dest: Attribute = bf16


CastStep = Convert | Clamp | LowHalves | WrapToI8 | I32ToBf16


@dataclass(frozen=True)
class _CastLayout:
    """The scratch buffers of a cast: their types, the one each step writes
    (None: the result), and the temporaries of each composite step."""

    types: list[hw.BufferType]
    outputs: list[int | None]
    internals: list[list[int]]
    tables: list[int] = field(default_factory=list[int])
    """The types that are offset tables (the others hold a chunk's values)."""


@dataclass(frozen=True)
class _CastChunks:
    """The parts of a cast's region converted in turn: (first row, rows, first
    column, columns) each; intermediates hold `rows` rows `pitch` apart."""

    parts: list[tuple[int, int, int, int]]
    rows: int
    pitch: int


def cast_plan(
    source: Attribute,
    dest: Attribute,
    round_mode: tile.RoundMode = tile.RoundMode.TRUNC,
) -> list[CastStep] | None:
    """The steps that implement `tile.cast` source -> dest, rounding once as
    `tv.cast` does: one vcast; exact widenings (to f16 for i8, to f32 for
    i16 and bf16) then a conversion; float -> narrow int through i32 with a
    clamp (f32 -> i32 saturates, then the range of the result); int -> narrow
    int by keeping the low bits. i32 -> f16 goes through f32, which is exact
    for every i32 that f16 does not round to infinity. None: no such steps."""

    def convert(a: Attribute, b: Attribute) -> Convert:
        return Convert(a, b, cast_mode(a, b, round_mode))

    if source == dest:
        return []
    if (source, dest) in hw.CAST_MODES:
        return [convert(source, dest)]
    if source == bf16 or (tile.is_float(source) and tile.is_float(dest)):
        rest = cast_plan(f32, dest, round_mode)
        return None if rest is None else [convert(source, f32), *rest]
    if source == f32 and dest in (i8, i16):
        low, high = (-(2**15), 2**15 - 1) if dest == i16 else (-128, 127)
        steps: list[CastStep] = [convert(f32, i32), Clamp(i32, low, high)]
        if dest == i16:
            return [*steps, LowHalves()]
        return [
            *steps,  # the clamped integer, exact in f32 and f16
            Convert(i32, f32, hw.RoundMode.RINT),
            Convert(f32, f16, hw.RoundMode.RINT),
            Convert(f16, i8, hw.RoundMode.TRUNC),
        ]
    if tile.is_float(source):
        return None
    if (source, dest) == (i32, bf16):
        return [I32ToBf16()]
    if tile.is_float(dest):
        middle = f16 if source == i8 else f32
        rest = cast_plan(middle, dest, round_mode)
        return None if rest is None else [convert(source, middle), *rest]
    if source == i8:  # exact through f16
        return [convert(i8, f16), Convert(f16, dest, hw.RoundMode.TRUNC)]
    if (source, dest) == (i16, i32):
        return [convert(i16, f32), Convert(f32, i32, hw.RoundMode.TRUNC)]
    if (source, dest) == (i16, i8):
        return [WrapToI8()]
    if source == i32:
        return [LowHalves()] + ([WrapToI8()] if dest == i8 else [])
    return None


def cast_mode(
    source: Attribute, dest: Attribute, round_mode: tile.RoundMode
) -> hw.RoundMode:
    """The vcast round mode of one conversion step of `tile.cast`."""
    if (source, dest) in EXACT_CASTS:
        return hw.RoundMode.NONE
    if tile.is_float(source) and not tile.is_float(dest):
        return hw.RoundMode(str(round_mode))
    return hw.RoundMode.RINT


def low_halves(
    isel: IselContext, em: Emitter, x: Lanes, y: Lanes, region: Region, table: SSAValue
) -> None:
    """y (i16) = the low halfword of each x (i32) over `region`'s rows and
    columns: a gather of every other halfword of x's bytes, `lanes` results
    per instruction."""
    lanes = isel.lanes_for(i16)
    rows, cols = region.rows, region.cols
    if rows == 1 or (x.pitch == cols and y.pitch == cols):
        rows, cols = 1, rows * cols
    fill_offsets(em, table, min(lanes, cols), 4)
    halves = em.alias(x.buffer, i16)
    for row in range(rows):
        for column in range(0, cols, lanes):
            start = x.offset + row * x.pitch + column
            em.emit(
                hw.VGatherOp(
                    em.subview(halves, 2 * start),
                    table,
                    em.subview(y.buffer, y.offset + row * y.pitch + column),
                    mask=lane_mask(0, min(lanes, cols - column), lanes),
                )
            )


def wrap_to_i8(
    em: Emitter,
    x: Lanes,
    y: Lanes,
    region: Region,
    temporaries: Sequence[SSAValue],
) -> None:
    """y (i8) = x (i16) wrapped: `x - 256 q` with `q = floor((x + 128) / 256)`,
    every step exact in f32 (and the result exact in f16)."""
    a, b = (region.lanes(t) for t in temporaries)
    q = region.lanes(em.alias(temporaries[1], i32))
    h = region.lanes(em.alias(temporaries[0], f16))

    def step(make: MakeOp, *lanes: Lanes) -> None:
        em.vector(make, lanes, region.rows, 0, region.cols)

    step(cast(hw.RoundMode.NONE), x, a)
    step(scalar_op(hw.VAddsOp, em.scalar(128.0, f32)), a, b)
    step(scalar_op(hw.VMulsOp, em.scalar(1 / 256, f32)), b, b)
    step(cast(hw.RoundMode.FLOOR), b, q)
    step(cast(hw.RoundMode.RINT), q, b)
    step(scalar_op(hw.VMulsOp, em.scalar(-256.0, f32)), b, b)
    step(binary(hw.VAddOp), a, b, b)
    step(cast(hw.RoundMode.RINT), b, h)
    step(cast(hw.RoundMode.TRUNC), h, y)


def i32_to_bf16(
    em: Emitter,
    x: Lanes,
    y: Lanes,
    region: Region,
    temporaries: Sequence[SSAValue],
) -> None:
    """y (bf16) = x (i32) rounded once (`I32ToBf16`): with `t = trunc_f32(x)`,
    `m = min(|x - t|, 1)`, `y = rint(t) + m (round(t) - rint(t))`, exact in f32."""
    t, e, other, rounded = (region.lanes(v) for v in temporaries)
    m = region.lanes(em.alias(temporaries[1], f32))
    away = region.lanes(em.alias(temporaries[2], f32))

    def step(make: MakeOp, *lanes: Lanes) -> None:
        em.vector(make, lanes, region.rows, 0, region.cols)

    step(cast(hw.RoundMode.TRUNC), x, t)
    step(cast(hw.RoundMode.TRUNC), t, e)
    step(binary(hw.VSubOp), x, e, e)
    step(scalar_op(hw.VMulsOp, em.scalar(-1, i32)), e, other)
    step(binary(hw.VMaxOp), e, other, e)
    step(scalar_op(hw.VMinsOp, em.scalar(1, i32)), e, e)
    step(cast(hw.RoundMode.RINT), e, m)
    step(cast(hw.RoundMode.ROUND), t, rounded)
    step(cast(hw.RoundMode.NONE), rounded, away)
    step(cast(hw.RoundMode.RINT), t, rounded)
    step(cast(hw.RoundMode.NONE), rounded, t)
    step(binary(hw.VSubOp), away, t, away)
    step(binary(hw.VMulOp), away, m, away)
    step(binary(hw.VAddOp), t, away, t)
    step(cast(hw.RoundMode.RINT), t, y)


class CastStrategy(TileOpStrategy):
    """`tile.cast`: its plan's steps over chunks of the region.

    `cast`: every pair, rounding once as `tv.cast` (`cast_plan`): a `vcast` pair
    directly (round mode `none` for exact widenings, `rint` for float/int → float,
    the op's mode for float → int); else exact widenings (i8 → f16, i16/bf16 → f32)
    then one conversion; i32 → f16 through f32 (exact for every i32 f16 does not
    overflow); f32 → i16/i8 through i32 (saturating) and a `vmaxs`/`vmins` clamp to
    the result's range (i8 then exactly through f32 and f16); int → narrower int
    keeps the low bits: i32 → i16 a 16-bit `vgather` of the even halfwords, i16 → i8
    `x − 256 floor((x + 128) / 256)` exact in f32 (`vcast floor`), then f16 → i8;
    i32 → bf16 from `t = trunc_f32(x)`: `rint(t) + m (round(t) − rint(t))` with `m =
    min(|x − t|, 1)` (x beyond a tie of t rounds away). Intermediates live in
    scratch buffers (a same-width conversion overwrites its input); the region is
    converted in chunks (groups of rows, or column chunks of a long row) whose
    intermediates take at most 1/32 of UB or one repeat (`_cast_chunks`), so a cast
    needs little memory besides its tiles
    """

    ops = (tile.CastOp,)

    def scratch(self, op: Operation) -> list[hw.BufferType]:
        assert isinstance(op, tile.CastOp)
        return self._cast_layout(op).types

    def scratch_terms(self, op: Operation, terms: Terms) -> list[Term]:
        assert isinstance(op, tile.CastOp)
        # Chunked (`_cast_chunks`): at most the budget per intermediate.
        budget = self._cast_budget()
        layout = self._cast_layout(op)
        return [
            terms.constant(
                op.source,
                t.byte_size() if i in layout.tables else budget * t.element_bytes,
            )
            for i, t in enumerate(layout.types)
        ]

    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        assert isinstance(op, tile.CastOp)
        self._cast(op, em, buffer, scratch)

    def _cast_plan(self, op: tile.CastOp) -> list[CastStep]:
        source, result = as_tile(op.source), as_tile(op.result)
        plan = cast_plan(source.element_type, result.element_type, op.round_mode)
        if plan is None:
            raise op_error(
                op,
                f"ascend_hw has no conversion {source.element_type} -> "
                f"{result.element_type}",
            )
        return plan

    def _cast_budget(self) -> int:
        """Elements of a cast's chunk: f32 intermediates of at most 1/32 of UB (or
        a repeat), a multiple of the f32 lanes."""
        ub = self.target.memories[str(MemorySpace.UB)].size
        assert ub is not None
        budget = max(self.target.vector.repeat_bytes, ub // 32) // 4
        unit = self.lanes_for(f32)
        return max(unit, budget - budget % unit)

    def _cast_chunks(self, op: tile.CastOp) -> _CastChunks:
        """The parts of a cast's region converted one after the other, so that
        its intermediate buffers stay small (at most 1/32 of UB or a repeat):
        groups of whole rows, or column chunks of one row when a row is longer;
        a single vcast, which has none, converts the region at once."""
        region = self.region(op.result)
        rows, cols = region.rows, region.cols
        source, result = as_tile(op.source), as_tile(op.result)
        plan = cast_plan(source.element_type, result.element_type, op.round_mode)
        if plan is not None and len(plan) == 1 and isinstance(plan[0], Convert):
            # One vcast has no intermediates: the region at once.
            return _CastChunks([(0, rows, 0, cols)], rows, region.pitch)
        budget = self._cast_budget()
        unit = self.lanes_for(f32)  # aligns chunk starts for every element type
        if rows == 1 or region.pitch == cols:
            count = rows * cols
            width = min(count, budget)
            return _CastChunks(
                [(0, 1, c, min(width, count - c)) for c in range(0, count, width)],
                1,
                width,
            )
        if region.pitch <= budget:
            group = min(rows, budget // region.pitch)
            return _CastChunks(
                [(r, min(group, rows - r), 0, cols) for r in range(0, rows, group)],
                group,
                region.pitch,
            )
        width = min(budget, round_up(cols, unit))
        return _CastChunks(
            [
                (r, 1, c, min(width, cols - c))
                for r in range(rows)
                for c in range(0, cols, width)
            ],
            1,
            width,
        )

    def _cast_layout(self, op: tile.CastOp) -> _CastLayout:
        """Where each step of a cast writes (a scratch buffer of a chunk, or the
        result for the last step; a same-width conversion of an intermediate
        writes over it, a clamp works in place) and the temporaries of composite
        steps."""
        source, result = as_tile(op.source), as_tile(op.result)
        plan = cast_plan(source.element_type, result.element_type, op.round_mode) or []
        chunks = self._cast_chunks(op)
        count = chunks.rows * chunks.pitch
        ub = str(MemorySpace.UB)
        layout = _CastLayout([], [], [])

        def new(element_type: Attribute, size: int = count) -> int:
            layout.types.append(hw.BufferType([size], element_type, ub))
            return len(layout.types) - 1

        previous: int | None = None  # the scratch holding the last step's output
        for number, step in enumerate(plan):
            last = number == len(plan) - 1
            if isinstance(step, Clamp):
                output = previous
            elif last:
                output = None
            elif (
                isinstance(step, Convert)
                and previous is not None
                and tile.element_bytes(layout.types[previous].element_type)
                == tile.element_bytes(step.dest)
            ):
                output = previous  # in place: each repeat reads before it writes
            else:
                output = new(step.dest)
            match step:
                case LowHalves():
                    internal = [new(i32, self.lanes_for(i16))]
                    layout.tables.append(internal[0])
                case WrapToI8():
                    internal = [new(f32), new(f32)]
                case I32ToBf16():
                    internal = [new(f32), new(i32), new(i32), new(bf16)]
                case _:
                    internal = []
            layout.outputs.append(output)
            layout.internals.append(internal)
            previous = output
        return layout

    def _cast(
        self, op: tile.CastOp, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> None:
        plan = self._cast_plan(op)
        region = self.region(op.result)
        if not plan:
            em.vector(
                unary(hw.VCopyOp),
                [region.lanes(buffer(op.source)), region.lanes(buffer(op.result))],
                region.rows,
                0,
                region.cols,
            )
            return
        layout = self._cast_layout(op)
        chunks = self._cast_chunks(op)
        for row, rows, column, cols in chunks.parts:
            self._cast_part(
                op,
                em,
                buffer,
                scratch,
                layout,
                row * region.pitch + column,
                Region(rows, cols, chunks.pitch),
            )

    def _cast_part(
        self,
        op: tile.CastOp,
        em: Emitter,
        buffer: BufferOf,
        scratch: list[SSAValue],
        layout: _CastLayout,
        offset: int,
        part: Region,
    ) -> None:
        """Convert the `part.rows` x `part.cols` elements from element `offset` of
        the region; `part.pitch` is the intermediates' row pitch."""
        region = self.region(op.result)
        rows, cols = part.rows, part.cols
        current = region.lanes(buffer(op.source), offset)

        def lanes_of(index: int | None, element_type: Attribute) -> Lanes:
            if index is None:
                return region.lanes(buffer(op.result), offset)
            target = scratch[index]
            if as_buffer(target).element_type != element_type:
                target = em.alias(target, element_type)
            return part.lanes(target)

        for step, output, internal in zip(
            self._cast_plan(op), layout.outputs, layout.internals, strict=True
        ):
            out = lanes_of(output, step.dest)
            temporaries = [scratch[i] for i in internal]
            match step:
                case Convert():
                    em.vector(cast(step.mode), [current, out], rows, 0, cols)
                case Clamp():
                    for op_type, bound in (
                        (hw.VMaxsOp, step.low),
                        (hw.VMinsOp, step.high),
                    ):
                        em.vector(
                            scalar_op(op_type, em.scalar(bound, step.type)),
                            [out, out],
                            rows,
                            0,
                            cols,
                        )
                case LowHalves():
                    low_halves(self, em, current, out, part, temporaries[0])
                case WrapToI8():
                    wrap_to_i8(em, current, out, part, temporaries)
                case I32ToBf16():
                    i32_to_bf16(em, current, out, part, temporaries)
            current = out
