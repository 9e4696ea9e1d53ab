"""What a tile op family's lowering answers, and the facts of the nest it asks.

A `TileOpStrategy` is the one place a family of tile ops (the classes in its
`ops`) says everything instruction selection needs of it: which operands its
result may overwrite (`inplace`, for memory planning), which scratch buffers its
instructions need (`scratch`, with the static valid extents) and an upper bound
of their bytes over the tile sizes of a nest being tiled (`scratch_terms`, for
the tiling model), which tile operands it reads through (`reads_through`:
the scalar of their `tile.fill`, so a fill only such uses read gets no
instructions), and its instructions (`lower`). `scratch` and `scratch_terms`
are declared together: a class that defines one must define the other
(`TileOpStrategy.__init_subclass__`); a strategy without scratch derives from
`NoScratch`, which answers both; a cast's bound is derived from the same layout
as its buffers; `test_lowering_fuzz` checks that the bound holds on random
nests.

`IselContext` is what every strategy reads: the target, the static valid
extents of every tile, and the shapes derived from them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from xdsl.ir import Attribute, Operation, SSAValue

from pypto_mlir.diagnostics import op_error
from pypto_mlir.dialects import ascend_hw as hw
from pypto_mlir.dialects import tile
from pypto_mlir.passes.hw_isel.emitter import (
    BufferOf,
    Emitter,
    Kind,
    Region,
    Valid,
    as_tile,
    matrix_shape,
    matrix_valid,
)
from pypto_mlir.targets import Target

Term = tuple[Fraction, tuple[bool, ...]]
"""(bytes per element, spans): bytes per element times the extents of the tile
dims the term spans."""

SpansOf = Callable[[SSAValue], tuple[bool, ...]]
"""The tile dims of the probe nest a value's extents span."""


@dataclass(frozen=True)
class Terms:
    """Builds the `scratch_terms` of an op over the dims `spans_of` gives."""

    spans_of: SpansOf

    def term(
        self, value: SSAValue, per: Fraction | int, rows: bool = True, cols: bool = True
    ) -> Term:
        """`per` bytes per element of `value`'s rows (`rows`) and columns (`cols`)."""
        full = self.spans_of(value)
        last = len(full) - 1
        kept = tuple(
            spanned and (cols if d == last else rows) for d, spanned in enumerate(full)
        )
        return Fraction(per), kept

    def constant(self, value: SSAValue, count: int) -> Term:
        """`count` bytes, whatever the tile sizes."""
        return self.term(value, count, rows=False, cols=False)


class IselContext:
    """The target and the static valid extents of every tile of a function."""

    def __init__(
        self, target: Target, valid: dict[SSAValue, Valid], block_reduce: bool = True
    ):
        self.target = target
        self.valid = valid
        self.block_reduce = block_reduce
        """Row maxima and minima of whole blocks by `vblock_reduce_*`
        (tile-to-hw's `block-reduce`; hw_isel/reductions.py)."""
        self.block = hw.vector_block_bytes(target)
        self.blocks_per_repeat = target.vector.repeat_bytes // self.block

    def region(self, value: SSAValue) -> Region:
        """The valid region of tile `value` in its buffer."""
        tile_type = as_tile(value)
        rows, cols = matrix_valid(tile_type, self.valid[value])
        return Region(rows, cols, matrix_shape(tile_type)[1])

    def lanes_for(self, element_type: Attribute) -> int:
        """Elements of `element_type` in one vector repeat."""
        return self.target.vector.repeat_bytes // tile.element_bytes(element_type)

    def per_block(self, element_type: Attribute) -> int:
        """Elements of `element_type` in one 32-byte block."""
        return self.block // tile.element_bytes(element_type)

    def check_vector_shape(
        self, op: Operation, value: SSAValue, bytes_ok: bool = False
    ) -> None:
        """Vector ops cover 2-D regions of 16/32-bit elements (`bytes_ok`: the op
        moves 8-bit ones through 16-bit instructions)."""
        tile_type = as_tile(value)
        shape, valid = tile_type.get_shape(), self.valid[value]
        if len(shape) > 2 and any(
            v != s for v, s in zip(valid[1:-1], shape[1:-1], strict=True)
        ):
            raise op_error(
                op,
                f"a {len(shape)}-D tile needs whole inner dims: valid "
                f"{list(valid)} of shape {list(shape)}",
            )
        if tile.element_bytes(tile_type.element_type) == 1 and not bytes_ok:
            raise op_error(
                op, f"the vector unit has no {tile_type.element_type} instructions"
            )

    def operand_lanes(self, value: SSAValue, result: SSAValue) -> tuple[Kind, int]:
        """How a (possibly broadcast) operand maps onto the result region, and the
        number of valid values a block-broadcast operand holds."""
        shape = matrix_shape(as_tile(value))
        rows, cols = matrix_shape(as_tile(result))
        valid_rows, _ = matrix_valid(as_tile(value), self.valid[value])
        if shape == (rows, cols):
            return Kind.FULL, 0
        if shape == (1, 1):
            return Kind.SPLAT_BLOCK, 1
        if shape == (rows, 1):
            return Kind.ROW_BLOCK, valid_rows
        assert shape == (1, cols)
        return Kind.ROW_VECTOR, 0

    def fully_valid(self, value: SSAValue) -> bool:
        """Whether tile `value`'s valid region is its whole shape."""
        return self.valid[value] == as_tile(value).get_shape()


class TileOpStrategy(IselContext, ABC):
    """The lowering of one family of tile ops (`ops`): one instance per function."""

    ops: ClassVar[tuple[type[Operation], ...]]
    """The tile op classes this strategy lowers."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        """A class answers `scratch` and `scratch_terms` together or neither:
        the two answers of a family stand side by side."""
        super().__init_subclass__(**kwargs)
        answers = {"scratch", "scratch_terms"} & set(vars(cls))
        if len(answers) == 1:
            raise TypeError(
                f"{cls.__name__} defines {answers.pop()} without its pair "
                "(scratch and scratch_terms)"
            )

    def inplace(self, op: Operation) -> tuple[int, ...]:
        """Operands whose buffer the result may take over when they die at `op`
        (none unless the family's instructions read each element before writing it)."""
        return ()

    def reads_through(self, op: Operation) -> tuple[int, ...]:
        """Tile operands whose buffer `op`'s instructions never read: they take
        the scalar the operand's `tile.fill` holds instead (a `vcmps`), so a
        fill that only such uses read writes nothing (`Selector.unread`)."""
        return ()

    @abstractmethod
    def scratch(self, op: Operation) -> list[hw.BufferType]:
        """The scratch buffers `op` needs while it executes, in `lower`'s order."""

    @abstractmethod
    def scratch_terms(self, op: Operation, terms: Terms) -> list[Term]:
        """An upper bound of the bytes of `scratch(op)` for the tiling model, as
        (bytes per element, spans) terms over the nest's tile sizes: a term spans
        the tile dims `terms.spans_of(value)` gives for a tile of the probe nest
        the model measures (whose valid extents are not known yet: the physical
        ones bound them), no dims for a constant."""

    @abstractmethod
    def lower(
        self, op: Operation, em: Emitter, buffer: BufferOf, scratch: list[SSAValue]
    ) -> Sequence[SSAValue] | None:
        """Emit the instructions of `op` through `em` (before `op`); return the
        values that replace `op`'s results, or None when its results are tiles
        (whose buffers `buffer` gives)."""


class NoScratch(TileOpStrategy, ABC):
    """A family whose instructions need no scratch: both answers are empty."""

    def scratch(self, op: Operation) -> list[hw.BufferType]:
        return []

    def scratch_terms(self, op: Operation, terms: Terms) -> list[Term]:
        return []
