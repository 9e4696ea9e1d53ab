"""The trace of a tile kernel: where `@pto.tile_kernel` records `tile` ops.

`TileTrace` is the tensor-level `Trace` (location stamping, verification,
constants) with what loops over tiles need: loop bodies are built detached and
inserted when they end, constants go to the top of the function, and the
blocks in scope are a stack, so that a value used outside the loop that made
it is a located error. Also the memories (`pto.UB` ...) and `pto.auto`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from pypto_mlir.dialects.tile import MemorySpace
from pypto_mlir.frontend.errors import kernel_error
from pypto_mlir.frontend.tensor import Trace
from pypto_mlir.targets import Target

UB = MemorySpace.UB
L1 = MemorySpace.L1
L0A = MemorySpace.L0A
L0B = MemorySpace.L0B
L0C = MemorySpace.L0C
MEMORIES: tuple[MemorySpace, ...] = (UB, L1, L0A, L0B, L0C)


class Auto:
    """`pto.auto`: a tile dim whose extent the compiler chooses."""

    _instance: Auto | None = None

    def __new__(cls) -> Auto:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "pto.auto"


auto = Auto()

Extent = int | SSAValue
"""A valid extent: static, or an `index` value known at run time."""


# --------------------------------------------------------------------------------------
# The trace of a tile kernel
# --------------------------------------------------------------------------------------


class TileTrace(Trace):
    """The `func.func` of a tile kernel being recorded.

    Constants go to the top of the function (loop bodies are built detached and
    inserted when they close); the blocks in scope are a stack, so a tile used
    outside the loop that computed it is a located error, not an invalid module.
    `probing` counts the open loops of grids measured with probe sizes
    (`tile_loops`): their tiles are not padded or checked against the target.
    """

    def __init__(self, function: func.FuncOp, target: Target) -> None:
        self.entry = function.body.block
        super().__init__(self.entry)
        self.target = target
        self.scopes: list[tuple[Block, str]] = [(self.entry, "")]
        self._last_constant: Operation | None = None
        self._indices: dict[int, SSAValue] = {}
        self.probing = 0
        self.grid_count = 0
        """Grids made so far: a grid's ordinal names it across the two traces
        of a kernel with pto.auto (`tile_loops`)."""
        self.sizing: dict[int, tuple[int | None, ...]] = {}
        """The steps chosen for each grid with pto.auto, by ordinal."""
        self.requests: dict[int, Any] = {}
        """The grids measured with probe steps (`tile_loops.AutoRequest`)."""
        self.open_loops: list[Any] = []
        """The `for` loops over tiles not ended yet."""
        self.stored: set[str] = set()
        """The tensors stored to, for the check that every output is written."""

    def insert(self, op: Operation) -> Operation:  # type: ignore[override]
        self._check_operands(op)
        if not isinstance(op, arith.ConstantOp):
            return super().insert(op)
        point = (
            InsertPoint.after(self._last_constant)
            if self._last_constant is not None
            else InsertPoint.at_start(self.entry)
        )
        body, self._builder = self._builder, Builder(point)
        try:
            self._last_constant = super().insert(op)
        finally:
            self._builder = body
        return op

    def _check_operands(self, op: Operation) -> None:
        open_blocks = {id(block) for block, _ in self.scopes}
        for operand in op.operands:
            block = (
                operand.block
                if isinstance(operand, BlockArgument)
                else operand.owner.parent_block()
            )
            if block is not None and id(block) not in open_blocks:
                raise kernel_error(
                    "this value was computed inside a tile loop that has ended; a "
                    "loop cannot hand values to the code after it, carry them with "
                    "pto.tiles(...).fold(body, init)"
                )

    def index(self, value: Extent) -> SSAValue:
        """`value` as an `index` SSA value (one constant per number)."""
        if isinstance(value, SSAValue):
            return value
        if value not in self._indices:
            constant = arith.ConstantOp(IntegerAttr(value, IndexType()))
            self._indices[value] = self.insert(constant).results[0]
        return self._indices[value]

    @contextmanager
    def inside(self, block: Block, what: str) -> Iterator[None]:
        """Record into `block` (a loop body) until the context ends."""
        saved = self._builder
        self._builder = Builder(InsertPoint.at_end(block))
        self.scopes.append((block, what))
        try:
            yield
        finally:
            self.scopes.pop()
            self._builder = saved

    def push(self, block: Block, what: str) -> Builder:
        """Start recording into `block`; `pop` ends it (for `for` loops)."""
        saved = self._builder
        self._builder = Builder(InsertPoint.at_end(block))
        self.scopes.append((block, what))
        return saved

    def pop(self, saved: Builder) -> None:
        self.scopes.pop()
        self._builder = saved

    def tail(self, extent: int, offset: Extent, step: int) -> Extent:
        """The valid extent `min(step, extent - offset)` of a tile at `offset`
        (a multiple of `step`), as tv-to-tile computes it."""
        if isinstance(offset, int):
            return min(step, extent - offset)
        if extent % step == 0:
            return step
        left = self.insert(arith.SubiOp(self.index(extent), offset)).results[0]
        step_value = self.index(step)
        less = self.insert(arith.CmpiOp(left, step_value, "slt")).results[0]
        return self.insert(arith.SelectOp(less, left, step_value)).results[0]


_active: list[TileTrace] = []


@contextmanager
def tile_tracing(trace: TileTrace) -> Iterator[TileTrace]:
    _active.append(trace)
    try:
        yield trace
    finally:
        _active.pop()


def active_tile_trace(what: str) -> TileTrace:
    if not _active:
        raise kernel_error(f"{what} can only be used inside a @pto.tile_kernel")
    return _active[-1]


def current_target() -> Target:
    """`pto.target()`: the chip the tile kernel is being traced for, so that a
    kernel can size its tiles from its memories."""
    return active_tile_trace("pto.target()").target
