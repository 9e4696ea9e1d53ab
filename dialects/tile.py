"""The `tile` dialect: level 2 of pypto-mlir.

Work is a loop nest (`scf.for`) over tiles. A tile is an SSA value living in a
named on-chip memory (`ub`, `l1`, `l0a`, `l0b`, `l0c`) with a static physical
shape and a valid shape that may be dynamic: tails at tensor edges use a tile
whose valid region is smaller than its physical one. GM operands are builtin
`memref` values in destination-passing style. There are no addresses, pipes or
synchronisation at this level.

Conventions shared by every op (docs/tile.md has the full reference):

- Ops compute on the valid region only. Outside it a tile's contents are
  undefined, unless its type carries a pad value (`pad = zero|min|max`), in
  which case every element outside the valid region holds that value.
- Valid extents written `?` in a type are only known at run time. Ops that make
  a tile from scratch (`load`, `fill`, `broadcast`) take one `index` operand
  per `?` of their result; every other op passes its operands' extents on.
- Vector ops run on `ub` tiles in the `nd` layout; the cube reads `l0a`/`l0b`
  tiles and writes `l0c` tiles, all in the fractal `nz` layout.
- When the enclosing `builtin.module` names a target (`pypto.target`), every
  tile an op produces must fit its memory, and `nd` rows must respect the
  memory's alignment.

One module for the whole dialect, as xDSL's own dialects are: its length is the
ops' docstrings and verifiers, not several jobs.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from enum import auto
from typing import ClassVar, cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    ArrayAttr,
    ContainerType,
    DenseArrayBase,
    IndexType,
    IntAttr,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    ShapedType,
    UnitAttr,
    bf16,
    f16,
    f32,
    i16,
    i32,
    i64,
)
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import (
    Attribute,
    Dialect,
    Operation,
    ParametrizedAttribute,
    SpacedOpaqueSyntaxAttribute,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    VarConstraint,
    base,
    irdl_attr_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.irdl.declarative_assembly_format import (
    CustomDirective,
    ParsingState,
    PrintingState,
    TypeDirective,
    irdl_custom_directive,
)
from xdsl.parser import AttrParser, Parser
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.printer import Printer
from xdsl.traits import (
    HasCanonicalizationPatternsTrait,
    MemoryReadEffect,
    MemoryWriteEffect,
    OpTrait,
    Pure,
)
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from pypto_mlir.dialects import common
from pypto_mlir.dialects.common import (
    MATMUL_TYPES,
    VECTOR_ARITH_TYPES,
    VECTOR_FLOAT_TYPES,
    CmpMode,
    Layout,
    irdl_op_definition,
    is_float,
    load_target,
    names,
    target_name_of,
    target_of,
)
from pypto_mlir.dialects.common import (
    TARGET_ATTR as TARGET_ATTR,
)
from pypto_mlir.targets import DEFAULT_TARGET, Target

# --------------------------------------------------------------------------------------
# Enumerations
# --------------------------------------------------------------------------------------


class MemorySpace(StrEnum):
    """The on-chip memories a tile can live in."""

    UB = auto()
    L1 = auto()
    L0A = auto()
    L0B = auto()
    L0C = auto()


class PadValue(StrEnum):
    """The value held outside the valid region: 0, the lowest or the highest value.

    `min` is -inf for floats and the smallest integer for integers (the neutral
    element of a max-reduction); `max` is +inf or the largest integer.
    """

    ZERO = auto()
    MIN = auto()
    MAX = auto()


class RoundMode(StrEnum):
    """How `tile.cast` rounds a float to an integer."""

    RINT = auto()
    """To nearest, ties to even."""
    ROUND = auto()
    """To nearest, ties away from zero."""
    FLOOR = auto()
    CEIL = auto()
    TRUNC = auto()


@irdl_attr_definition
class MemorySpaceAttr(EnumAttribute[MemorySpace], SpacedOpaqueSyntaxAttribute):
    name = "tile.space"


@irdl_attr_definition
class LayoutAttr(EnumAttribute[Layout], SpacedOpaqueSyntaxAttribute):
    name = "tile.layout"


@irdl_attr_definition
class PadValueAttr(EnumAttribute[PadValue], SpacedOpaqueSyntaxAttribute):
    name = "tile.pad"


@irdl_attr_definition
class RoundModeAttr(EnumAttribute[RoundMode], SpacedOpaqueSyntaxAttribute):
    name = "tile.round"


# --------------------------------------------------------------------------------------
# Element types and the fractal layout
# --------------------------------------------------------------------------------------

DEFAULT_LAYOUT: dict[MemorySpace, Layout] = {
    MemorySpace.UB: Layout.ND,
    MemorySpace.L1: Layout.ND,
    MemorySpace.L0A: Layout.NZ,
    MemorySpace.L0B: Layout.NZ,
    MemorySpace.L0C: Layout.NZ,
}
"""The layout a tile type has when its text does not name one."""


def element_bytes(element_type: Attribute) -> int:
    """Size in bytes of one element of a tile element type."""
    return common.element_bytes(element_type, "a tile element type")


def fractal_edge(element_type: Attribute, target: Target) -> int:
    """Both dims of an `nz` tile are multiples of this: the rows of one fractal
    (`cube.fractal_m`, 16 on Atlas A2, where it equals `fractal_n`) or the elements
    of one fractal row (`cube.fractal_k_bytes` / element size: 32 for 1-byte types),
    whichever is more."""
    cube = target.cube
    return max(cube.fractal_m, cube.fractal_k_bytes // element_bytes(element_type))


# --------------------------------------------------------------------------------------
# The tile type
# --------------------------------------------------------------------------------------


def _int_array(values: Sequence[int] | ArrayAttr[IntAttr]) -> ArrayAttr[IntAttr]:
    if isinstance(values, ArrayAttr):
        return values
    return ArrayAttr(IntAttr(v) for v in values)


_UNCHANGED = NoneAttr()
"""Default of `TileType.with_(pad=...)`: keep the pad value."""


@irdl_attr_definition
class TileType(
    ParametrizedAttribute, TypeAttribute, ShapedType, ContainerType[Attribute]
):
    """A tile: `!tile.tile<64x1024xf16, ub, valid = [?, 1024], layout = nd, pad = zero>`.

    `shape` is the static physical shape. `valid` has one entry per dim, either
    static (1 <= v <= shape) or `?` (DYNAMIC_INDEX), and defaults to `shape`.
    `layout` defaults to `nd` in `ub`/`l1` and `nz` in `l0a`/`l0b`/`l0c`. `pad`,
    when present, is the value of every element outside the valid region.
    """

    name = "tile.tile"

    shape: ArrayAttr[IntAttr]
    element_type: Attribute
    space: MemorySpaceAttr
    valid: ArrayAttr[IntAttr]
    layout: LayoutAttr
    pad: PadValueAttr | NoneAttr

    def __init__(
        self,
        shape: Sequence[int] | ArrayAttr[IntAttr],
        element_type: Attribute,
        space: MemorySpace | str | MemorySpaceAttr,
        valid: Sequence[int] | ArrayAttr[IntAttr] | None = None,
        layout: Layout | str | LayoutAttr | None = None,
        pad: PadValue | str | PadValueAttr | None = None,
    ):
        shape = _int_array(shape)
        if not isinstance(space, MemorySpaceAttr):
            space = MemorySpaceAttr(MemorySpace(space))
        if valid is None:
            valid = shape
        if layout is None:
            layout = DEFAULT_LAYOUT[space.data]
        if not isinstance(layout, LayoutAttr):
            layout = LayoutAttr(Layout(layout))
        if pad is None:
            pad_attr: PadValueAttr | NoneAttr = NoneAttr()
        elif isinstance(pad, PadValueAttr):
            pad_attr = pad
        else:
            pad_attr = PadValueAttr(PadValue(pad))
        super().__init__(
            shape, element_type, space, _int_array(valid), layout, pad_attr
        )

    # Accessors ---------------------------------------------------------------------

    def get_num_dims(self) -> int:
        return len(self.shape.data)

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    def get_element_type(self) -> Attribute:
        return self.element_type

    def get_valid(self) -> tuple[int, ...]:
        """Valid extents; DYNAMIC_INDEX where only known at run time."""
        return tuple(d.data for d in self.valid.data)

    @property
    def memory_space(self) -> MemorySpace:
        return self.space.data

    @property
    def layout_kind(self) -> Layout:
        return self.layout.data

    @property
    def pad_value(self) -> PadValue | None:
        return None if isinstance(self.pad, NoneAttr) else self.pad.data

    def num_dynamic_valid(self) -> int:
        return sum(v == DYNAMIC_INDEX for v in self.get_valid())

    def is_fully_valid(self) -> bool:
        """True when the valid region is statically the whole tile."""
        return self.get_valid() == self.get_shape()

    def byte_size(self) -> int:
        return self.element_count() * element_bytes(self.element_type)

    def with_(
        self,
        *,
        shape: Sequence[int] | None = None,
        element_type: Attribute | None = None,
        space: MemorySpace | str | None = None,
        valid: Sequence[int] | None = None,
        layout: Layout | str | None = None,
        pad: PadValue | str | None | NoneAttr = _UNCHANGED,
    ) -> TileType:
        """A copy with the given parameters changed.

        A new `shape` without a new `valid` makes the copy fully valid; a new
        `space` without a `layout` takes that space's default layout; `pad=None`
        removes the pad value, leaving `pad` out keeps it.
        """
        new_space = self.memory_space if space is None else MemorySpace(space)
        if layout is None:
            # Keep the layout unless the space changes to one with another default.
            layout = self.layout_kind if space is None else DEFAULT_LAYOUT[new_space]
        return TileType(
            self.get_shape() if shape is None else shape,
            self.element_type if element_type is None else element_type,
            new_space,
            (self.get_valid() if shape is None else shape) if valid is None else valid,
            layout,
            self.pad_value if pad is _UNCHANGED else pad,
        )

    def without_pad(self) -> TileType:
        return self.with_(pad=None) if self.pad_value is not None else self

    # Verification --------------------------------------------------------------------

    def verify(self) -> None:
        shape = self.get_shape()
        valid = self.get_valid()
        if not shape:
            raise VerifyException("a tile has at least one dimension")
        if any(d <= 0 for d in shape):
            raise VerifyException(
                f"tile dimensions must be static and positive, got {list(shape)}"
            )
        if len(valid) != len(shape):
            raise VerifyException(
                f"tile valid shape has {len(valid)} dims but the shape has {len(shape)}"
            )
        for dim, (v, s) in enumerate(zip(valid, shape, strict=True)):
            if v != DYNAMIC_INDEX and not 1 <= v <= s:
                raise VerifyException(
                    f"valid extent {v} of dim {dim} is outside [1, {s}]"
                )
        if self.element_type not in common.ELEMENT_TYPES:
            raise VerifyException(
                f"tile element type must be one of {names(common.ELEMENT_TYPES)}, "
                f"got {self.element_type}"
            )
        space, layout = self.memory_space, self.layout_kind
        if space == MemorySpace.UB and layout != Layout.ND:
            raise VerifyException("ub tiles use the nd layout")
        if space not in (MemorySpace.UB, MemorySpace.L1) and layout != Layout.NZ:
            raise VerifyException(f"{space} tiles use the nz layout")
        if layout == Layout.NZ:
            if len(shape) != 2:
                raise VerifyException("nz tiles are two-dimensional")
            # A type is verified out of context: against the default target's
            # fractal (ops check against their module's target).
            edge = fractal_edge(self.element_type, load_target(DEFAULT_TARGET))
            if any(d % edge for d in shape):
                raise VerifyException(
                    f"nz tile shape {'x'.join(map(str, shape))} is not made of "
                    f"{edge}x{edge} fractals for {self.element_type}"
                )

    # Syntax ----------------------------------------------------------------------------

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> list[Attribute]:
        with parser.in_angle_brackets():
            shape, element_type = parser.parse_ranked_shape()
            if any(d == DYNAMIC_INDEX for d in shape):
                parser.raise_error("tile shapes are static; use valid = [...] for ?")
            parser.parse_punctuation(",")
            space = MemorySpace(parser.parse_keyword_in(list(MemorySpace)))
            valid: list[int] | None = None
            layout: Layout | None = None
            pad: PadValue | None = None
            while parser.parse_optional_punctuation(",") is not None:
                key = parser.parse_keyword_in(("valid", "layout", "pad"))
                parser.parse_punctuation("=")
                if key == "valid" and valid is None:
                    valid = parser.parse_comma_separated_list(
                        parser.Delimiter.SQUARE, parser.parse_shape_dimension
                    )
                elif key == "layout" and layout is None:
                    layout = Layout(parser.parse_keyword_in(list(Layout)))
                elif key == "pad" and pad is None:
                    pad = PadValue(parser.parse_keyword_in(list(PadValue)))
                else:
                    parser.raise_error(f"`{key}` is given twice")
        return list(TileType(shape, element_type, space, valid, layout, pad).parameters)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_dimension_list(self.get_shape())
            printer.print_string("x")
            printer.print_attribute(self.element_type)
            printer.print_string(f", {self.memory_space}")
            if not self.is_fully_valid():
                printer.print_string(", valid = [")
                printer.print_list(
                    self.get_valid(),
                    lambda v: printer.print_string(
                        "?" if v == DYNAMIC_INDEX else str(v)
                    ),
                )
                printer.print_string("]")
            if self.layout_kind != DEFAULT_LAYOUT[self.memory_space]:
                printer.print_string(f", layout = {self.layout_kind}")
            if self.pad_value is not None:
                printer.print_string(f", pad = {self.pad_value}")


# --------------------------------------------------------------------------------------
# Target capacity
# --------------------------------------------------------------------------------------


def verify_tile_fits(tile: TileType, target_name: str) -> None:
    """Raise if `tile` alone does not fit its memory of the target, or is misaligned."""
    try:
        target = load_target(target_name)
    except Exception as e:  # the loader names the file and the bad key
        raise VerifyException(f"cannot load target '{target_name}': {e}") from e
    space = str(tile.memory_space)
    memory = target.memories[space]
    needed = tile.byte_size()
    if needed > memory.size:
        raise VerifyException(
            f"{tile} needs {needed} bytes but {space} of target '{target_name}' "
            f"holds {memory.size} bytes"
        )
    shape = tile.get_shape()
    if tile.layout_kind == Layout.ND and shape[-1] > 1:
        row_bytes = shape[-1] * element_bytes(tile.element_type)
        if row_bytes % memory.alignment:
            raise VerifyException(
                f"{tile} has rows of {row_bytes} bytes, not a multiple of the "
                f"{memory.alignment}-byte alignment of {space} on target "
                f"'{target_name}'; pad the physical shape and use a valid shape"
            )


class TilesFitTarget(OpTrait):
    """Every tile the op produces fits its memory of the module's target, if any."""

    def verify(self, op: Operation) -> None:
        tiles = [r.type for r in op.results if isinstance(r.type, TileType)]
        if not tiles:
            return
        target_name = target_name_of(op)
        if target_name is None:
            return
        for tile in tiles:
            verify_tile_fits(tile, target_name)


# --------------------------------------------------------------------------------------
# Shared verification helpers
# --------------------------------------------------------------------------------------


def _tile_type(value: SSAValue) -> TileType:
    return cast(TileType, value.type)


def _verify_space(
    op: Operation, what: str, tile: TileType, spaces: Sequence[MemorySpace]
) -> None:
    if tile.memory_space not in spaces:
        raise VerifyException(
            f"expects {what} in {' or '.join(spaces)}, got {tile.memory_space}"
        )


def _verify_element_type(
    op: Operation, what: str, element_type: Attribute, allowed: Sequence[Attribute]
) -> None:
    if element_type not in allowed:
        raise VerifyException(
            f"does not support element type {element_type} for {what} "
            f"(expected {names(allowed)})"
        )


def _verify_vector_tile(op: Operation, what: str, tile: TileType) -> None:
    _verify_space(op, what, tile, (MemorySpace.UB,))


def _verify_result(op: Operation, actual: Attribute, expected: TileType) -> None:
    if actual != expected:
        raise VerifyException(f"result type must be {expected}, got {actual}")


def _verify_dynamic_operands(
    op: Operation, operands: Sequence[SSAValue], expected: int, what: str
) -> None:
    if len(operands) != expected:
        raise VerifyException(
            f"expects {expected} valid-extent operand(s), one per ? in {what}, "
            f"got {len(operands)}"
        )


# --------------------------------------------------------------------------------------
# Data movement: load, store, move
# --------------------------------------------------------------------------------------


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Copy a window of a GM memref into a new tile (MTE2: GM -> ub or l1).

    The window starts at `indices` (one per memref dim) and spans the tile's
    valid extents; a memref of higher rank than the tile contributes extent 1
    in its leading dims. Nothing outside the window is read, and the window must
    lie inside the memref. The element types agree. A result with `layout = nz`
    (l1 only) models the nd2nz conversion on the way into L1; a result with a
    pad value gets that value outside the valid region.

        %t = tile.load %x[%i, %c0] valid [%rows] : memref<100x1024xf16>
               -> !tile.tile<64x1024xf16, ub, valid = [?, 1024]>
    """

    name = "tile.load"

    source = operand_def(MemRefType)
    indices = var_operand_def(IndexType())
    valid_sizes = var_operand_def(IndexType())
    result = result_def(TileType)

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(MemoryReadEffect(), TilesFitTarget())
    assembly_format = (
        "$source `[` $indices `]` (`valid` ` ` `[` $valid_sizes^ `]`)? attr-dict "
        "`:` type($source) `->` type($result)"
    )

    def __init__(
        self,
        source: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
        result_type: TileType,
        valid_sizes: Sequence[SSAValue | Operation] = (),
    ):
        super().__init__(
            operands=[source, indices, valid_sizes], result_types=[result_type]
        )

    def verify_(self) -> None:
        memref = cast(MemRefType, self.source.type)
        tile = _tile_type(self.result)
        _verify_space(self, "its result", tile, (MemorySpace.UB, MemorySpace.L1))
        _verify_gm_window(self, memref, tile, len(self.indices))
        if memref.get_element_type() != tile.element_type:
            raise VerifyException(
                f"cannot convert {memref.get_element_type()} to {tile.element_type}"
            )
        _verify_dynamic_operands(
            self, self.valid_sizes, tile.num_dynamic_valid(), "the result's valid shape"
        )


def _verify_gm_window(
    op: Operation, memref: MemRefType, tile: TileType, num_indices: int
) -> None:
    rank = memref.get_num_dims()
    if num_indices != rank:
        raise VerifyException(f"expects {rank} indices for {memref}, got {num_indices}")
    tile_rank = tile.get_num_dims()
    if tile_rank > rank:
        raise VerifyException(f"tile rank {tile_rank} exceeds memref rank {rank}")
    mem_shape = memref.get_shape()[rank - tile_rank :]
    for dim, (m, v) in enumerate(zip(mem_shape, tile.get_valid(), strict=True)):
        if m != DYNAMIC_INDEX and v != DYNAMIC_INDEX and v > m:
            raise VerifyException(
                f"valid extent {v} of tile dim {dim} exceeds memref extent {m}"
            )


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write the valid region of a tile into a GM memref window (ub: MTE3, l0c: FIX).

    The window starts at `indices` and spans the tile's valid extents (leading
    memref dims beyond the tile's rank have extent 1); the rest of the memref is
    untouched. From `ub` the element types agree; from `l0c` the fixpipe may
    convert f32 to f16/bf16 (round to nearest even) on the way out.

        tile.store %y, %out[%i, %c0] : !tile.tile<64x1024xf16, ub> -> memref<4096x1024xf16>
    """

    name = "tile.store"

    value = operand_def(TileType)
    dest = operand_def(MemRefType)
    indices = var_operand_def(IndexType())

    traits = traits_def(MemoryWriteEffect())
    assembly_format = (
        "$value `,` $dest `[` $indices `]` attr-dict `:` type($value) `->` type($dest)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        dest: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
    ):
        super().__init__(operands=[value, dest, indices])

    def verify_(self) -> None:
        memref = cast(MemRefType, self.dest.type)
        tile = _tile_type(self.value)
        _verify_space(self, "its value", tile, (MemorySpace.UB, MemorySpace.L0C))
        _verify_gm_window(self, memref, tile, len(self.indices))
        src, dst = tile.element_type, memref.get_element_type()
        if src != dst and not (
            tile.memory_space == MemorySpace.L0C and (src, dst) in FIXPIPE_CONVERSIONS
        ):
            raise VerifyException(
                f"cannot convert {src} to {dst} from {tile.memory_space}"
            )


FIXPIPE_CONVERSIONS: frozenset[tuple[Attribute, Attribute]] = frozenset(
    {(f32, f16), (f32, bf16)}
)
"""Element conversions the fixpipe applies on the way out of l0c."""

MOVE_PATHS: dict[tuple[MemorySpace, MemorySpace], tuple[Layout, ...]] = {
    (MemorySpace.L1, MemorySpace.L0A): (Layout.NZ,),
    (MemorySpace.L1, MemorySpace.L0B): (Layout.NZ,),
    (MemorySpace.L1, MemorySpace.UB): (Layout.ND,),
    (MemorySpace.UB, MemorySpace.L1): (Layout.ND,),
    (MemorySpace.L0C, MemorySpace.UB): (Layout.NZ,),
    (MemorySpace.L0C, MemorySpace.L1): (Layout.NZ,),
}
"""Legal on-chip moves and the source layouts each accepts."""


@irdl_op_definition
class MoveOp(IRDLOperation):
    """Copy a tile to another on-chip memory, changing layout where the path does.

    Paths: l1 -> l0a/l0b (MTE1, nz source; `transpose` swaps the two dims, as
    the L0 load can), l1 -> ub (MTE1, nd), ub -> l1 (nd source, nd or nz
    result), l0c -> ub / l1 (fixpipe: nz source, nd or nz result, optional
    f32 -> f16/bf16 conversion). The valid shape is kept (swapped with
    `transpose`). The result may keep the source's pad value or drop it.

    l1 -> l0a/l0b may move a `window` of the source instead of all of it: the
    block of the result's shape (before `transpose`) at the static offsets, on
    fractal boundaries, so that an L1 tile deeper than L0 feeds several cube
    steps. Its valid extent along a dim is the source's valid extent past the
    offset, clamped to the window (a `?` extent only passes through a dim the
    window covers whole).

        %a = tile.move %a1 : !tile.tile<64x64xf16, l1, layout = nz> -> !tile.tile<64x64xf16, l0a>
        %k = tile.move %a1 window [0, 32] : !tile.tile<64x64xf16, l1, layout = nz>
               -> !tile.tile<64x32xf16, l0a>
    """

    name = "tile.move"

    source = operand_def(TileType)
    window = opt_prop_def(DenseArrayBase.constr(i64))
    transpose = opt_prop_def(UnitAttr)
    result = result_def(TileType)

    traits = traits_def(Pure(), TilesFitTarget())
    assembly_format = (
        "$source (`window` $window^)? (`transpose` $transpose^)? attr-dict `:` "
        "type($source) `->` type($result)"
    )

    def __init__(
        self,
        source: SSAValue | Operation,
        result_type: TileType,
        transpose: bool = False,
        window: Sequence[int] | None = None,
    ):
        properties: dict[str, Attribute] = {}
        if transpose:
            properties["transpose"] = UnitAttr()
        if window is not None:
            properties["window"] = DenseArrayBase.from_list(i64, list(window))
        super().__init__(
            operands=[source], result_types=[result_type], properties=properties
        )

    def window_offsets(self) -> tuple[int, ...]:
        """Where the moved block starts in the source (zeros without a window)."""
        if self.window is None:
            return (0,) * _tile_type(self.source).get_num_dims()
        return tuple(self.window.get_values())

    def verify_(self) -> None:
        src, dst = _tile_type(self.source), _tile_type(self.result)
        path = (src.memory_space, dst.memory_space)
        if path not in MOVE_PATHS:
            legal = ", ".join(f"{a} -> {b}" for a, b in MOVE_PATHS)
            raise VerifyException(
                f"cannot move {src.memory_space} -> {dst.memory_space} (legal: {legal})"
            )
        if src.layout_kind not in MOVE_PATHS[path]:
            raise VerifyException(
                f"{src.memory_space} -> {dst.memory_space} needs a source in the "
                f"{'/'.join(MOVE_PATHS[path])} layout, got {src.layout_kind}"
            )
        to_l0 = dst.memory_space in (MemorySpace.L0A, MemorySpace.L0B)
        if self.transpose is not None and not to_l0:
            raise VerifyException("transposes only on the way into l0a/l0b")
        shape, valid = src.get_shape(), src.get_valid()
        if self.window is not None:
            if not to_l0:
                raise VerifyException("only moves into l0a/l0b take a window")
            shape, valid = self._window_extents(src, dst)
        if self.transpose is not None:
            shape, valid = shape[::-1], valid[::-1]
        if dst.get_shape() != shape or dst.get_valid() != valid:
            raise VerifyException(
                f"result must have shape {'x'.join(map(str, shape))} and valid "
                f"{_format_valid(valid)}, got {dst}"
            )
        if src.element_type != dst.element_type and not (
            src.memory_space == MemorySpace.L0C
            and (src.element_type, dst.element_type) in FIXPIPE_CONVERSIONS
        ):
            raise VerifyException(
                f"cannot convert {src.element_type} to {dst.element_type} "
                f"from {src.memory_space}"
            )
        if dst.pad_value is not None and dst.pad_value != src.pad_value:
            raise VerifyException(
                f"result pad {dst.pad_value} differs from the source's "
                f"({src.pad_value or 'none'}); use tile.pad"
            )

    def _window_extents(
        self, src: TileType, dst: TileType
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The window's shape (the result's, in source order) and valid shape."""
        offsets = self.window_offsets()
        window = dst.get_shape()
        if self.transpose is not None:
            window = window[::-1]
        if len(offsets) != len(window):
            raise VerifyException(
                f"window has {len(offsets)} offsets for a rank-{len(window)} tile"
            )
        valid: list[int] = []
        for dim, (offset, size, extent, v) in enumerate(
            zip(offsets, window, src.get_shape(), src.get_valid(), strict=True)
        ):
            if offset < 0 or offset + size > extent:
                raise VerifyException(
                    f"window [{offset}, {offset + size}) of dim {dim} is outside the "
                    f"source's {extent} elements"
                )
            if v == DYNAMIC_INDEX:
                if offset or size != extent:
                    raise VerifyException(
                        f"dim {dim} of the source has a dynamic valid extent: the "
                        "window must cover it whole"
                    )
                valid.append(v)
            else:
                valid.append(max(0, min(size, v - offset)))
        fractal = fractal_edge(src.element_type, target_of(self)[0])
        if any(o % fractal for o in offsets[-2:]):
            raise VerifyException(
                f"window offsets {list(offsets)} must be multiples of the "
                f"{fractal}-element fractal"
            )
        if 0 in valid:
            raise VerifyException(
                f"window at {list(offsets)} holds no valid element of the source"
            )
        return tuple(window), tuple(valid)


def _format_valid(valid: Sequence[int]) -> str:
    return "[" + ", ".join("?" if v == DYNAMIC_INDEX else str(v) for v in valid) + "]"


# --------------------------------------------------------------------------------------
# Cube
# --------------------------------------------------------------------------------------


@irdl_op_definition
class MatmulOp(IRDLOperation):
    """`result = lhs @ rhs (+ acc)` on the cube: l0a [m, k] x l0b [k, n] -> l0c [m, n].

    Inputs f16/bf16/f32 accumulate in f32, i8 in i32. The product is taken over
    the valid extents (valid K of lhs and rhs agree); the result's valid shape
    is [valid m of lhs, valid n of rhs] and, with `acc`, equals acc's. Because
    the cube reads whole fractals, a K extent that may be partial needs both
    inputs zero-padded (`pad = zero`).

        %c = tile.matmul %a, %b : !tile.tile<64x32xf16, l0a>, !tile.tile<32x128xf16, l0b>
               -> !tile.tile<64x128xf32, l0c>
        %d = tile.matmul %a, %b, %c : ..., ... -> !tile.tile<64x128xf32, l0c>
    """

    name = "tile.matmul"

    T: ClassVar = VarConstraint("T", base(TileType))

    lhs = operand_def(TileType)
    rhs = operand_def(TileType)
    acc = opt_operand_def(T)
    result = result_def(T)

    traits = traits_def(Pure(), TilesFitTarget())
    assembly_format = (
        "$lhs `,` $rhs (`,` $acc^)? attr-dict `:` type($lhs) `,` type($rhs) "
        "`->` type($result)"
    )

    def __init__(
        self,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        acc: SSAValue | Operation | None = None,
        result_type: TileType | None = None,
    ):
        if result_type is None:
            if acc is not None:
                result_type = _tile_type(SSAValue.get(acc))
            else:
                result_type = self.infer_result_type(
                    _tile_type(SSAValue.get(lhs)), _tile_type(SSAValue.get(rhs))
                )
        super().__init__(
            operands=[lhs, rhs, [] if acc is None else [acc]],
            result_types=[result_type],
        )

    @staticmethod
    def infer_result_type(lhs: TileType, rhs: TileType) -> TileType:
        """The fresh l0c accumulator of `lhs @ rhs`."""
        acc_type = MATMUL_TYPES.get(lhs.element_type, lhs.element_type)
        return TileType(
            (lhs.get_shape()[0], rhs.get_shape()[-1]),
            acc_type,
            MemorySpace.L0C,
            (lhs.get_valid()[0], rhs.get_valid()[-1]),
        )

    def verify_(self) -> None:
        lhs, rhs = _tile_type(self.lhs), _tile_type(self.rhs)
        _verify_space(self, "lhs", lhs, (MemorySpace.L0A,))
        _verify_space(self, "rhs", rhs, (MemorySpace.L0B,))
        _verify_element_type(self, "lhs", lhs.element_type, tuple(MATMUL_TYPES))
        if rhs.element_type != lhs.element_type:
            raise VerifyException(
                "operands have different element types "
                f"({lhs.element_type}, {rhs.element_type})"
            )
        (_, k), (k2, _) = lhs.get_shape(), rhs.get_shape()
        if k != k2:
            raise VerifyException(
                f"K extents differ: lhs has {k} columns, rhs {k2} rows"
            )
        valid_k, valid_k2 = lhs.get_valid()[1], rhs.get_valid()[0]
        if valid_k != valid_k2:
            raise VerifyException(
                f"valid K extents differ: lhs {_format_valid([valid_k])}, "
                f"rhs {_format_valid([valid_k2])}"
            )
        if valid_k != k and (
            lhs.pad_value != PadValue.ZERO or rhs.pad_value != PadValue.ZERO
        ):
            raise VerifyException(
                "a partial K extent needs both operands zero-padded "
                "(pad = zero): the cube reads whole fractals"
            )
        expected = self.infer_result_type(lhs, rhs)
        _verify_result(self, self.result.type, expected)


# --------------------------------------------------------------------------------------
# Vector elementwise ops
# --------------------------------------------------------------------------------------


@irdl_custom_directive
class VectorOperandTypes(CustomDirective):
    """`T` when every operand has type T, else one type per operand (`T0, T1`).

    The result type is not written: it follows from the operand types by the
    op's `infer_result_type` (the declarative format can only infer a result
    type equal to an operand's, and a vector op's result drops the pad value
    and takes the broadcast shape).
    """

    operand_types: TypeDirective
    result_type: TypeDirective

    def parse(self, parser: Parser, state: ParsingState) -> None:
        op_type = state.op_type
        assert issubclass(op_type, TileUnaryOp | TileBinaryOp | SelectOp)
        count = len(state.operand_types)
        pos = parser.pos
        types = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_type
        )
        if len(types) == 1:
            types *= count
        elif len(types) != count:
            parser.raise_error(f"expected 1 or {count} types, got {len(types)}", pos)
        if not any(isinstance(t, TileType) for t in types):
            parser.raise_error(
                f"expected a tile type, got {types[0]}"
                if count == 1
                else "expected at least one tile type",
                pos,
            )
        self.operand_types.set(state, types)
        self.result_type.set(state, (op_type.infer_result_type(*types),))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        types = self.operand_types.get(op)
        if all(t == types[0] for t in types):
            types = types[:1]
        state.print_whitespace(printer)
        printer.print_list(types, printer.print_attribute)


_VECTOR_FORMAT = (
    "attr-dict `:` custom<VectorOperandTypes>(type(operands), type($result))"
)
"""The end of a vector elementwise op's format: `{attrs} : T` or `: T0, T1`."""


class TileUnaryOp(IRDLOperation, abc.ABC):
    """Elementwise `result = f(source)` on the valid region of a ub tile.

    The result has the source's type without its pad value (the op defines the
    valid region only). Syntax: `tile.exp %t : !tile.tile<64x1024xf16, ub>`.
    """

    ELEMENT_TYPES: ClassVar[tuple[Attribute, ...]] = VECTOR_FLOAT_TYPES

    source = operand_def(TileType)
    result = result_def(TileType)

    traits = traits_def(Pure(), TilesFitTarget())
    custom_directives = (VectorOperandTypes,)
    assembly_format = "$source " + _VECTOR_FORMAT

    def __init__(self, source: SSAValue | Operation):
        source_type = SSAValue.get(source).type
        super().__init__(
            operands=[source], result_types=[self.infer_result_type(source_type)]
        )

    @staticmethod
    def infer_result_type(source: Attribute) -> TileType:
        """The source's tile type without its pad value."""
        return cast(TileType, source).without_pad()

    def verify_(self) -> None:
        source = _tile_type(self.source)
        _verify_vector_tile(self, "its operand", source)
        _verify_element_type(
            self, "its operand", source.element_type, self.ELEMENT_TYPES
        )
        _verify_result(self, self.result.type, source.without_pad())


@irdl_op_definition
class NegOp(TileUnaryOp):
    """`-x`."""

    name = "tile.neg"
    ELEMENT_TYPES: ClassVar[tuple[Attribute, ...]] = VECTOR_ARITH_TYPES


@irdl_op_definition
class AbsOp(TileUnaryOp):
    """`|x|`."""

    name = "tile.abs"
    ELEMENT_TYPES: ClassVar[tuple[Attribute, ...]] = VECTOR_ARITH_TYPES


@irdl_op_definition
class ExpOp(TileUnaryOp):
    """`e^x`."""

    name = "tile.exp"


@irdl_op_definition
class LogOp(TileUnaryOp):
    """Natural logarithm."""

    name = "tile.log"


@irdl_op_definition
class SqrtOp(TileUnaryOp):
    """Square root."""

    name = "tile.sqrt"


@irdl_op_definition
class RsqrtOp(TileUnaryOp):
    """`1 / sqrt(x)`."""

    name = "tile.rsqrt"


@irdl_op_definition
class ReciprocalOp(TileUnaryOp):
    """`1 / x`."""

    name = "tile.reciprocal"


@irdl_op_definition
class ReluOp(TileUnaryOp):
    """`max(x, 0)`."""

    name = "tile.relu"
    ELEMENT_TYPES: ClassVar[tuple[Attribute, ...]] = VECTOR_ARITH_TYPES


@irdl_op_definition
class SigmoidOp(TileUnaryOp):
    """`1 / (1 + e^-x)`."""

    name = "tile.sigmoid"


@irdl_op_definition
class TanhOp(TileUnaryOp):
    """Hyperbolic tangent."""

    name = "tile.tanh"


@irdl_op_definition
class GeluOp(TileUnaryOp):
    """GELU, tanh form: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`."""

    name = "tile.gelu"


@irdl_op_definition
class SiluOp(TileUnaryOp):
    """`x * sigmoid(x)` (Swish)."""

    name = "tile.silu"


@irdl_op_definition
class SinOp(TileUnaryOp):
    """Sine (radians). No instruction computes it: `tv-expand-math` expands
    `tv.sin` before tiling, so tile-to-hw does not lower this op."""

    name = "tile.sin"


@irdl_op_definition
class CosOp(TileUnaryOp):
    """Cosine (radians); not lowered by tile-to-hw (see `tile.sin`)."""

    name = "tile.cos"


@irdl_op_definition
class ErfOp(TileUnaryOp):
    """The error function; not lowered by tile-to-hw (see `tile.sin`)."""

    name = "tile.erf"


class TileBinaryOp(IRDLOperation, abc.ABC):
    """Elementwise `result = lhs op rhs` on the valid region of ub tiles.

    Either operand may be a scalar of the tile's element type (`arith.constant`
    or any SSA value), not both. Two tiles have the same rank, element type and
    layout; per dim their shapes and valid extents agree, or one of them has
    extent 1 (physical and valid) and is broadcast along that dim: a [64, 1]
    row-statistic against a [64, 1024] tile is a row-wise op, [1, 1024] a
    column-wise one. The result has the broadcast shape and no pad value.

        %y = tile.mul %t, %s : !tile.tile<64x1024xf16, ub>
        %z = tile.sub %t, %m : !tile.tile<64x1024xf32, ub>, !tile.tile<64x1xf32, ub>
        %w = tile.add %t, %c : !tile.tile<64x1024xf32, ub>, f32
    """

    ELEMENT_TYPES: ClassVar[tuple[Attribute, ...]] = VECTOR_ARITH_TYPES

    lhs = operand_def()
    rhs = operand_def()
    result = result_def(TileType)

    traits = traits_def(Pure(), TilesFitTarget())
    custom_directives = (VectorOperandTypes,)
    assembly_format = "$lhs `,` $rhs " + _VECTOR_FORMAT

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        result_type = self.infer_result_type(
            SSAValue.get(lhs).type, SSAValue.get(rhs).type
        )
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    @staticmethod
    def infer_result_type(lhs: Attribute, rhs: Attribute) -> TileType:
        """The broadcast result of `lhs op rhs` (at least one operand is a tile)."""
        if not isinstance(lhs, TileType):
            if not isinstance(rhs, TileType):
                raise VerifyException(
                    "a tile binary op needs at least one tile operand"
                )
            return rhs.without_pad()
        if not isinstance(rhs, TileType) or rhs.get_num_dims() != lhs.get_num_dims():
            return lhs.without_pad()
        shape: list[int] = []
        valid: list[int] = []
        for ls, lv, rs, rv in zip(
            lhs.get_shape(),
            lhs.get_valid(),
            rhs.get_shape(),
            rhs.get_valid(),
            strict=True,
        ):
            take_rhs = ls == 1 and rs != 1
            shape.append(rs if take_rhs else ls)
            valid.append(rv if take_rhs else lv)
        return lhs.with_(shape=shape, valid=valid, pad=None)

    def verify_(self) -> None:
        lhs, rhs = self.lhs.type, self.rhs.type
        tiles = [t for t in (lhs, rhs) if isinstance(t, TileType)]
        if not tiles:
            raise VerifyException("needs at least one tile operand")
        for tile in tiles:
            _verify_vector_tile(self, "tile operands", tile)
        element_type = tiles[0].element_type
        _verify_element_type(self, "its operands", element_type, self.ELEMENT_TYPES)
        for t in (lhs, rhs):
            scalar_type = t.element_type if isinstance(t, TileType) else t
            if scalar_type != element_type:
                raise VerifyException(
                    f"operands have different element types ({names([lhs, rhs])})"
                )
        if len(tiles) == 2:
            self.verify_broadcast(tiles[0], tiles[1])
        _verify_result(self, self.result.type, self.infer_result_type(lhs, rhs))

    @staticmethod
    def verify_broadcast(lhs: TileType, rhs: TileType) -> None:
        """Per dim the two tiles agree, or one of them is 1 (physical and valid)."""
        if lhs.get_num_dims() != rhs.get_num_dims():
            raise VerifyException(
                f"operands have ranks {lhs.get_num_dims()} and {rhs.get_num_dims()}"
            )
        for dim, (ls, lv, rs, rv) in enumerate(
            zip(
                lhs.get_shape(),
                lhs.get_valid(),
                rhs.get_shape(),
                rhs.get_valid(),
                strict=True,
            )
        ):
            if ls == rs and lv == rv:
                continue
            if (ls == 1 and lv == 1) or (rs == 1 and rv == 1):
                continue
            raise VerifyException(
                f"operands disagree in dim {dim}: {ls} (valid "
                f"{_format_valid([lv])[1:-1]}) vs {rs} (valid {_format_valid([rv])[1:-1]}); "
                "dims must match or one must be 1"
            )


@irdl_op_definition
class AddOp(TileBinaryOp):
    """`lhs + rhs` (integers wrap)."""

    name = "tile.add"


@irdl_op_definition
class SubOp(TileBinaryOp):
    """`lhs - rhs` (integers wrap)."""

    name = "tile.sub"


@irdl_op_definition
class MulOp(TileBinaryOp):
    """`lhs * rhs` (integers wrap)."""

    name = "tile.mul"


@irdl_op_definition
class DivOp(TileBinaryOp):
    """`lhs / rhs` (IEEE division)."""

    name = "tile.div"
    ELEMENT_TYPES: ClassVar[tuple[Attribute, ...]] = VECTOR_FLOAT_TYPES


@irdl_op_definition
class MaxOp(TileBinaryOp):
    """Elementwise maximum (NaN propagates)."""

    name = "tile.max"


@irdl_op_definition
class MinOp(TileBinaryOp):
    """Elementwise minimum (NaN propagates)."""

    name = "tile.min"


@irdl_attr_definition
class CmpModeAttr(EnumAttribute[CmpMode], SpacedOpaqueSyntaxAttribute):
    name = "tile.cmp"


SELECT_TILE_TYPES: tuple[Attribute, ...] = (f16, f32, i32)
"""What `vcmp` compares and `vselect` selects here (bf16 is selected in f32)."""


@irdl_op_definition
class SelectOp(IRDLOperation):
    """`where(lhs <cmp> rhs, on_true, on_false)` on the valid region of ub tiles
    (`tv.select`'s tile form; false for a NaN operand except ne).

    Four tiles broadcast as a binary op's two do (per dim equal, or extent 1
    physical and valid); lhs and rhs share an element type, on_true and on_false
    another (f16, f32, i32), both 16- or both 32-bit. The result has on_true's
    element type, the broadcast shape and no pad value:

        %r = tile.select gt %x, %z, %x, %y : !tile.tile<64x128xf32, ub>
    """

    name = "tile.select"

    cmp = prop_def(CmpModeAttr)
    lhs = operand_def(TileType)
    rhs = operand_def(TileType)
    on_true = operand_def(TileType)
    on_false = operand_def(TileType)
    result = result_def(TileType)

    traits = traits_def(Pure(), TilesFitTarget())
    custom_directives = (VectorOperandTypes,)
    assembly_format = "$cmp $lhs `,` $rhs `,` $on_true `,` $on_false " + _VECTOR_FORMAT

    def __init__(
        self,
        cmp: CmpMode | str,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        on_true: SSAValue | Operation,
        on_false: SSAValue | Operation,
    ):
        operands = [SSAValue.get(v) for v in (lhs, rhs, on_true, on_false)]
        super().__init__(
            operands=operands,
            result_types=[self.infer_result_type(*(v.type for v in operands))],
            properties={"cmp": CmpModeAttr(CmpMode(cmp))},
        )

    @staticmethod
    def infer_result_type(*types: Attribute) -> TileType:
        """on_true's element type over the four tiles' broadcast shape."""
        lhs, rhs, on_true, on_false = types
        result: Attribute = on_true
        for other in (on_false, lhs, rhs):
            result = TileBinaryOp.infer_result_type(result, other)
        return cast(TileType, result)

    def verify_(self) -> None:
        names_ = ("lhs", "rhs", "on_true", "on_false")
        tiles = [_tile_type(v) for v in self.operands]
        for what, tile in zip(names_, tiles, strict=True):
            _verify_vector_tile(self, f"its {what}", tile)
            _verify_element_type(
                self, f"its {what}", tile.element_type, SELECT_TILE_TYPES
            )
        for a, b in ((0, 1), (2, 3)):
            if tiles[a].element_type != tiles[b].element_type:
                raise VerifyException(
                    f"its {names_[a]} and {names_[b]} have element types "
                    f"{tiles[a].element_type} and {tiles[b].element_type}"
                )
        common.verify_select_types(tiles[0].element_type, tiles[2].element_type)
        result = self.infer_result_type(*tiles)
        for what, tile in zip(names_, tiles, strict=True):
            try:
                TileBinaryOp.verify_broadcast(tile, result)
            except VerifyException as e:
                raise VerifyException(f"its {what} against the result: {e}") from e
        _verify_result(self, self.result.type, result)


# --------------------------------------------------------------------------------------
# Conversion, reduction, broadcast, fill, pad, transpose
# --------------------------------------------------------------------------------------


@irdl_op_definition
class CastOp(IRDLOperation):
    """Convert the elements of a ub tile to another element type.

    As `tv.cast`: float -> float and integer -> float round to nearest even;
    float -> integer rounds by `round` (default `trunc`, toward zero) and
    saturates, NaN giving 0; integer -> integer wraps. Shape and valid shape
    are kept; the result has no pad value.

        %h = tile.cast %t : !tile.tile<64x1024xf32, ub> -> !tile.tile<64x1024xf16, ub>
        %i = tile.cast %t round floor : !tile.tile<8x32xf32, ub> -> !tile.tile<8x32xi32, ub>
    """

    name = "tile.cast"

    source = operand_def(TileType)
    round = opt_prop_def(RoundModeAttr)
    result = result_def(TileType)

    traits = traits_def(Pure(), TilesFitTarget())
    assembly_format = (
        "$source (`round` $round^)? attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(
        self,
        source: SSAValue | Operation,
        element_type: Attribute,
        round: RoundMode | str | None = None,
    ):
        source_type = _tile_type(SSAValue.get(source))
        super().__init__(
            operands=[source],
            result_types=[source_type.with_(element_type=element_type, pad=None)],
            properties={}
            if round is None
            else {"round": RoundModeAttr(RoundMode(round))},
        )

    @property
    def round_mode(self) -> RoundMode:
        return RoundMode.TRUNC if self.round is None else self.round.data

    def verify_(self) -> None:
        source, result = _tile_type(self.source), _tile_type(self.result)
        _verify_vector_tile(self, "its operand", source)
        _verify_result(
            self, result, source.with_(element_type=result.element_type, pad=None)
        )
        if self.round is not None and not (
            is_float(source.element_type) and not is_float(result.element_type)
        ):
            raise VerifyException("takes a rounding mode only for float -> integer")


class TileReduceOp(IRDLOperation, abc.ABC):
    """Reduce a ub tile along `axis` over its valid elements, keeping the dim as 1.

    The result has the source's shape and valid shape with `axis` set to 1, the
    same element type, no pad. Floats are accumulated in f32 and
    rounded once; integer sums wrap.

        %m = tile.reduce_max %t, axis = 1 : !tile.tile<64x1024xf32, ub>
               -> !tile.tile<64x1xf32, ub>
    """

    ELEMENT_TYPES: ClassVar[tuple[Attribute, ...]] = VECTOR_ARITH_TYPES

    source = operand_def(TileType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(TileType)

    traits = traits_def(Pure(), TilesFitTarget())
    assembly_format = (
        "$source `,` `axis` `=` $axis attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(self, source: SSAValue | Operation, axis: int):
        source_type = _tile_type(SSAValue.get(source))
        super().__init__(
            operands=[source],
            result_types=[self.infer_result_type(source_type, axis)],
            properties={"axis": IntegerAttr(axis, i64)},
        )

    @staticmethod
    def infer_result_type(source: TileType, axis: int) -> TileType:
        shape, valid = list(source.get_shape()), list(source.get_valid())
        if 0 <= axis < len(shape):
            shape[axis] = valid[axis] = 1
        return source.with_(shape=shape, valid=valid, pad=None)

    @property
    def axis_index(self) -> int:
        return self.axis.value.data

    def verify_(self) -> None:
        source = _tile_type(self.source)
        _verify_vector_tile(self, "its operand", source)
        _verify_element_type(
            self, "its operand", source.element_type, self.ELEMENT_TYPES
        )
        if not 0 <= self.axis_index < source.get_num_dims():
            raise VerifyException(
                f"axis {self.axis_index} is out of range for rank "
                f"{source.get_num_dims()}"
            )
        _verify_result(
            self, self.result.type, self.infer_result_type(source, self.axis_index)
        )


@irdl_op_definition
class ReduceSumOp(TileReduceOp):
    """Sum along `axis`."""

    name = "tile.reduce_sum"


@irdl_op_definition
class ReduceMaxOp(TileReduceOp):
    """Maximum along `axis` (NaN propagates)."""

    name = "tile.reduce_max"


@irdl_op_definition
class ReduceMinOp(TileReduceOp):
    """Minimum along `axis` (NaN propagates)."""

    name = "tile.reduce_min"


@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """Replicate a ub tile along its extent-1 dims, e.g. [64, 1] -> [64, 1024].

    Every dim of the source is either kept (same shape and valid extent in the
    result) or has extent 1 (physical and valid) and is broadcast to the result's
    extent. Broadcast dims whose result valid extent is `?` take one `valid`
    operand each, in dim order.

        %b = tile.broadcast %m valid [%cols] : !tile.tile<64x1xf32, ub>
               -> !tile.tile<64x1024xf32, ub, valid = [64, ?]>
    """

    name = "tile.broadcast"

    source = operand_def(TileType)
    valid_sizes = var_operand_def(IndexType())
    result = result_def(TileType)

    traits = traits_def(Pure(), TilesFitTarget())
    assembly_format = (
        "$source (`valid` ` ` `[` $valid_sizes^ `]`)? attr-dict `:` type($source) "
        "`->` type($result)"
    )

    def __init__(
        self,
        source: SSAValue | Operation,
        result_type: TileType,
        valid_sizes: Sequence[SSAValue | Operation] = (),
    ):
        super().__init__(operands=[source, valid_sizes], result_types=[result_type])

    def broadcast_dims(self) -> tuple[int, ...]:
        """The dims along which the source is replicated."""
        source, result = _tile_type(self.source), _tile_type(self.result)
        return tuple(
            dim
            for dim, (s, r) in enumerate(
                zip(source.get_shape(), result.get_shape(), strict=True)
            )
            if s == 1 and r != 1
        )

    def verify_(self) -> None:
        source, result = _tile_type(self.source), _tile_type(self.result)
        _verify_vector_tile(self, "its operand", source)
        _verify_vector_tile(self, "its result", result)
        if result.element_type != source.element_type:
            raise VerifyException("result must keep the element type")
        if result.get_num_dims() != source.get_num_dims():
            raise VerifyException("result must keep the rank")
        if result.pad_value is not None:
            raise VerifyException("result cannot have a pad value; use tile.pad")
        dynamic = 0
        for dim, (ss, sv, rs, rv) in enumerate(
            zip(
                source.get_shape(),
                source.get_valid(),
                result.get_shape(),
                result.get_valid(),
                strict=True,
            )
        ):
            if ss == 1 and sv == 1 and rs != 1:
                dynamic += rv == DYNAMIC_INDEX
            elif (ss, sv) != (rs, rv):
                raise VerifyException(
                    f"dim {dim} must be kept or broadcast from 1: "
                    f"source {ss} (valid {_format_valid([sv])[1:-1]}), "
                    f"result {rs} (valid {_format_valid([rv])[1:-1]})"
                )
        _verify_dynamic_operands(
            self, self.valid_sizes, dynamic, "the result's broadcast dims"
        )


@irdl_op_definition
class FillOp(IRDLOperation):
    """A new ub tile whose valid region holds the scalar `value` (vector dup).

    One `valid` operand per `?` of the result's valid shape. With a pad value
    the rest of the tile holds it; otherwise the rest is undefined.

        %z = tile.fill %cst valid [%rows] : f32 -> !tile.tile<64x1xf32, ub, valid = [?, 1]>
    """

    name = "tile.fill"

    value = operand_def()
    valid_sizes = var_operand_def(IndexType())
    result = result_def(TileType)

    traits = traits_def(Pure(), TilesFitTarget())
    assembly_format = (
        "$value (`valid` ` ` `[` $valid_sizes^ `]`)? attr-dict `:` type($value) "
        "`->` type($result)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        result_type: TileType,
        valid_sizes: Sequence[SSAValue | Operation] = (),
    ):
        super().__init__(operands=[value, valid_sizes], result_types=[result_type])

    def verify_(self) -> None:
        result = _tile_type(self.result)
        _verify_vector_tile(self, "its result", result)
        if self.value.type != result.element_type:
            raise VerifyException(
                f"value has type {self.value.type}, the tile holds "
                f"{result.element_type}"
            )
        _verify_dynamic_operands(
            self,
            self.valid_sizes,
            result.num_dynamic_valid(),
            "the result's valid shape",
        )


IOTA_ELEMENT_TYPES: tuple[Attribute, ...] = (i32,)
"""What `tile.iota` writes: lane positions compare as i32 (`tile.select` of
32-bit values by them; f16 positions would be exact only to 2048)."""


@irdl_op_definition
class IotaOp(IRDLOperation):
    """A new ub tile whose element `[i, j]` is its column `j` (numpy's
    `arange` along the last dim, the same in every row).

    The lane positions of a computed mask: `tile.select lt %col, %limit, %v,
    %pad` keeps the lanes of each row before its run-time length `%limit`
    (a row's valid extent, docs/sparse.md *Computed masks*). One `valid`
    operand per `?` of the result's valid shape, as `tile.fill`.

        %col = tile.iota : !tile.tile<8x64xi32, ub>
    """

    name = "tile.iota"

    valid_sizes = var_operand_def(IndexType())
    result = result_def(TileType)

    traits = traits_def(Pure(), TilesFitTarget())
    assembly_format = "(`valid` ` ` `[` $valid_sizes^ `]`)? attr-dict `:` type($result)"

    def __init__(
        self, result_type: TileType, valid_sizes: Sequence[SSAValue | Operation] = ()
    ):
        super().__init__(operands=[valid_sizes], result_types=[result_type])

    def verify_(self) -> None:
        result = _tile_type(self.result)
        _verify_vector_tile(self, "its result", result)
        _verify_element_type(
            self, "its result", result.element_type, IOTA_ELEMENT_TYPES
        )
        _verify_dynamic_operands(
            self,
            self.valid_sizes,
            result.num_dynamic_valid(),
            "the result's valid shape",
        )


@irdl_op_definition
class PadOp(IRDLOperation):
    """Set every element of a ub tile outside its valid region to the result's pad.

    The result is the source with a pad value in its type; the valid region is
    unchanged. Use it before a ub tile feeds a matmul with a partial K extent.

        %p = tile.pad %t : !tile.tile<64x64xf16, ub, valid = [?, ?]>
               -> !tile.tile<64x64xf16, ub, valid = [?, ?], pad = zero>
    """

    name = "tile.pad"

    source = operand_def(TileType)
    result = result_def(TileType)

    traits = traits_def(Pure(), TilesFitTarget())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue | Operation, pad: PadValue | str):
        source_type = _tile_type(SSAValue.get(source))
        super().__init__(operands=[source], result_types=[source_type.with_(pad=pad)])

    def verify_(self) -> None:
        source, result = _tile_type(self.source), _tile_type(self.result)
        _verify_vector_tile(self, "its operand", source)
        if result.pad_value is None:
            raise VerifyException("result must have a pad value")
        _verify_result(self, result, source.with_(pad=result.pad_value))


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """Swap the two dims of a 2-D ub tile (physical and valid shapes swap too).

    %t2 = tile.transpose %t : !tile.tile<16x32xf16, ub> -> !tile.tile<32x16xf16, ub>
    """

    name = "tile.transpose"

    source = operand_def(TileType)
    result = result_def(TileType)

    traits = traits_def(Pure(), TilesFitTarget())
    assembly_format = "$source attr-dict `:` type($source) `->` type($result)"

    def __init__(self, source: SSAValue | Operation):
        source_type = _tile_type(SSAValue.get(source))
        super().__init__(
            operands=[source],
            result_types=[
                source_type.with_(
                    shape=source_type.get_shape()[::-1],
                    valid=source_type.get_valid()[::-1],
                    pad=None,
                )
            ],
        )

    def verify_(self) -> None:
        source = _tile_type(self.source)
        _verify_vector_tile(self, "its operand", source)
        if source.get_num_dims() != 2:
            raise VerifyException("takes a 2-D tile")
        expected = source.with_(
            shape=source.get_shape()[::-1], valid=source.get_valid()[::-1], pad=None
        )
        _verify_result(self, self.result.type, expected)


def valid_extent_origin(
    tile_value: SSAValue, dim: int
) -> SSAValue | tuple[SSAValue, int] | None:
    """Where the valid extent of `dim` of `tile_value` comes from, one op back.

    An `index` value (a `valid` operand of the load, fill or broadcast that made
    the extent), or the (tile, dim) whose extent it copies, or None when the
    defining op is unknown (e.g. a block argument).
    """
    op = tile_value.owner
    if isinstance(op, LoadOp | FillOp):
        result_type = _tile_type(op.result)
        dynamic = [
            d for d, v in enumerate(result_type.get_valid()) if v == DYNAMIC_INDEX
        ]
        return op.valid_sizes[dynamic.index(dim)] if dim in dynamic else None
    if isinstance(op, BroadcastOp):
        broadcast = op.broadcast_dims()
        if dim not in broadcast:
            return op.source, dim
        result_type = _tile_type(op.result)
        dynamic = [d for d in broadcast if result_type.get_valid()[d] == DYNAMIC_INDEX]
        return op.valid_sizes[dynamic.index(dim)] if dim in dynamic else None
    if isinstance(op, TileUnaryOp | CastOp | PadOp | TileReduceOp):
        return op.source, dim
    if isinstance(op, MoveOp):
        return op.source, (1 - dim if op.transpose is not None else dim)
    if isinstance(op, TransposeOp):
        return op.source, 1 - dim
    if isinstance(op, MatmulOp):
        return (op.lhs, 0) if dim == 0 else (op.rhs, 1)
    if isinstance(op, TileBinaryOp | SelectOp):
        size = _tile_type(op.result).get_shape()[dim]
        for operand in op.operands:
            operand_type = operand.type
            if (
                isinstance(operand_type, TileType)
                and operand_type.get_shape()[dim] == size
            ):
                return operand, dim
    return None


class ValidDimOpHasCanonicalizationPatterns(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldValidDim(),)


@irdl_op_definition
class ValidDimOp(IRDLOperation):
    """The valid extent of dim `dim` of a tile, as an index.

    %rows = tile.valid_dim %t, 0 : !tile.tile<64x1024xf16, ub, valid = [?, 1024]>

    Canonicalization folds a static extent to a constant and follows a `?`
    back to the `valid` operand that created it (see `valid_extent_origin`).
    """

    name = "tile.valid_dim"

    source = operand_def(TileType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(IndexType())

    traits = traits_def(Pure(), ValidDimOpHasCanonicalizationPatterns())
    assembly_format = "$source `,` $dim attr-dict `:` type($source)"

    def __init__(self, source: SSAValue | Operation, dim: int):
        super().__init__(
            operands=[source],
            result_types=[IndexType()],
            properties={"dim": IntegerAttr(dim, i64)},
        )

    @property
    def dim_index(self) -> int:
        return self.dim.value.data

    def verify_(self) -> None:
        rank = _tile_type(self.source).get_num_dims()
        if not 0 <= self.dim_index < rank:
            raise VerifyException(
                f"dim {self.dim_index} is out of range for rank {rank}"
            )


class FoldValidDim(RewritePattern):
    """`tile.valid_dim` of a static extent is a constant; of a `?`, the operand
    that created it (or `tile.valid_dim` of the tile it was copied from)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ValidDimOp, rewriter: PatternRewriter, /):
        static = _tile_type(op.source).get_valid()[op.dim_index]
        if static != DYNAMIC_INDEX:
            constant = arith.ConstantOp.from_int_and_width(static, IndexType())
            rewriter.replace_op(op, constant)
            return
        origin = valid_extent_origin(op.source, op.dim_index)
        if isinstance(origin, SSAValue):
            rewriter.replace_op(op, (), (origin,))
        elif origin is not None:
            rewriter.replace_op(op, ValidDimOp(*origin))


# --------------------------------------------------------------------------------------
# Scalar reads of a tile (data-dependent addressing, docs/sparse.md)
# --------------------------------------------------------------------------------------

EXTRACT_ELEMENT_TYPES: tuple[Attribute, ...] = (i16, i32, f16, f32)
"""Element types `tile.extract` reads: the index tiles of the sparse formats
(read as an `index`) and value tiles (read as a scalar of their type, the
operand of a scalar-tile op such as `tile.mul %row, %v`)."""


def extract_result_type(element_type: Attribute) -> Attribute:
    """What `tile.extract` reads an element as: floats as themselves, integers
    as an `index`."""
    return element_type if element_type in (f16, f32) else IndexType()


@irdl_op_definition
class ExtractOp(IRDLOperation):
    """One element of a ub tile read by the scalar unit: an integer tile's as a
    sign-extended `index`, a float tile's as a scalar of its type.

        %col = tile.extract %idx[%j] : !tile.tile<64xi32, ub> -> index
        %v = tile.extract %vals[%j] : !tile.tile<64xf32, ub> -> f32

    One index operand per tile dim; the element must lie inside the tile's
    valid region (the interpreter checks). This is how a kernel reads a
    prefetched tile of CSR offsets or column indices to compute loop bounds and
    GM addresses, and a prefetched value as the scalar of a `tile.mul`
    (docs/sparse.md, *The tile level*): only ub tiles, since the scalar unit
    reads GM and UB only (GM elements are read with `memref.load`).
    """

    name = "tile.extract"

    source = operand_def(TileType)
    indices = var_operand_def(IndexType())
    result = result_def()

    traits = traits_def(Pure())
    assembly_format = (
        "$source `[` $indices `]` attr-dict `:` type($source) `->` type($result)"
    )

    def __init__(
        self, source: SSAValue | Operation, indices: Sequence[SSAValue | Operation]
    ):
        source_type = _tile_type(SSAValue.get(source))
        super().__init__(
            operands=[source, indices],
            result_types=[extract_result_type(source_type.element_type)],
        )

    def verify_(self) -> None:
        _verify_scalar_element(
            self, "its source", self.source, self.result, "reads", "as", self.indices
        )


def _verify_scalar_element(
    op: Operation,
    what: str,
    tile_value: SSAValue,
    scalar: SSAValue,
    verb: str,
    preposition: str,
    indices: Sequence[SSAValue],
) -> None:
    """A scalar read (`tile.extract`) or write (`tile.insert`) of one element
    of a ub tile: the tile's space and element type, the scalar's type, one
    index per dim."""
    tile = _tile_type(tile_value)
    _verify_space(op, what, tile, (MemorySpace.UB,))
    _verify_element_type(op, what, tile.element_type, EXTRACT_ELEMENT_TYPES)
    expected = extract_result_type(tile.element_type)
    if scalar.type != expected:
        raise VerifyException(
            f"{verb} a {tile.element_type} element {preposition} {expected}, not "
            f"{scalar.type}"
        )
    _verify_scalar_indices(tile, indices)


def _verify_scalar_indices(tile: TileType, indices: Sequence[SSAValue]) -> None:
    """One index per dim of `tile`; a constant index inside its shape."""
    rank = tile.get_num_dims()
    if len(indices) != rank:
        raise VerifyException(f"expects {rank} indices for {tile}, got {len(indices)}")
    for dim, (index, size) in enumerate(zip(indices, tile.get_shape(), strict=True)):
        owner = index.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            value = owner.value.value.data
            if not 0 <= value < size:
                raise VerifyException(
                    f"index {value} of dim {dim} is outside the tile's shape "
                    f"{list(tile.get_shape())}"
                )


@irdl_op_definition
class InsertOp(IRDLOperation):
    """The tile `dest` with one element replaced by a scalar written by the
    scalar unit: the counterpart of `tile.extract`.

        %t2 = tile.insert %v, %t[%j] : f32, !tile.tile<1x64xf32, ub>
        %c2 = tile.insert %col, %c[%j] : index, !tile.tile<64xi32, ub>

    The value is a scalar of the tile's element type (a float tile) or an
    `index` (an i16/i32 tile, truncated); one index operand per tile dim, the
    element inside the tile's valid region (the interpreter checks). This is
    how a kernel builds a tile element by element at run-time positions: a
    CSR row scattered into a dense row, a window of dot products gathered
    into one tile (docs/sparse.md, *The tile level*). Only ub tiles, since the
    scalar unit writes UB only.
    """

    name = "tile.insert"

    T: ClassVar = VarConstraint("T", base(TileType))

    value = operand_def()
    dest = operand_def(T)
    indices = var_operand_def(IndexType())
    result = result_def(T)

    traits = traits_def(Pure())
    assembly_format = (
        "$value `,` $dest `[` $indices `]` attr-dict `:` type($value) `,` type($dest)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        dest: SSAValue | Operation,
        indices: Sequence[SSAValue | Operation],
    ):
        dest = SSAValue.get(dest)
        super().__init__(operands=[value, dest, indices], result_types=[dest.type])

    def verify_(self) -> None:
        _verify_scalar_element(
            self,
            "its destination",
            self.dest,
            self.value,
            "writes",
            "from",
            self.indices,
        )


@irdl_op_definition
class InsertRowsOp(IRDLOperation):
    """The ub tile `dest` with its rows `row .. row + W` replaced by the `W`
    rows of `value`, at a row known at run time: the tile counterpart of
    `tile.insert` for whole rows.

        %blk2 = tile.insert_rows %row, %blk[%r] : !tile.tile<1x128xf32, ub>,
                  !tile.tile<16x128xf32, ub>

    How a nest that computes consecutive rows one at a time collects them in a
    block tile stored with one DMA instead of one DMA a row (the CSR spmm's
    partial rows, docs/sparse.md). Same element type, columns and valid
    columns; `value`'s rows all valid; the rows `row .. row + W` must lie in
    `dest`'s valid rows (the interpreter checks; a constant row here). The
    vector unit copies the rows, so rows are whole 32-byte blocks.
    """

    name = "tile.insert_rows"

    T: ClassVar = VarConstraint("T", base(TileType))

    value = operand_def(TileType)
    dest = operand_def(T)
    row = operand_def(IndexType())
    result = result_def(T)

    traits = traits_def(Pure())
    assembly_format = (
        "$value `,` $dest `[` $row `]` attr-dict `:` type($value) `,` type($dest)"
    )

    def __init__(
        self,
        value: SSAValue | Operation,
        dest: SSAValue | Operation,
        row: SSAValue | Operation,
    ):
        dest = SSAValue.get(dest)
        super().__init__(operands=[value, dest, row], result_types=[dest.type])

    def verify_(self) -> None:
        value, dest = _tile_type(self.value), _tile_type(self.dest)
        for what, tile in (("its value", value), ("its destination", dest)):
            _verify_space(self, what, tile, (MemorySpace.UB,))
        _verify_element_type(
            self, "its destination", dest.element_type, GATHER_ELEMENT_TYPES
        )
        if value.get_num_dims() != 2 or dest.get_num_dims() != 2:
            raise VerifyException(
                f"inserts rows of a 2-d tile into a 2-d tile, got {value} and {dest}"
            )
        rows, columns = value.get_shape()
        if (
            value.element_type != dest.element_type
            or columns != dest.get_shape()[1]
            or list(value.get_valid()) != [rows, dest.get_valid()[1]]
        ):
            raise VerifyException(
                f"expects rows of the destination's element type and columns, all "
                f"valid, got {value} for {dest}"
            )
        if rows > dest.get_shape()[0]:
            raise VerifyException(
                f"inserts {rows} rows into a tile of {dest.get_shape()[0]}"
            )
        _verify_whole_rows(self, "rows", dest)
        _verify_constant_run(
            self.row, rows, dest, "rows", "the destination's shape", dim=0
        )


def _verify_whole_rows(op: Operation, what: str, tile: TileType) -> None:
    """Rows the vector unit copies start on ub's alignment: whole blocks."""
    alignment = target_of(op)[0].memories["ub"].alignment
    columns, size = tile.get_shape()[1], element_bytes(tile.element_type)
    if columns * size % alignment:
        raise VerifyException(
            f"{what} of {columns} x {size} bytes are not whole {alignment}-byte "
            "blocks (ub's alignment)"
        )


def _verify_constant_run(
    start: SSAValue, count: int, tile: TileType, what: str, where: str, dim: int
) -> None:
    """A constant `start`: `start .. start + count` lies in `tile`'s dim."""
    owner = start.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        first = owner.value.value.data
        if not 0 <= first <= tile.get_shape()[dim] - count:
            raise VerifyException(
                f"{what} [{first}, {first + count}) are outside {where} "
                f"{list(tile.get_shape())}"
            )


GATHER_INDEX_TYPES: tuple[Attribute, ...] = (i16, i32)
GATHER_ELEMENT_TYPES: tuple[Attribute, ...] = (f16, bf16, f32, i16, i32)
"""Rows are copied by the vector unit, which moves 16- and 32-bit lanes."""


@irdl_op_definition
class GatherOp(IRDLOperation):
    """Rows of a ub tile at row indices read at run time: `result[w, :] =
    source[indices[start + w], :]` for the result's `W` rows.

        %g = tile.gather %b[%cols, %k] : !tile.tile<1024x64xf16, ub>,
               !tile.tile<64xi32, ub> -> !tile.tile<1x64xf16, ub>

    The on-chip counterpart of a row gather `tile.load %b[%col, %c0]` from GM:
    a CSR nest that keeps a slice of its dense operand in ub gathers the rows
    its column indices name without a DMA each (docs/sparse.md). The indices
    `start .. start + W` must lie in the index tile's valid region and each
    index in the source's valid rows (the interpreter and the simulator check;
    its footprint in the source is therefore the run-time row). Source rows are
    whole 32-byte blocks, so that each gathered row starts on ub's alignment.
    """

    name = "tile.gather"

    source = operand_def(TileType)
    indices = operand_def(TileType)
    start = operand_def(IndexType())
    result = result_def(TileType)

    traits = traits_def(Pure())
    assembly_format = (
        "$source `[` $indices `,` $start `]` attr-dict `:` type($source) `,` "
        "type($indices) `->` type($result)"
    )

    def __init__(
        self,
        source: SSAValue | Operation,
        indices: SSAValue | Operation,
        start: SSAValue | Operation,
        rows: int,
    ):
        src = _tile_type(SSAValue.get(source))
        result = TileType(
            [rows, src.get_shape()[1]],
            src.element_type,
            MemorySpace.UB,
            valid=[rows, src.get_valid()[1]],
        )
        super().__init__(operands=[source, indices, start], result_types=[result])

    def verify_(self) -> None:
        src, idx, res = (
            _tile_type(self.source),
            _tile_type(self.indices),
            _tile_type(self.result),
        )
        for what, tile in (("its source", src), ("its indices", idx)):
            _verify_space(self, what, tile, (MemorySpace.UB,))
        _verify_element_type(self, "its source", src.element_type, GATHER_ELEMENT_TYPES)
        _verify_element_type(self, "its indices", idx.element_type, GATHER_INDEX_TYPES)
        if src.get_num_dims() != 2 or idx.get_num_dims() != 1:
            raise VerifyException(
                f"gathers rows of a 2-d source at a 1-d index tile, got {src} and {idx}"
            )
        rows, columns = res.get_shape()[0], src.get_shape()[1]
        expected = TileType(
            [rows, columns],
            src.element_type,
            MemorySpace.UB,
            valid=[rows, src.get_valid()[1]],
        )
        if res != expected:
            raise VerifyException(f"result must be {expected}, got {res}")
        if rows > idx.get_shape()[0]:
            raise VerifyException(
                f"gathers {rows} rows, but the index tile holds {idx.get_shape()[0]}"
            )
        _verify_whole_rows(self, "source rows", src)
        _verify_constant_run(
            self.start, rows, idx, "indices", "the index tile's shape", dim=0
        )


UNARY_OPS: tuple[type[TileUnaryOp], ...] = (
    NegOp,
    AbsOp,
    ExpOp,
    LogOp,
    SqrtOp,
    RsqrtOp,
    ReciprocalOp,
    ReluOp,
    SigmoidOp,
    TanhOp,
    GeluOp,
    SiluOp,
    SinOp,
    CosOp,
    ErfOp,
)
BINARY_OPS: tuple[type[TileBinaryOp], ...] = (AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp)
REDUCE_OPS: tuple[type[TileReduceOp], ...] = (ReduceSumOp, ReduceMaxOp, ReduceMinOp)

Tile = Dialect(
    "tile",
    [
        LoadOp,
        StoreOp,
        MoveOp,
        MatmulOp,
        *UNARY_OPS,
        *BINARY_OPS,
        SelectOp,
        CastOp,
        *REDUCE_OPS,
        BroadcastOp,
        FillOp,
        IotaOp,
        PadOp,
        TransposeOp,
        ValidDimOp,
        ExtractOp,
        InsertOp,
        InsertRowsOp,
        GatherOp,
    ],
    [TileType, MemorySpaceAttr, LayoutAttr, PadValueAttr, RoundModeAttr, CmpModeAttr],
)
