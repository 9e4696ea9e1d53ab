"""The roofline bound of a tile-level kernel (`@pto.tile_kernel`, or tile IR
written by hand): the same resources and rates as the tv roofline
(`pypto_mlir.roofline`), with the work counted from the tile ops over their
loops.

- **cube**: every `tile.matmul`'s valid m x n x k, summed over the iterations
  of its loops;
- **vector**: every vector tile op's steps (the same `op_facts` steps as the tv
  roofline) over its largest valid operand or result, summed over its loops;
  `tile.broadcast` and `tile.pad` are not counted (a lower bound stays one);
- **data movement**: every GM memref read once on each path its loads take
  (`gm->ub`, `gm->l1`) and every output written once from the memory its
  stores come from (`ub->gm`, `l0c->gm`), each at most what the loads or
  stores cover; an L1 tile loaded from GM moves to L0A/L0B once per element of
  its memref (the tv roofline's "every matmul operand moves L1 -> L0 once");
  other on-chip moves (l0c->ub, ub->l1, ...) count what they move over their
  loops.

A tail's valid extent counts exactly: an extent that depends on one loop's
induction variable (`min(ub - i, step)` as `pto.tiles` and tv-to-tile write
it) is evaluated at every iteration of that loop, as whole numpy arrays. A
kernel the count cannot follow (a loop with non-constant bounds, `scf.if` or
`scf.while` around work, an extent of two loops' variables) has no bound:
`tile_roofline` raises ValueError and `tile_roofline_bound` gives None.
"""

from __future__ import annotations

from collections.abc import Callable
from math import prod

import numpy as np
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.traits import SymbolTable

from pypto_mlir.dialects import tile
from pypto_mlir.roofline import (
    STORAGE_BYTES,
    Roofline,
    Work,
    bounds_of,
    vector_steps,
)
from pypto_mlir.sim.report import RooflineBound
from pypto_mlir.targets import Target

_Values = int | tuple[scf.ForOp, np.ndarray]
"""An index value: a constant, or its value at each iteration of one loop."""

_BINARY: dict[type[Operation], Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    arith.AddiOp: np.add,
    arith.SubiOp: np.subtract,
    arith.MuliOp: np.multiply,
    arith.MinSIOp: np.minimum,
    arith.MinUIOp: np.minimum,
    arith.MaxSIOp: np.maximum,
    arith.MaxUIOp: np.maximum,
    arith.FloorDivSIOp: np.floor_divide,
    arith.DivUIOp: np.floor_divide,
    arith.RemUIOp: np.remainder,
    arith.CeilDivSIOp: lambda a, b: -np.floor_divide(-a, b),
    arith.CeilDivUIOp: lambda a, b: -np.floor_divide(-a, b),
}
"""Index arithmetic on non-negative values (extents and offsets)."""

_COMPARE = {
    2: np.less,  # slt
    3: np.less_equal,  # sle
    4: np.greater,  # sgt
    5: np.greater_equal,  # sge
    6: np.less,  # ult
    7: np.less_equal,  # ule
    8: np.greater,  # ugt
    9: np.greater_equal,  # uge
    0: np.equal,
    1: np.not_equal,
}

_NOT_COUNTED = (tile.BroadcastOp, tile.PadOp, tile.ValidDimOp)


class _Unbounded(ValueError):
    """The count cannot follow this kernel (no bound)."""


class _Counter:
    """Evaluates index values and valid extents of a tile function."""

    def __init__(self) -> None:
        self.values: dict[SSAValue, _Values] = {}

    def index(self, value: SSAValue) -> _Values:
        if value not in self.values:
            self.values[value] = self._evaluate(value)
        return self.values[value]

    def _evaluate(self, value: SSAValue) -> _Values:
        owner = value.owner
        if isinstance(value, BlockArgument):
            loop = value.block.parent_op()
            if isinstance(loop, scf.ForOp) and value is loop.body.block.args[0]:
                return loop, self.iterations(loop)
            raise _Unbounded(f"an index block argument {value.name_hint or ''}")
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            return owner.value.value.data
        if isinstance(owner, arith.IndexCastOp):
            return self.index(owner.input)
        if isinstance(owner, tile.ValidDimOp):
            return self.extent(owner.source, owner.dim.value.data)
        if type(owner) in _BINARY:
            assert isinstance(owner, Operation)
            return self._combine(
                _BINARY[type(owner)], [self.index(o) for o in owner.operands]
            )
        if isinstance(owner, arith.CmpiOp) and owner.predicate.value.data in _COMPARE:
            compare = _COMPARE[owner.predicate.value.data]
            return self._combine(
                compare, [self.index(owner.lhs), self.index(owner.rhs)]
            )
        if isinstance(owner, arith.SelectOp):
            return self._combine(
                np.where,
                [self.index(o) for o in owner.operands],
            )
        raise _Unbounded(f"an index computed by {getattr(owner, 'name', '?')}")

    def iterations(self, loop: scf.ForOp) -> np.ndarray:
        """The values of `loop`'s induction variable, one per iteration."""
        lb, ub, step = (self._constant(v) for v in (loop.lb, loop.ub, loop.step))
        if step <= 0:
            raise _Unbounded(f"a loop with step {step}")
        return np.arange(lb, ub, step, dtype=np.int64)

    def _constant(self, value: SSAValue) -> int:
        result = self.index(value)
        if not isinstance(result, int):
            raise _Unbounded("a loop whose bounds depend on another loop")
        return result

    @staticmethod
    def _combine(fn: Callable[..., np.ndarray], operands: list[_Values]) -> _Values:
        loops = {id(o[0]): o[0] for o in operands if not isinstance(o, int)}
        if not loops:
            return int(fn(*(np.int64(o) for o in operands)))  # pyright: ignore[reportArgumentType]
        if len(loops) > 1:
            raise _Unbounded("an index of two loops' variables")
        loop = next(iter(loops.values()))
        arrays = [o if isinstance(o, int) else o[1] for o in operands]
        return loop, np.asarray(fn(*arrays), dtype=np.int64)

    def extent(self, value: SSAValue, dim: int) -> _Values:
        """The valid extent of `dim` of the tile `value`."""
        value_type = value.type
        assert isinstance(value_type, tile.TileType)
        static = value_type.get_valid()[dim]
        if static != tile.DYNAMIC_INDEX:
            return static
        if isinstance(value, BlockArgument):
            loop = value.block.parent_op()
            if isinstance(loop, scf.ForOp) and value.index > 0:
                # A carried tile (`fold`'s accumulator) has its init's extents.
                return self.extent(loop.iter_args[value.index - 1], dim)
        if isinstance(value, OpResult) and isinstance(value.owner, scf.ForOp):
            return self.extent(value.owner.iter_args[value.index], dim)
        origin = tile.valid_extent_origin(value, dim)
        if origin is None:
            raise _Unbounded("a valid extent of unknown origin")
        if isinstance(origin, tuple):
            return self.extent(*origin)
        return self.index(origin)

    def count(self, op: Operation, extents: list[_Values]) -> float:
        """The sum over `op`'s loop iterations of the product of `extents`."""
        per_loop: dict[int, np.ndarray] = {}
        total = 1.0
        for extent in extents:
            if isinstance(extent, int):
                total *= extent
            else:
                loop, values = extent
                per_loop[id(loop)] = per_loop.get(id(loop), 1) * values
        for loop in _loops(op):
            if id(loop) in per_loop:
                total *= float(per_loop[id(loop)].sum())
            else:
                total *= len(self.iterations(loop))
        return total

    def elements(self, op: Operation, value: SSAValue) -> float:
        value_type = value.type
        assert isinstance(value_type, tile.TileType)
        rank = len(value_type.get_shape())
        return self.count(op, [self.extent(value, d) for d in range(rank)])


def _loops(op: Operation) -> list[scf.ForOp]:
    """The scf.for loops around `op` up to its function; anything else between
    them is an error (the count would not know how often it runs)."""
    loops: list[scf.ForOp] = []
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if not isinstance(parent, scf.ForOp):
            raise _Unbounded(f"work inside {parent.name}")
        loops.append(parent)
        parent = parent.parent_op()
    return loops


def _space(value: SSAValue) -> str:
    value_type = value.type
    assert isinstance(value_type, tile.TileType)
    return str(value_type.space.data)


def _element(value_type: Attribute) -> str:
    if isinstance(value_type, tile.TileType | MemRefType):
        return str(value_type.element_type)
    return str(value_type)


def _memref_bytes(value: SSAValue) -> int:
    value_type = value.type
    assert isinstance(value_type, MemRefType)
    return prod(value_type.get_shape()) * STORAGE_BYTES[_element(value_type)]


def _gm_source(value: SSAValue) -> SSAValue | None:
    """The GM memref an L1 tile was loaded from, else None."""
    owner = value.owner
    return owner.source if isinstance(owner, tile.LoadOp) else None


def tile_roofline(module: ModuleOp, name: str, target: Target) -> Roofline:
    """The roofline of the tile-level `func.func @name` of `module` on `target`."""
    function = SymbolTable.lookup_symbol(module, name)
    if not isinstance(function, func.FuncOp):
        raise ValueError(f"no func.func @{name} in the module")
    counter = _Counter()
    work = Work(target)
    gm: dict[tuple[SSAValue, str, str], float] = {}
    """Per (memref, src, dst), in walk order: the bytes the loads or stores
    cover."""
    l1_sources: dict[tuple[SSAValue, str], None] = {}
    """The (memref, l0a/l0b) of L1 tiles loaded from GM and moved to L0, in
    walk order (a dict: deterministic, unlike a set of values)."""
    for op in function.walk():
        if isinstance(op, tile.LoadOp | tile.StoreOp):
            if isinstance(op, tile.LoadOp):
                memref, value = op.source, op.result
                key = (memref, "gm", _space(value))
            else:
                memref, value = op.dest, op.value
                key = (memref, _space(value), "gm")
            nbytes = counter.elements(op, value) * STORAGE_BYTES[_element(memref.type)]
            gm[key] = gm.get(key, 0.0) + nbytes
        elif isinstance(op, tile.MoveOp):
            src, dst = _space(op.source), _space(op.result)
            source = _gm_source(op.source)
            if src == "l1" and dst in ("l0a", "l0b") and source is not None:
                l1_sources[(source, dst)] = None
            else:
                work.move(
                    src,
                    dst,
                    counter.elements(op, op.result)
                    * STORAGE_BYTES[_element(op.result.type)],
                )
        elif isinstance(op, tile.MatmulOp):
            extents = [
                counter.extent(op.lhs, 0),
                counter.extent(op.rhs, 1),
                counter.extent(op.lhs, 1),
            ]
            dtype = _element(op.lhs.type)
            work.macs[dtype] = work.macs.get(dtype, 0.0) + counter.count(op, extents)
        elif op.name.startswith("tile.") and not isinstance(op, _NOT_COUNTED):
            _vector_op(work, counter, op)
    for (memref, src, dst), nbytes in gm.items():
        work.move(src, dst, min(nbytes, _memref_bytes(memref)))
    for memref, l0 in l1_sources:
        work.move("l1", l0, _memref_bytes(memref))
    return bounds_of(work, target)


def _vector_op(work: Work, counter: _Counter, op: Operation) -> None:
    tiles = [
        v for v in (*op.operands, *op.results) if isinstance(v.type, tile.TileType)
    ]
    if not tiles:
        return
    counts = [counter.elements(op, v) for v in tiles]
    elements = max(counts)
    dtype = _element(tiles[0].type)
    name = op.name.removeprefix("tile.")
    if isinstance(op, tile.CastOp):
        widths = [STORAGE_BYTES.get(_element(v.type), 4) for v in tiles]
        dtype = _element(tiles[widths.index(max(widths))].type)
    scalar = any(not isinstance(v.type, tile.TileType) for v in op.operands)
    for step in vector_steps(name, scalar):
        work.vector(step, elements, dtype)


def tile_roofline_bound(
    module: ModuleOp, name: str, target: Target
) -> RooflineBound | None:
    """`tile_roofline(...).summary`, or None for a kernel it cannot bound."""
    try:
        return tile_roofline(module, name, target).summary
    except ValueError:
        return None
