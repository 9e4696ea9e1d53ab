"""Tile views: the tile level of the kernel frontend (docs/tile_views.md).

Inside a `@pto.tile_kernel` the parameters are tensors in GM (`GmTensor`) and
the author moves tiles of them through the on-chip memories: `pto.load` copies
the tile of a tensor at a tile index into `pto.UB` or `pto.L1`, `pto.move`
takes it on to L0A/L0B (or back), `pto.matmul` runs the cube, the `pto.*`
elementwise functions, reductions, casts and broadcasts run the vector unit on
UB tiles, and `pto.store` writes a UB or L0C tile back. Each records one `tile`
op (docs/tile.md), located at the author's line; every rule the hardware puts on
a tile (the memory it fits, the memory an op runs in, agreeing shapes) is checked
as the op is recorded, so a mistake is a `KernelError` at that line.

A `TileView` declares a tile (shape, element type, memory, optionally its valid
shape): the article's `PyptoTileView<half> A_tile({16, 16}, UB)`. A dim given
as `pto.auto` takes the extent of the tile index it is loaded at, which the
compiler sizes (`pypto_mlir.frontend.tile_loops`). Physical shapes are padded
to the memory's alignment (nd rows) or to whole fractals (nz), with the real
extent as the valid shape, as `tv-to-tile` does.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

import numpy as np
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.ir import Operation, SSAValue

from pypto_mlir.dialects import tile
from pypto_mlir.dialects.common import Layout
from pypto_mlir.dialects.tile import (
    FIXPIPE_CONVERSIONS,
    MOVE_PATHS,
    MemorySpace,
    PadValue,
    TileType,
    element_bytes,
    fractal_edge,
)
from pypto_mlir.frontend.dtypes import DType, dtype_of
from pypto_mlir.frontend.errors import kernel_error
from pypto_mlir.frontend.tensor import Scalar, format_shape
from pypto_mlir.frontend.tile_trace import (
    L0A,
    L0B,
    L0C,
    L1,
    UB,
    Auto,
    Extent,
    TileTrace,
    active_tile_trace,
    auto,
)

# --------------------------------------------------------------------------------------
# Tile views, tile indices, GM tensors and their tiles
# --------------------------------------------------------------------------------------


def _memory(what: str, memory: object) -> MemorySpace:
    if isinstance(memory, MemorySpace):
        return memory
    raise kernel_error(
        f"{what}: the memory is one of pto.UB, pto.L1, pto.L0A, pto.L0B, pto.L0C, "
        f"got {memory!r}"
    )


def _is_size(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


class TileView:
    """A declared tile: `pto.TileView((64, 128), pto.f16, pto.UB)`.

    `shape` holds sizes > 0 or `pto.auto` (the extent of the tile index it is
    loaded at); `valid` the valid shape for a tail tile (static); `layout`
    `"nd"` or `"nz"` (default: nz for 2-D L1 tiles, which feed the cube, nd for
    UB). The physical shape is padded to the memory's alignment.
    """

    __slots__ = ("shape", "dtype", "memory", "valid", "layout")

    def __init__(
        self,
        shape: Sequence[int | Auto] | int | Auto,
        dtype: DType,
        memory: MemorySpace = UB,
        valid: Sequence[int] | None = None,
        layout: str | None = None,
    ) -> None:
        dims = tuple(shape) if isinstance(shape, Sequence) else (shape,)
        if not dims or not all(d is auto or (_is_size(d) and d > 0) for d in dims):
            raise kernel_error(
                f"pto.TileView: the shape is a tuple of sizes > 0 or pto.auto, got "
                f"{shape!r}"
            )
        if len(dims) > 2:
            raise kernel_error(
                f"pto.TileView: a tile has one or two dims, got {len(dims)}"
            )
        if not isinstance(dtype, DType):
            raise kernel_error(f"pto.TileView: expected a pto dtype, got {dtype!r}")
        self.shape: tuple[int | Auto, ...] = tuple(
            d if d is auto else int(d)  # pyright: ignore[reportArgumentType]
            for d in dims
        )
        self.dtype = dtype
        self.memory = _memory("pto.TileView", memory)
        self.valid: tuple[int, ...] | None = None
        if valid is not None:
            extents = tuple(valid)
            if len(extents) != len(dims) or not all(
                _is_size(v) and v >= 1 and (d is auto or v <= d)
                for v, d in zip(extents, dims, strict=True)
            ):
                raise kernel_error(
                    f"pto.TileView: the valid shape {valid!r} must give one extent "
                    f"per dim, each in [1, {format_shape(self.shape)}]"
                )
            self.valid = tuple(int(v) for v in extents)
        if layout not in (None, "nd", "nz"):
            raise kernel_error(f"pto.TileView: layout is 'nd' or 'nz', got {layout!r}")
        self.layout = layout

    def __repr__(self) -> str:
        valid = "" if self.valid is None else f", valid={format_shape(self.valid)}"
        return (
            f"pto.TileView({format_shape(self.shape)}, {self.dtype!r}, "
            f"pto.{self.memory.name}{valid})"
        )

    def load(self, region: object) -> Tile:
        """`pto.load(region, self)`."""
        return load(region, self)

    def full(self, value: object, valid: Sequence[Extent] | None = None) -> Tile:
        """`pto.full(self, value, valid)`."""
        return full(self, value, valid)


@dataclass(frozen=True, eq=False)
class TileIndex:
    """The tile a loop of `pto.tiles` is at along one dim: its first element
    (`offset`), the tile extent (`step`), the dim's size and the valid extent of
    this tile (the tail: smaller at the end)."""

    offset: Extent
    step: int
    extent: int
    valid: Extent
    probe: bool = False
    """Sized with a probe step (a grid with pto.auto being measured)."""

    def __repr__(self) -> str:
        return f"<tile index: {self.step} of {self.extent}>"

    def __index__(self) -> int:
        raise kernel_error(
            "a tile index is not a Python integer: use it to index a tensor, x[i, j]"
        )

    def _arith(self, other: object) -> NoReturn:
        raise kernel_error(
            "arithmetic on tile indices is not supported; index a tensor with them "
            "(x[i, j]) or take a fixed tile with pto.tiles(...)[n, m]"
        )

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _arith


@dataclass(frozen=True)
class Region:
    """The window of a GM tensor one tile covers: per tensor dim its start, the
    tile extent and the valid extent."""

    tensor: GmTensor
    offsets: tuple[Extent, ...]
    extents: tuple[int, ...]
    valid: tuple[Extent, ...]
    probe: bool

    @property
    def rank(self) -> int:
        return min(2, len(self.extents))

    @property
    def tile_extents(self) -> tuple[int, ...]:
        return self.extents[len(self.extents) - self.rank :]

    @property
    def tile_valid(self) -> tuple[Extent, ...]:
        return self.valid[len(self.valid) - self.rank :]


class GmTensor:
    """A tensor parameter (or output) of a tile kernel: a memref in GM. Indexed
    with tile indices, integers or slices, it is the `Region` of one tile."""

    __slots__ = ("value", "trace", "name", "is_output")

    def __init__(
        self, value: SSAValue, trace: TileTrace, name: str, is_output: bool
    ) -> None:
        self.value = value
        self.trace = trace
        self.name = name
        self.is_output = is_output

    @property
    def type(self) -> MemRefType:
        value_type = self.value.type
        assert isinstance(value_type, MemRefType)
        return value_type

    @property
    def shape(self) -> tuple[int, ...]:
        return self.type.get_shape()

    @property
    def dtype(self) -> DType:
        return dtype_of(self.type.get_element_type())

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"<GM tensor {self.name} {format_shape(self.shape)} {self.dtype}>"

    def _compute(self, *args: object) -> NoReturn:
        raise kernel_error(
            f"'{self.name}' is a tensor in GM: a tile kernel computes on tiles, load "
            f"one with pto.load({self.name}[i, j])"
        )

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _compute
    __truediv__ = __rtruediv__ = __neg__ = __matmul__ = _compute

    def __getitem__(self, key: object) -> Region:
        keys = key if isinstance(key, tuple) else (key,)
        if len(keys) > self.ndim:
            raise kernel_error(
                f"{self.name}[...]: {len(keys)} indices for a rank-{self.ndim} tensor"
            )
        keys = keys + (slice(None),) * (self.ndim - len(keys))
        offsets: list[Extent] = []
        extents: list[int] = []
        valid: list[Extent] = []
        probe = False
        for dim, (index, size) in enumerate(zip(keys, self.shape, strict=True)):
            if isinstance(index, TileIndex):
                if index.extent != size:
                    raise kernel_error(
                        f"{self.name}[...]: the tile index of dim {dim} steps over "
                        f"{index.extent} elements, but {self.name} has {size} there; "
                        "tensors iterated in step must agree in shape"
                    )
                offsets.append(index.offset)
                extents.append(min(index.step, size))
                valid.append(index.valid)
                probe = probe or index.probe
            elif isinstance(index, slice):
                start, stop, step = index.indices(size)
                if step != 1 or stop <= start:
                    raise kernel_error(
                        f"{self.name}[...]: dim {dim} takes a non-empty slice with "
                        f"step 1, got {index!r}"
                    )
                offsets.append(start)
                extents.append(stop - start)
                valid.append(stop - start)
            elif _is_size(index):
                if not 0 <= index < size:  # pyright: ignore[reportOperatorIssue]
                    raise kernel_error(
                        f"{self.name}[...]: index {index} is out of range for dim "
                        f"{dim} of size {size}"
                    )
                offsets.append(int(index))  # pyright: ignore[reportArgumentType]
                extents.append(1)
                valid.append(1)
            else:
                raise kernel_error(
                    f"{self.name}[...]: index dims with tile indices (from "
                    f"pto.tiles), integers or slices, got {index!r}"
                )
        leading = extents[: max(0, len(extents) - 2)]
        if any(e != 1 for e in leading):
            raise kernel_error(
                f"{self.name}[...]: a tile spans the last two dims; index the leading "
                "dims with integers or tile indices of step 1"
            )
        return Region(self, tuple(offsets), tuple(extents), tuple(valid), probe)


class Tile:
    """A tile while a tile kernel is traced: an SSA value of `!tile.tile` type,
    with the valid extent of each dim (a number or the `index` value that holds
    it at run time)."""

    __slots__ = ("value", "trace", "valid_extents")

    def __init__(
        self, value: SSAValue, trace: TileTrace, valid_extents: Sequence[Extent]
    ) -> None:
        self.value = value
        self.trace = trace
        self.valid_extents = tuple(valid_extents)

    @property
    def type(self) -> TileType:
        value_type = self.value.type
        assert isinstance(value_type, TileType)
        return value_type

    @property
    def shape(self) -> tuple[int, ...]:
        """The physical shape."""
        return self.type.get_shape()

    @property
    def dtype(self) -> DType:
        return dtype_of(self.type.element_type)

    @property
    def memory(self) -> MemorySpace:
        return self.type.memory_space

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"<tile {describe(self.type)}>"

    def __bool__(self) -> bool:
        raise kernel_error("a traced tile has no truth value")

    def _compare(self, other: object) -> NoReturn:
        raise kernel_error(
            "comparisons of tiles are not supported in a tile kernel (tile.select "
            "is written in tile IR); pto.where takes comparisons of tensors"
        )

    __lt__ = __le__ = __gt__ = __ge__ = _compare  # type: ignore[assignment]

    # Operators: the vector unit (and @ the cube).

    def __add__(self, other: object) -> Tile:
        return binary("add", "+", self, other)

    def __radd__(self, other: object) -> Tile:
        return binary("add", "+", other, self)

    def __sub__(self, other: object) -> Tile:
        return binary("sub", "-", self, other)

    def __rsub__(self, other: object) -> Tile:
        return binary("sub", "-", other, self)

    def __mul__(self, other: object) -> Tile:
        return binary("mul", "*", self, other)

    def __rmul__(self, other: object) -> Tile:
        return binary("mul", "*", other, self)

    def __truediv__(self, other: object) -> Tile:
        return binary("div", "/", self, other)

    def __rtruediv__(self, other: object) -> Tile:
        return binary("div", "/", other, self)

    def __neg__(self) -> Tile:
        return unary("neg", "-", self)

    def __abs__(self) -> Tile:
        return unary("abs", "abs", self)

    def __matmul__(self, other: object) -> Tile:
        return matmul(self, other)

    def sum(self, axis: int) -> Tile:
        """`tile.reduce_sum` along `axis` (the dim is kept, as 1)."""
        return reduce("sum", self, axis)

    def max(self, axis: int) -> Tile:
        return reduce("max", self, axis)

    def min(self, axis: int) -> Tile:
        return reduce("min", self, axis)

    def astype(self, dtype: DType) -> Tile:
        return cast(self, dtype)

    @property
    def T(self) -> Tile:  # noqa: N802 (numpy's name)
        return transpose(self)

    def pad(self, value: str = "zero") -> Tile:
        """`tile.pad`: fill the elements outside the valid region."""
        return pad(self, value)

    def broadcast_to(
        self, shape: Sequence[int], valid: Sequence[Extent] | None = None
    ) -> Tile:
        return broadcast(self, shape, valid)


def describe(tile_type: TileType) -> str:
    """`f16[64x128] in ub (valid [?, 100])`: how messages show a tile."""
    shape = "x".join(str(d) for d in tile_type.get_shape())
    text = f"{tile_type.element_type}[{shape}] in {tile_type.memory_space}"
    if not tile_type.is_fully_valid():
        valid = ", ".join(
            "?" if v == DYNAMIC_INDEX else str(v) for v in tile_type.get_valid()
        )
        text += f" (valid [{valid}])"
    return text


# --------------------------------------------------------------------------------------
# Checks
# --------------------------------------------------------------------------------------


def _check_fits(trace: TileTrace, tile_type: TileType, what: str) -> None:
    """A tile larger than its memory of the target is the author's mistake."""
    if trace.probing:
        return
    space = str(tile_type.memory_space)
    memory = trace.target.memories[space]
    needed = tile_type.byte_size()
    assert memory.size is not None
    if needed > memory.size:
        raise kernel_error(
            f"{what}: the tile {describe(tile_type)} needs {needed} bytes, but {space} "
            f"of {trace.target.name} holds {memory.size} bytes"
        )


def _tile_operand(what: str, value: object) -> Tile:
    if isinstance(value, Tile):
        return value
    if isinstance(value, GmTensor):
        value._compute()
    raise kernel_error(f"{what}: expected a tile, got {type(value).__name__}")


def _in_memory(
    what: str, t: Tile, spaces: Sequence[MemorySpace], reason: str, fix: str = ""
) -> None:
    if t.memory not in spaces:
        names = " or ".join(str(s) for s in spaces)
        raise kernel_error(
            f"{what}: the tile {describe(t.type)} is not in {names}: {reason}"
            + (f"; {fix}" if fix else "")
        )


def _vector(what: str, *tiles: Tile) -> None:
    for t in tiles:
        fix = "move it with pto.move(t, pto.UB)" if (t.memory, UB) in MOVE_PATHS else ""
        _in_memory(what, t, (UB,), "the vector unit computes on ub tiles", fix)


def _same_extent(a: Extent, b: Extent) -> bool:
    return a is b if isinstance(a, SSAValue) or isinstance(b, SSAValue) else a == b


def _format_extents(extents: Sequence[Extent]) -> str:
    return format_shape(["?" if isinstance(e, SSAValue) else e for e in extents])


def _result(
    trace: TileTrace, op: Operation, valid: Sequence[Extent], what: str
) -> Tile:
    result = op.results[0]
    assert isinstance(result.type, TileType)
    _check_fits(trace, result.type, what)
    trace.insert(op)
    return Tile(result, trace, valid)


def _tile_type(
    trace: TileTrace,
    shape: Sequence[int],
    dtype: DType,
    memory: MemorySpace,
    valid: Sequence[Extent],
    layout: Layout | None = None,
    pad: PadValue | None = None,
) -> tuple[TileType, list[SSAValue]]:
    """The type of a tile with these valid extents and the `index` operands of
    its `?` ones."""
    static = [v if isinstance(v, int) else DYNAMIC_INDEX for v in valid]
    dynamic = [v for v in valid if isinstance(v, SSAValue)]
    return TileType(shape, dtype.element_type, memory, static, layout, pad), dynamic


def _physical(
    trace: TileTrace,
    extents: Sequence[int],
    dtype: DType,
    memory: MemorySpace,
    layout: Layout,
    probe: bool,
) -> tuple[int, ...]:
    """The physical shape holding `extents`: nd rows padded to the memory's
    alignment, nz tiles to whole fractals (not while probing)."""
    if probe:
        return tuple(extents)
    if layout == Layout.NZ:
        edge = fractal_edge(dtype.element_type, trace.target)
        return tuple(-(-e // edge) * edge for e in extents)
    alignment = trace.target.memories[str(memory)].alignment
    size = element_bytes(dtype.element_type)
    unit = alignment // math.gcd(alignment, size)
    *rows, cols = extents
    return (*rows, cols if cols <= 1 else -(-cols // unit) * unit)


# --------------------------------------------------------------------------------------
# Data movement
# --------------------------------------------------------------------------------------


def load(region: object, into: TileView | MemorySpace | None = None) -> Tile:
    """Copy the tile of a tensor at a tile index into `into` (a `TileView`, or a
    memory: pto.UB, the default, or pto.L1)."""
    what = "pto.load"
    trace = active_tile_trace(what)
    if not isinstance(region, Region):
        raise kernel_error(
            f"{what}: expected the tile of a tensor, x[i, j], got {region!r}"
        )
    tensor = region.tensor
    view = into if isinstance(into, TileView) else None
    memory = UB if into is None else (view.memory if view else _memory(what, into))
    if memory not in (UB, L1):
        raise kernel_error(
            f"{what}: loads go from GM to ub or l1, not {memory}; load into pto.L1 "
            f"and move the tile on with pto.move(t, pto.{memory.name})"
        )
    dtype = tensor.dtype
    if view is not None and view.dtype is not dtype:
        raise kernel_error(
            f"{what}: the view holds {view.dtype} but {tensor.name} is {dtype}; a "
            "load does not convert (cast the UB tile with t.astype(...))"
        )
    extents = region.tile_extents
    valid = list(region.tile_valid)
    if view is not None:
        if len(view.shape) != len(extents):
            raise kernel_error(
                f"{what}: the view is rank {len(view.shape)} but the tile of "
                f"{tensor.name} is rank {len(extents)}"
            )
        for dim, (declared, extent) in enumerate(zip(view.shape, extents, strict=True)):
            if isinstance(declared, int) and declared < extent:
                raise kernel_error(
                    f"{what}: the view {view!r} holds {declared} elements along dim "
                    f"{dim}, but the tile of {tensor.name} spans {extent}"
                )
        extents = tuple(
            e if d is auto else int(d)  # pyright: ignore[reportArgumentType]
            for d, e in zip(view.shape, extents, strict=True)
        )
        if view.valid is not None:
            for dim, (declared, actual) in enumerate(
                zip(view.valid, valid, strict=True)
            ):
                if not _same_extent(declared, actual):
                    raise kernel_error(
                        f"{what}: the view's valid shape "
                        f"{format_shape(view.valid)} disagrees with the tile of "
                        f"{tensor.name}, valid {_format_extents(valid)} (dim {dim}); "
                        "leave valid= out to take the tile's"
                    )
    layout = _layout(view, memory, len(extents))
    physical = _physical(trace, extents, dtype, memory, layout, region.probe)
    partial = any(
        not isinstance(v, int) or v != p for v, p in zip(valid, physical, strict=True)
    )
    pad = PadValue.ZERO if memory is L1 and partial else None
    result_type, dynamic = _tile_type(
        trace, physical, dtype, memory, valid, layout, pad
    )
    indices = [trace.index(o) for o in region.offsets]
    op = tile.LoadOp(tensor.value, indices, result_type, dynamic)
    return _result(trace, op, valid, what)


def _layout(view: TileView | None, memory: MemorySpace, rank: int) -> Layout:
    if view is not None and view.layout is not None:
        if memory is UB and view.layout == "nz":
            raise kernel_error("pto.TileView: ub tiles use the nd layout")
        return Layout(view.layout)
    return Layout.NZ if memory is L1 and rank == 2 else Layout.ND


def store(region: object, value: object) -> None:
    """Write the valid region of a UB or L0C tile into the tile of a tensor."""
    what = "pto.store"
    trace = active_tile_trace(what)
    if not isinstance(region, Region):
        raise kernel_error(
            f"{what}: expected the tile of a tensor to write, out[i, j], got {region!r}"
        )
    t = _tile_operand(what, value)
    tensor = region.tensor
    if not tensor.is_output:
        raise kernel_error(
            f"{what}: {tensor.name} is an input; a tile kernel writes the tensors "
            "declared pto.Out[...]"
        )
    _in_memory(
        what,
        t,
        (UB, L0C),
        "stores write GM from ub or l0c",
        "move it to ub with pto.move(t, pto.UB)" if t.memory is L1 else "",
    )
    dtype = tensor.dtype
    source = t.type.element_type
    if source != dtype.element_type and not (
        t.memory is L0C and (source, dtype.element_type) in FIXPIPE_CONVERSIONS
    ):
        raise kernel_error(
            f"{what}: {tensor.name} holds {dtype} but the tile holds {t.dtype}; "
            f"cast it first with t.astype(pto.{dtype})"
        )
    if t.ndim != region.rank:
        raise kernel_error(
            f"{what}: a rank-{t.ndim} tile cannot be stored into a rank-"
            f"{region.rank} tile of {tensor.name}"
        )
    for dim, (have, want) in enumerate(
        zip(t.valid_extents, region.tile_valid, strict=True)
    ):
        if not _same_extent(have, want):
            raise kernel_error(
                f"{what}: the tile's valid shape {_format_extents(t.valid_extents)} "
                f"disagrees with the tile of {tensor.name} it is stored to, valid "
                f"{_format_extents(region.tile_valid)} (dim {dim})"
            )
    indices = [trace.index(o) for o in region.offsets]
    trace.insert(tile.StoreOp(t.value, tensor.value, indices))
    trace.stored.add(tensor.name)


def move(
    value: object,
    to: TileView | MemorySpace,
    *,
    transpose: bool = False,
    window: Sequence[int] | None = None,
) -> Tile:
    """Copy a tile to another on-chip memory: l1 -> l0a/l0b (optionally
    transposed, or a `window` of it: the block of the view's shape at those
    offsets), l1 <-> ub, l0c -> ub/l1. To an L0A/L0B/L0C view or memory."""
    what = "pto.move"
    trace = active_tile_trace(what)
    t = _tile_operand(what, value)
    view = to if isinstance(to, TileView) else None
    memory = view.memory if view is not None else _memory(what, to)
    path = (t.memory, memory)
    if path not in MOVE_PATHS:
        legal = ", ".join(f"{a} -> {b}" for a, b in MOVE_PATHS)
        raise kernel_error(
            f"{what}: there is no path {t.memory} -> {memory} (the paths: {legal})"
        )
    if t.type.layout_kind not in MOVE_PATHS[path]:
        raise kernel_error(
            f"{what}: {t.memory} -> {memory} moves tiles in the "
            f"{'/'.join(MOVE_PATHS[path])} layout; load it with "
            f"pto.TileView(..., layout='{MOVE_PATHS[path][0]}')"
        )
    dtype = view.dtype if view is not None else t.dtype
    shape = list(t.shape)
    valid = list(t.valid_extents)
    to_l0 = memory in (L0A, L0B)
    if window is not None:
        if not to_l0 or view is None or any(not isinstance(d, int) for d in view.shape):
            raise kernel_error(
                f"{what}: a window moves into l0a/l0b and takes its shape from a "
                "TileView with sizes"
            )
        offsets = tuple(window)
        shape = [int(d) for d in view.shape]  # pyright: ignore[reportArgumentType]
        if transpose:
            shape = shape[::-1]
        if len(offsets) != len(shape) or any(
            o < 0 or o + s > e for o, s, e in zip(offsets, shape, t.shape, strict=True)
        ):
            raise kernel_error(
                f"{what}: the window {format_shape(shape)} at {list(offsets)} is "
                f"outside the tile {describe(t.type)}"
            )
        for dim, (o, s) in enumerate(zip(offsets, shape, strict=True)):
            v = valid[dim]
            if isinstance(v, int):
                valid[dim] = max(0, min(s, v - o))
            elif o or s != t.shape[dim]:
                raise kernel_error(
                    f"{what}: dim {dim} of the tile has a run-time valid extent; a "
                    "window must cover it whole"
                )
        if 0 in valid:
            raise kernel_error(
                f"{what}: the window at {list(offsets)} holds no valid element"
            )
    elif transpose and not to_l0:
        raise kernel_error(f"{what}: tiles transpose only on the way into l0a/l0b")
    if transpose:
        shape, valid = shape[::-1], valid[::-1]
    if view is not None and window is None:
        declared = [d for d in view.shape]
        if len(declared) != len(shape) or any(
            isinstance(d, int) and d != s for d, s in zip(declared, shape, strict=True)
        ):
            raise kernel_error(
                f"{what}: the view {view!r} does not match the moved tile "
                f"{format_shape(shape)}"
            )
    if dtype is not t.dtype and not (
        t.memory is L0C
        and (t.type.element_type, dtype.element_type) in FIXPIPE_CONVERSIONS
    ):
        raise kernel_error(
            f"{what}: a move from {t.memory} cannot convert {t.dtype} to {dtype}"
        )
    layout = None
    if memory in (UB, L1):
        layout = Layout(view.layout) if view and view.layout else Layout.ND
    result_type, _ = _tile_type(
        trace, shape, dtype, memory, valid, layout, t.type.pad_value
    )
    op = tile.MoveOp(t.value, result_type, transpose, window)
    return _result(trace, op, valid, what)


# --------------------------------------------------------------------------------------
# The cube
# --------------------------------------------------------------------------------------


def matmul(a: object, b: object, acc: object = None) -> Tile:
    """`a @ b (+ acc)` on the cube: a in l0a, b in l0b, the result (and acc) in
    l0c, accumulated in f32 (i32 for i8)."""
    what = "pto.matmul"
    trace = active_tile_trace(what)
    lhs, rhs = _tile_operand(what, a), _tile_operand(what, b)
    _in_memory(
        what + " (left operand)",
        lhs,
        (L0A,),
        "the cube reads its left operand from l0a",
        "load it into pto.L1, then pto.move(t, pto.L0A)",
    )
    _in_memory(
        what + " (right operand)",
        rhs,
        (L0B,),
        "the cube reads its right operand from l0b",
        "load it into pto.L1, then pto.move(t, pto.L0B)",
    )
    (_, k), (k2, _) = lhs.shape, rhs.shape
    if k != k2 or not _same_extent(lhs.valid_extents[1], rhs.valid_extents[0]):
        raise kernel_error(
            f"{what}: the K extents disagree: the left operand "
            f"{describe(lhs.type)}, the right {describe(rhs.type)}"
        )
    valid = [lhs.valid_extents[0], rhs.valid_extents[1]]
    if acc is None:
        op = tile.MatmulOp(lhs.value, rhs.value)
    else:
        accumulator = _tile_operand(what, acc)
        _in_memory(
            what + " (accumulator)", accumulator, (L0C,), "the cube accumulates in l0c"
        )
        expected = tile.MatmulOp.infer_result_type(lhs.type, rhs.type)
        if accumulator.type != expected or not all(
            _same_extent(x, y)
            for x, y in zip(accumulator.valid_extents, valid, strict=True)
        ):
            raise kernel_error(
                f"{what}: the accumulator {describe(accumulator.type)} does not hold "
                f"the product, {describe(expected)}"
            )
        op = tile.MatmulOp(lhs.value, rhs.value, accumulator.value)
    return _result(trace, op, valid, what)


# --------------------------------------------------------------------------------------
# The vector unit
# --------------------------------------------------------------------------------------

_UNARY = {op.name.removeprefix("tile."): op for op in tile.UNARY_OPS}
_BINARY = {op.name.removeprefix("tile."): op for op in tile.BINARY_OPS}
_REDUCE = {op.name.removeprefix("tile.reduce_"): op for op in tile.REDUCE_OPS}


def unary(name: str, what: str, x: object) -> Tile:
    """The `tile` unary op `name` on a UB tile (`pto.exp(t)`, `-t`)."""
    trace = active_tile_trace(what)
    t = _tile_operand(what, x)
    _vector(what, t)
    return _result(trace, _UNARY[name](t.value), t.valid_extents, what)


def _scalar(what: str, trace: TileTrace, value: object, dtype: DType) -> SSAValue:
    if isinstance(value, Scalar):
        if value.dtype is not dtype:
            raise kernel_error(
                f"{what}: a {value.dtype} scalar cannot be combined with a {dtype} "
                f"tile (tile ops take scalars of the tile's type)"
            )
        return value.value
    if isinstance(value, numbers.Real) or (
        isinstance(value, np.ndarray) and value.ndim == 0
    ):
        number = value.item() if isinstance(value, np.ndarray) else value
        return trace.constant(number, dtype)  # pyright: ignore[reportArgumentType]
    if isinstance(value, GmTensor):
        value._compute()
    raise kernel_error(f"{what}: unsupported operand of type {type(value).__name__}")


def binary(name: str, what: str, a: object, b: object) -> Tile:
    """The `tile` binary op `name`; either side may be a number or a scalar
    parameter, tiles broadcast along dims of extent 1."""
    trace = active_tile_trace(what)
    tiles = [x for x in (a, b) if isinstance(x, Tile)]
    if not tiles:
        raise kernel_error(f"{what} needs at least one tile operand")
    _vector(what, *tiles)
    dtype = tiles[0].dtype
    operands = [
        x.value if isinstance(x, Tile) else _scalar(what, trace, x, dtype)
        for x in (a, b)
    ]
    valid = list(tiles[0].valid_extents)
    if len(tiles) == 2:
        lhs, rhs = tiles
        if lhs.dtype is not rhs.dtype:
            raise kernel_error(
                f"{what}: the tiles hold {lhs.dtype} and {rhs.dtype}; cast one with "
                "t.astype(...)"
            )
        if lhs.ndim != rhs.ndim:
            raise kernel_error(
                f"{what}: the tiles have ranks {lhs.ndim} and {rhs.ndim}"
            )
        for dim, (ls, lv, rs, rv) in enumerate(
            zip(lhs.shape, lhs.valid_extents, rhs.shape, rhs.valid_extents, strict=True)
        ):
            if ls == 1 and lv == 1 and rs != 1:
                valid[dim] = rv
            elif not (rs == 1 and rv == 1) and (ls != rs or not _same_extent(lv, rv)):
                raise kernel_error(
                    f"{what}: the tiles {describe(lhs.type)} and {describe(rhs.type)} "
                    f"disagree in dim {dim} (valid {_format_extents([lv])[1:-2]} "
                    f"vs {_format_extents([rv])[1:-2]}); dims must match or one be 1"
                )
    op = _BINARY[name](operands[0], operands[1])
    return _result(trace, op, valid, what)


def reduce(kind: str, x: object, axis: int) -> Tile:
    what = f"t.{kind}(axis)"
    trace = active_tile_trace(what)
    t = _tile_operand(what, x)
    _vector(what, t)
    if not _is_size(axis) or not -t.ndim <= axis < t.ndim:
        raise kernel_error(
            f"{what}: axis {axis!r} is out of range for a rank-{t.ndim} tile"
        )
    axis = axis % t.ndim
    valid = list(t.valid_extents)
    valid[axis] = 1
    return _result(trace, _REDUCE[kind](t.value, axis), valid, what)


def cast(x: object, dtype: DType, round: str | None = None) -> Tile:
    """Convert the elements of a UB tile (`t.astype(pto.f32)`)."""
    what = "pto.cast"
    trace = active_tile_trace(what)
    t = _tile_operand(what, x)
    if not isinstance(dtype, DType):
        raise kernel_error(f"{what}: expected a pto dtype, got {dtype!r}")
    _vector(what, t)
    if dtype is t.dtype:
        return t
    op = tile.CastOp(t.value, dtype.element_type, round)
    result = op.results[0]
    assert isinstance(result.type, TileType)
    aligned = _physical(trace, t.shape, dtype, UB, Layout.ND, trace.probing > 0)
    if aligned != t.shape:
        raise kernel_error(
            f"{what}: {describe(t.type)} as {dtype} would have rows of "
            f"{t.shape[-1] * element_bytes(dtype.element_type)} bytes, off the ub "
            "alignment; load it into a view with more columns"
        )
    return _result(trace, op, t.valid_extents, what)


def transpose(x: object) -> Tile:
    what = "t.T"
    trace = active_tile_trace(what)
    t = _tile_operand(what, x)
    _vector(what, t)
    if t.ndim != 2:
        raise kernel_error(f"{what}: transposes a 2-D tile, got rank {t.ndim}")
    return _result(trace, tile.TransposeOp(t.value), t.valid_extents[::-1], what)


def pad(x: object, value: str = "zero") -> Tile:
    what = "t.pad"
    trace = active_tile_trace(what)
    t = _tile_operand(what, x)
    _vector(what, t)
    if value not in ("zero", "min", "max"):
        raise kernel_error(f"{what}: the pad value is 'zero', 'min' or 'max'")
    return _result(trace, tile.PadOp(t.value, value), t.valid_extents, what)


def broadcast(
    x: object, shape: Sequence[int], valid: Sequence[Extent] | None = None
) -> Tile:
    """Replicate a UB tile along its extent-1 dims to `shape` (valid extents:
    `valid`, default the shape; tile indices give a tail's)."""
    what = "t.broadcast_to"
    trace = active_tile_trace(what)
    t = _tile_operand(what, x)
    _vector(what, t)
    shape = tuple(shape)
    extents = _extents(what, valid, shape)
    if len(shape) != t.ndim:
        raise kernel_error(f"{what}: the shape must keep the rank {t.ndim}")
    result_valid: list[Extent] = []
    for dim, (s, v, r, e) in enumerate(
        zip(t.shape, t.valid_extents, shape, extents, strict=True)
    ):
        if s == 1 and r != 1:
            result_valid.append(e)
        elif s == r:
            result_valid.append(v)
        else:
            raise kernel_error(
                f"{what}: dim {dim} of {describe(t.type)} is kept or broadcast from "
                f"1, not to {r}"
            )
    broadcast_dims = [
        d
        for d, (s, r) in enumerate(zip(t.shape, shape, strict=True))
        if s == 1 and r != 1
    ]
    result_type, _ = _tile_type(trace, shape, t.dtype, UB, result_valid)
    dynamic = [
        result_valid[d] for d in broadcast_dims if isinstance(result_valid[d], SSAValue)
    ]
    op = tile.BroadcastOp(t.value, result_type, dynamic)  # pyright: ignore[reportArgumentType]
    return _result(trace, op, result_valid, what)


def _extents(
    what: str, valid: Sequence[Extent | TileIndex] | None, shape: Sequence[int]
) -> list[Extent]:
    """Valid extents given by number, `index` value or tile index (its tail)."""
    if valid is None:
        return list(shape)
    extents: list[Extent] = []
    for v, s in zip(valid, shape, strict=False):
        if isinstance(v, TileIndex):
            extents.append(v.valid)
        elif isinstance(v, SSAValue):
            extents.append(v)
        elif _is_size(v) and 1 <= v <= s:  # pyright: ignore[reportOperatorIssue]
            extents.append(int(v))  # pyright: ignore[reportArgumentType]
        else:
            raise kernel_error(
                f"{what}: a valid extent in [1, {s}] is needed, got {v!r}"
            )
    if len(extents) != len(shape):
        raise kernel_error(f"{what}: give one valid extent per dim")
    return extents


def full(view: object, value: object, valid: Sequence[Extent] | None = None) -> Tile:
    """A new UB tile of the view's shape whose valid region holds `value`
    (`tile.fill`); `valid` (numbers or tile indices) sets a tail's extents."""
    what = "pto.full"
    trace = active_tile_trace(what)
    if not isinstance(view, TileView) or any(d is auto for d in view.shape):
        raise kernel_error(f"{what}: expected a TileView with sizes, got {view!r}")
    if view.memory is not UB:
        raise kernel_error(f"{what}: the vector unit fills ub tiles, not {view.memory}")
    shape = tuple(int(d) for d in view.shape)  # pyright: ignore[reportArgumentType]
    extents = (
        _extents(what, valid, shape) if valid is not None else list(view.valid or shape)
    )
    physical = _physical(trace, shape, view.dtype, UB, Layout.ND, trace.probing > 0)
    result_type, dynamic = _tile_type(trace, physical, view.dtype, UB, extents)
    constant = _scalar(what, trace, value, view.dtype)
    return _result(trace, tile.FillOp(constant, result_type, dynamic), extents, what)
