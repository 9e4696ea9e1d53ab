"""End-to-end numerics of `tv-to-tile`: the tile-level interpreter against the tv
reference interpreter, on the same inputs (pypto_mlir/check.py).

Every example kernel (examples/*.py, their tv IR from the frontend, shrunk to
small shapes so that the interpreter stays fast) runs on both targets for shapes
of 1, primes, and sizes around tile boundaries; hypothesis draws further shapes
for the kernel kinds (elementwise chains with broadcasting, reductions, softmax,
matmul) with automatic and explicit tile sizes.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, IndexType, IntegerType, ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import PassFailedException

from pypto_mlir.check import compare_levels
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import verify
from pypto_mlir.dialects import tensor_view as tv
from pypto_mlir.interp.tensor_view import numpy_dtype
from pypto_mlir.passes.tv_to_tile import TvToTilePass

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TARGETS = ("ascend910b", "tiny")
SETTINGS = settings(max_examples=12, deadline=None)


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def parse(text: str) -> ModuleOp:
    return Parser(default_context(), text).parse_module()


def parse_located(text: str) -> ModuleOp:
    """Parsed with op locations (`k.mlir:LINE:COL`), as pypto-opt does."""
    return parse_chunk(default_context(), SourceChunk(text, 1), "k.mlir")


def lower(text: str, target: str, **options: object) -> ModuleOp:
    module = parse(text)
    TvToTilePass(target=target, **options).apply(default_context(), module)  # pyright: ignore[reportArgumentType]
    verify(module)
    return module


def random_inputs(
    module: ModuleOp, name: str, rng: np.random.Generator
) -> list[np.ndarray | int | float]:
    """Inputs for the tv function `name`: floats in [-1, 1] (products and sums stay
    well inside f16), small integers, index arguments 1."""
    function = module.body.block.first_op
    while not (isinstance(function, func.FuncOp) and function.sym_name.data == name):
        assert function is not None
        function = function.next_op
    inputs: list[np.ndarray | int | float] = []
    for arg_type in function.function_type.inputs.data:
        if isinstance(arg_type, tv.TensorViewType):
            dtype = numpy_dtype(arg_type.element_type)
            shape = arg_type.get_shape()
            if np.issubdtype(dtype, np.integer):
                inputs.append(rng.integers(-20, 20, shape).astype(dtype))
            else:
                inputs.append(rng.uniform(-1, 1, shape).astype(dtype))
        elif isinstance(arg_type, IndexType | IntegerType):
            inputs.append(1)
        else:
            inputs.append(float(rng.uniform(0.5, 1.5)))
    return inputs


def assert_levels_agree(
    text: str, name: str, target: str, seed: int = 0, **options: object
) -> ModuleOp:
    """Lower `text` for `target` and check the tile level against the tv level."""
    reference = parse(text)
    lowered = lower(text, target, **options)
    inputs = random_inputs(reference, name, np.random.default_rng(seed))
    problems = [
        c.describe()
        for c in compare_levels(reference, lowered, name, inputs)
        if not c.ok
    ]
    assert not problems, f"{target}: " + "; ".join(problems)
    return lowered


def resize(text: str, sizes: dict[int, int]) -> str:
    """`text` with the dims of every `!tv.tensor` type replaced per `sizes`."""

    def dims(match: re.Match[str]) -> str:
        parts = match.group(1).split("x")
        shape = [
            str(sizes.get(int(p), int(p))) if p.isdigit() else p for p in parts[:-1]
        ]
        return "!tv.tensor<" + "x".join([*shape, parts[-1]]) + ">"

    return re.sub(r"!tv\.tensor<([^>]*)>", dims, text)


def load_example(name: str) -> ModuleType:
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def example_ir(
    file: str, kernel: str, sizes: dict[str, int], shrink: dict[int, int]
) -> str:
    example = load_example(file)
    return resize(getattr(example, kernel).mlir(**sizes), shrink)


# --------------------------------------------------------------------------------------
# The example kernels
# --------------------------------------------------------------------------------------

ROW_SHAPES = [(1, 1), (1, 17), (7, 13), (37, 45), (16, 31), (16, 33), (5, 257)]
"""1, primes, and sizes just below and above a power of two (a tile edge)."""


def example_cases() -> list[
    tuple[str, str, dict[str, int], Callable[[int, int], dict[int, int]]]
]:
    """(file, kernel, symbolic sizes, shrink(rows, cols)) of every example kernel."""
    return [
        ("swish", "swish", {}, lambda r, c: {4096: r, 1024: c}),
        ("softmax", "softmax", {}, lambda r, c: {4096: r, 1024: c}),
        ("softmax", "softmax_by_hand", {}, lambda r, c: {4096: r, 1024: c}),
        ("layernorm", "layernorm", {"N": 3}, lambda r, c: {3: r, 768: c}),
        ("gemm", "gemm", {"M": 3}, lambda r, c: {3: r, 1024: c}),
        ("ffn", "ffn", {}, lambda r, c: {128: r, 768: c, 3072: c + 5}),
    ]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("file", "kernel", "sizes", "shrink"),
    example_cases(),
    ids=[f"{c[0]}.{c[1]}" for c in example_cases()],
)
def test_example_kernels(
    file: str,
    kernel: str,
    sizes: dict[str, int],
    shrink: Callable[[int, int], dict[int, int]],
    target: str,
) -> None:
    for rows, cols in ROW_SHAPES:
        text = example_ir(file, kernel, sizes, shrink(rows, cols))
        assert_levels_agree(text, kernel, target, seed=rows * 1000 + cols)


def test_swish_example_is_one_loop() -> None:
    """The swish example fuses into one loop: one load, x * sigmoid(x) as one
    silu, one store."""
    text = example_ir("swish", "swish", {}, {})
    lowered = lower(text, "ascend910b")
    loops = [op for op in lowered.walk() if op.name == "scf.for"]
    names = [op.name for op in lowered.walk() if op.name.startswith("tile.")]
    assert len(loops) == 1
    assert names == ["tile.load", "tile.silu", "tile.store"]


@pytest.mark.parametrize("copies_a_view", [False, True])
def test_nest_ops_are_located_at_their_tv_ops(copies_a_view: bool) -> None:
    """Every op tv-to-tile emits has the location of a tv op (the one it
    implements), so that a refusal of a later pass names the kernel's line;
    a returned view is copied by a nest located at the view."""
    text = example_ir("layernorm", "layernorm", {"N": 37}, {768: 45})
    if copies_a_view:
        text = """
func.func @view(%x: !tv.tensor<20x30xf32>) -> !tv.tensor<5x7xf32> {
  %v = tv.view %x[4, 3][5, 7][2, 3] : !tv.tensor<20x30xf32> to !tv.tensor<5x7xf32>
  func.return %v : !tv.tensor<5x7xf32>
}
"""
    module = parse_located(text)
    lines = {
        op.location.line.data
        for op in module.walk()
        if op.dialect_name() == "tv" and isinstance(op.location, FileLineColLoc)
    }
    TvToTilePass(target="tiny").apply(default_context(), module)
    function = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    emitted = [
        o for o in function.walk() if o.dialect_name() in ("tile", "scf", "memref")
    ]
    assert emitted
    for op in emitted:
        assert isinstance(op.location, FileLineColLoc), op
        assert op.location.line.data in lines, op


# --------------------------------------------------------------------------------------
# Kernel kinds on drawn shapes
# --------------------------------------------------------------------------------------

extents = st.integers(1, 70)
targets = st.sampled_from(TARGETS)


def tensor(shape: tuple[int, ...], element: str) -> str:
    return "!tv.tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


@SETTINGS
@given(
    rows=extents,
    cols=extents,
    target=targets,
    element=st.sampled_from(["f16", "f32", "bf16"]),
)
def test_elementwise_chain_with_broadcasts(
    rows: int, cols: int, target: str, element: str
) -> None:
    t, row, col = (
        tensor((rows, cols), element),
        tensor((cols,), element),
        tensor((rows, 1), element),
    )
    text = f"""
func.func @f(%x: {t}, %b: {row}, %c: {col}, %s: f32) -> {t} {{
  %a = tv.add %x, %b : {t}, {row} -> {t}
  %g = tv.gelu %a : {t}
  %m = tv.mul %g, %c : {t}, {col} -> {t}
  %d = tv.div %m, %s : {t}, f32 -> {t}
  %y = tv.max %d, %x : {t}
  func.return %y : {t}
}}"""
    assert_levels_agree(text, "f", target, seed=rows * 100 + cols)


@SETTINGS
@given(
    rows=extents,
    cols=extents,
    target=targets,
    kind=st.sampled_from(["sum", "max", "min"]),
    axes=st.sampled_from([[0], [1], [0, 1]]),
    keep=st.booleans(),
    element=st.sampled_from(["f16", "f32", "i8", "i32"]),
)
def test_reductions(
    rows: int,
    cols: int,
    target: str,
    kind: str,
    axes: list[int],
    keep: bool,
    element: str,
) -> None:
    shape = (rows, cols)
    reduced = (
        tuple(1 if d in axes else s for d, s in enumerate(shape))
        if keep
        else tuple(s for d, s in enumerate(shape) if d not in axes)
    )
    t, r = tensor(shape, element), tensor(reduced, element)
    flag = "keepdims " if keep else ""
    text = f"""
func.func @f(%x: {t}) -> {r} {{
  %s = tv.reduce_{kind} %x [{", ".join(map(str, axes))}] {flag}: {t} -> {r}
  func.return %s : {r}
}}"""
    assert_levels_agree(text, "f", target, seed=rows * 100 + cols)


@SETTINGS
@given(
    rows=extents, cols=st.integers(1, 300), target=targets, axis=st.sampled_from([0, 1])
)
def test_softmax(rows: int, cols: int, target: str, axis: int) -> None:
    t = tensor((rows, cols), "f16")
    text = f"""
func.func @f(%x: {t}) -> {t} {{
  %s = tv.softmax %x axis = {axis} : {t}
  func.return %s : {t}
}}"""
    assert_levels_agree(text, "f", target, seed=rows * 1000 + cols)


def matmul_kernel(
    m: int, n: int, k: int, element: str, transpose_a: bool, transpose_b: bool
) -> str:
    """`@f(a, b) = a @ b` of m x k by k x n (operands stored transposed on request)."""
    a = tensor((k, m) if transpose_a else (m, k), element)
    b = tensor((n, k) if transpose_b else (k, n), element)
    out = "i32" if element == "i8" else element
    acc = "i32" if element == "i8" else "f32"
    c = tensor((m, n), out)
    flags = (" transpose_a" if transpose_a else "") + (
        " transpose_b" if transpose_b else ""
    )
    return f"""
func.func @f(%a: {a}, %b: {b}) -> {c} {{
  %c = tv.matmul %a, %b{flags} acc({acc}) : {a}, {b} -> {c}
  func.return %c : {c}
}}"""


@SETTINGS
@given(
    m=extents,
    n=extents,
    k=extents,
    target=targets,
    transpose_a=st.booleans(),
    transpose_b=st.booleans(),
    element=st.sampled_from(["f16", "f32", "i8"]),
)
def test_matmul(
    m: int,
    n: int,
    k: int,
    target: str,
    transpose_a: bool,
    transpose_b: bool,
    element: str,
) -> None:
    text = matmul_kernel(m, n, k, element, transpose_a, transpose_b)
    assert_levels_agree(text, "f", target, seed=m * 10000 + n * 100 + k)


# --------------------------------------------------------------------------------------
# Explicit tile sizes around the tile edges
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("rows", [1, 3, 4, 5])
@pytest.mark.parametrize("cols", [1, 31, 32, 33])
def test_explicit_tiles_at_the_edges(rows: int, cols: int) -> None:
    """Tiles of 4 x 32: extents just below, at and above a tile."""
    t, r = tensor((rows, cols), "f16"), tensor((rows, 1), "f16")
    text = f"""
func.func @f(%x: {t}) -> ({t}, {r}) {{
  %e = tv.exp %x : {t}
  %s = tv.reduce_sum %e [1] keepdims : {t} -> {r}
  %y = tv.div %e, %s : {t}, {r} -> {t}
  func.return %y, %s : {t}, {r}
}}"""
    assert_levels_agree(text, "f", "tiny", tile_sizes=(4, 32))


@SETTINGS
@given(
    rows=extents,
    cols=st.integers(1, 200),
    tile_rows=st.integers(1, 9),
    tile_cols=st.sampled_from([16, 32, 48, 64]),
    target=targets,
)
def test_row_kernel_with_drawn_tiles(
    rows: int, cols: int, tile_rows: int, tile_cols: int, target: str
) -> None:
    """Layernorm-like rows with drawn tiles: resident when the columns fit one
    tile, otherwise three passes (sum, centred sum of squares, output)."""
    t, r, g = (
        tensor((rows, cols), "f16"),
        tensor((rows, 1), "f32"),
        tensor((cols,), "f16"),
    )
    f = tensor((rows, cols), "f32")
    text = f"""
func.func @f(%x: {t}, %g: {g}) -> ({t}, {r}) {{
  %inv = arith.constant {1.0 / cols!r} : f32
  %xf = tv.cast %x : {t} to {f}
  %s = tv.reduce_sum %xf [1] keepdims : {f} -> {r}
  %mean = tv.mul %s, %inv : {r}, f32 -> {r}
  %d = tv.sub %xf, %mean : {f}, {r} -> {f}
  %sq = tv.mul %d, %d : {f}
  %ss = tv.reduce_sum %sq [1] keepdims : {f} -> {r}
  %rs = tv.rsqrt %ss : {r}
  %y = tv.mul %d, %rs : {f}, {r} -> {f}
  %gf = tv.cast %g : {g} to {tensor((cols,), "f32")}
  %z = tv.mul %y, %gf : {f}, {tensor((cols,), "f32")} -> {f}
  %h = tv.cast %z : {f} to {t}
  func.return %h, %ss : {t}, {r}
}}"""
    try:
        assert_levels_agree(
            text,
            "f",
            target,
            seed=rows * 1000 + cols,
            tile_sizes=(tile_rows, tile_cols),
        )
    except PassFailedException as error:
        # Sizes the target's UB cannot hold are refused, saying so.
        assert f"ub of target '{target}' holds" in str(error), error
        assume(False)


@pytest.mark.parametrize("shape", [(1, 1, 1), (15, 17, 33), (16, 32, 32), (33, 31, 17)])
@pytest.mark.parametrize("sizes", [(16, 16, 16), (32, 32, 16, 16, 32)])
def test_explicit_matmul_tiles(
    shape: tuple[int, int, int], sizes: tuple[int, ...]
) -> None:
    m, n, k = shape
    a, b, c = tensor((m, k), "f16"), tensor((k, n), "f16"), tensor((m, n), "f16")
    text = f"""
func.func @f(%a: {a}, %b: {b}, %bias: {tensor((n,), "f16")}) -> {c} {{
  %c = tv.matmul %a, %b acc(f32) : {a}, {b} -> {c}
  %y = tv.add %c, %bias : {c}, {tensor((n,), "f16")} -> {c}
  %r = tv.relu %y : {c}
  func.return %r : {c}
}}"""
    assert_levels_agree(text, "f", "ascend910b", matmul_tile_sizes=sizes)


@pytest.mark.parametrize(
    ("m", "n", "k"), [(1, 1, 1), (16, 16, 64), (20, 33, 100), (33, 17, 129)]
)
@pytest.mark.parametrize("transposes", [(False, False), (True, False), (False, True)])
@pytest.mark.parametrize(
    ("element", "sizes"),
    [
        ("f16", (32, 32, 64, 16, 16, 32)),
        ("f32", (16, 32, 48, 16, 16, 16)),
        ("i8", (32, 32, 128, 32, 32, 64)),
    ],
)
def test_deep_l1_chunks(
    m: int,
    n: int,
    k: int,
    transposes: tuple[bool, bool],
    element: str,
    sizes: tuple[int, ...],
) -> None:
    """L1 chunks K1 deep feeding K1/K0 cube steps through windows (M1,N1,K1,M0,N0,K0):
    a K of one partial chunk, whole chunks, and whole chunks with a partial one
    after them; operands as stored and transposed."""
    transpose_a, transpose_b = transposes
    text = matmul_kernel(m, n, k, element, transpose_a, transpose_b)
    assert_levels_agree(text, "f", "ascend910b", matmul_tile_sizes=sizes)


# --------------------------------------------------------------------------------------
# Other ops: transpose, views, dynamic dims, ranks, dtypes
# --------------------------------------------------------------------------------------

OTHER_KERNELS = {
    "transposes": """
func.func @f(%x: !tv.tensor<3x5x7xf16>, %y: !tv.tensor<37x50xf32>) -> (!tv.tensor<7x3x5xf16>, !tv.tensor<5x3x7xf16>, !tv.tensor<3x7x5xf16>, !tv.tensor<50x37xf32>) {
  %t = tv.transpose %x [2, 0, 1] : !tv.tensor<3x5x7xf16> -> !tv.tensor<7x3x5xf16>
  %u = tv.transpose %x [1, 0, 2] : !tv.tensor<3x5x7xf16> -> !tv.tensor<5x3x7xf16>
  %v = tv.transpose %x [0, 2, 1] : !tv.tensor<3x5x7xf16> -> !tv.tensor<3x7x5xf16>
  %w = tv.transpose %y [1, 0] : !tv.tensor<37x50xf32> -> !tv.tensor<50x37xf32>
  %e = tv.exp %w : !tv.tensor<50x37xf32>
  func.return %t, %u, %v, %e : !tv.tensor<7x3x5xf16>, !tv.tensor<5x3x7xf16>, !tv.tensor<3x7x5xf16>, !tv.tensor<50x37xf32>
}""",
    "views": """
func.func @f(%x: !tv.tensor<20x30xf32>, %i: index) -> (!tv.tensor<5x7xf32>, !tv.tensor<4x10xf32>, !tv.tensor<7xf32>) {
  %v = tv.view %x[%i, 3][5, 7][2, 3] : !tv.tensor<20x30xf32> to !tv.tensor<5x7xf32>
  %e = tv.exp %v : !tv.tensor<5x7xf32>
  %w = tv.view %x[1, 0][4, 10][1, 1] : !tv.tensor<20x30xf32> to !tv.tensor<4x10xf32>
  %r = tv.view %e[2, 0][1, 7][1, 1] : !tv.tensor<5x7xf32> to !tv.tensor<7xf32>
  %n = tv.neg %r : !tv.tensor<7xf32>
  func.return %e, %w, %n : !tv.tensor<5x7xf32>, !tv.tensor<4x10xf32>, !tv.tensor<7xf32>
}""",
    "dynamic": """
func.func @f(%x: !tv.tensor<?x?xf16>, %b: !tv.tensor<?xf16>) -> (!tv.tensor<?x?xf16>, !tv.tensor<?x1xf16>, index) {
  %a = tv.add %x, %b : !tv.tensor<?x?xf16>, !tv.tensor<?xf16> -> !tv.tensor<?x?xf16>
  %r = tv.reduce_max %a [1] keepdims : !tv.tensor<?x?xf16> -> !tv.tensor<?x1xf16>
  %s = tv.softmax %a axis = 1 : !tv.tensor<?x?xf16>
  %d = tv.dim %x, 1 : !tv.tensor<?x?xf16>
  func.return %s, %r, %d : !tv.tensor<?x?xf16>, !tv.tensor<?x1xf16>, index
}""",
    "ranks": """
func.func @f(%x: !tv.tensor<f32>, %y: !tv.tensor<9xf32>, %z: !tv.tensor<2x3x9xf32>) -> (!tv.tensor<f32>, !tv.tensor<2x3x9xf32>, !tv.tensor<f32>, !tv.tensor<3xf32>) {
  %a = tv.add %x, %x : !tv.tensor<f32>
  %b = tv.mul %z, %y : !tv.tensor<2x3x9xf32>, !tv.tensor<9xf32> -> !tv.tensor<2x3x9xf32>
  %c = tv.add %b, %x : !tv.tensor<2x3x9xf32>, !tv.tensor<f32> -> !tv.tensor<2x3x9xf32>
  %s = tv.reduce_sum %c [0, 1, 2] : !tv.tensor<2x3x9xf32> -> !tv.tensor<f32>
  %t = tv.reduce_max %c [0, 2] : !tv.tensor<2x3x9xf32> -> !tv.tensor<3xf32>
  func.return %a, %c, %s, %t : !tv.tensor<f32>, !tv.tensor<2x3x9xf32>, !tv.tensor<f32>, !tv.tensor<3xf32>
}""",
    "integers_fill_copy": """
func.func @f(%x: !tv.tensor<5x40xi8>, %s: i8, %n: index) -> (!tv.tensor<5x40xi8>, !tv.tensor<5x40xi8>, !tv.tensor<?x8xf16>, !tv.tensor<5x40xi16>) {
  %a = tv.mul %x, %s : !tv.tensor<5x40xi8>, i8 -> !tv.tensor<5x40xi8>
  %b = tv.relu %a : !tv.tensor<5x40xi8>
  %c = arith.constant 2.5 : f32
  %f = tv.fill %c[%n] : f32 -> !tv.tensor<?x8xf16>
  %w = tv.cast %b : !tv.tensor<5x40xi8> to !tv.tensor<5x40xi16>
  %m = tv.max %w, %w : !tv.tensor<5x40xi16>
  func.return %x, %b, %f, %m : !tv.tensor<5x40xi8>, !tv.tensor<5x40xi8>, !tv.tensor<?x8xf16>, !tv.tensor<5x40xi16>
}""",
    "dag_merged": """
func.func @f(%x: !tv.tensor<37x45xf16>) -> (!tv.tensor<37x45xf16>, !tv.tensor<37x45xf16>, !tv.tensor<37x1xf16>) {
  %e = tv.exp %x : !tv.tensor<37x45xf16>
  %c = arith.constant 2.0 : f16
  %a = tv.mul %e, %c : !tv.tensor<37x45xf16>, f16 -> !tv.tensor<37x45xf16>
  %b = tv.add %e, %x : !tv.tensor<37x45xf16>
  %s = tv.reduce_sum %e [1] keepdims : !tv.tensor<37x45xf16> -> !tv.tensor<37x1xf16>
  func.return %a, %b, %s : !tv.tensor<37x45xf16>, !tv.tensor<37x45xf16>, !tv.tensor<37x1xf16>
}""",
    "attention": """
func.func @f(%q: !tv.tensor<20x16xf16>, %k: !tv.tensor<24x16xf16>, %v: !tv.tensor<24x16xf16>) -> !tv.tensor<20x16xf16> {
  %kt = tv.transpose %k [1, 0] : !tv.tensor<24x16xf16> -> !tv.tensor<16x24xf16>
  %s = tv.matmul %q, %kt acc(f32) : !tv.tensor<20x16xf16>, !tv.tensor<16x24xf16> -> !tv.tensor<20x24xf16>
  %c = arith.constant 0.25 : f32
  %ss = tv.mul %s, %c : !tv.tensor<20x24xf16>, f32 -> !tv.tensor<20x24xf16>
  %p = tv.softmax %ss axis = 1 : !tv.tensor<20x24xf16>
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<20x24xf16>, !tv.tensor<24x16xf16> -> !tv.tensor<20x16xf16>
  func.return %o : !tv.tensor<20x16xf16>
}""",
    "softmax_rank3_and_reductions_of_it": """
func.func @f(%x: !tv.tensor<3x37x20xf32>) -> (!tv.tensor<3x37x20xf32>, !tv.tensor<3x37x20xf32>, !tv.tensor<3x1x20xf32>) {
  %a = tv.softmax %x axis = 0 : !tv.tensor<3x37x20xf32>
  %b = tv.softmax %x axis = 1 : !tv.tensor<3x37x20xf32>
  %s = tv.reduce_sum %b [1] keepdims : !tv.tensor<3x37x20xf32> -> !tv.tensor<3x1x20xf32>
  func.return %a, %b, %s : !tv.tensor<3x37x20xf32>, !tv.tensor<3x37x20xf32>, !tv.tensor<3x1x20xf32>
}""",
    "rank4_middle_broadcasts": """
func.func @f(%x: !tv.tensor<2x3x5x7xf16>, %g: !tv.tensor<5x1xf16>, %y: !tv.tensor<4x1x8xf32>, %z: !tv.tensor<3x1xf32>) -> (!tv.tensor<2x3x5x7xf16>, !tv.tensor<2x1x5x1xf16>, !tv.tensor<4x3x8xf32>, !tv.tensor<4x3x8xf32>) {
  %m = tv.mul %x, %g : !tv.tensor<2x3x5x7xf16>, !tv.tensor<5x1xf16> -> !tv.tensor<2x3x5x7xf16>
  %s = tv.reduce_max %m [1, 3] keepdims : !tv.tensor<2x3x5x7xf16> -> !tv.tensor<2x1x5x1xf16>
  %t = tv.sub %m, %s : !tv.tensor<2x3x5x7xf16>, !tv.tensor<2x1x5x1xf16> -> !tv.tensor<2x3x5x7xf16>
  %a = tv.add %y, %z : !tv.tensor<4x1x8xf32>, !tv.tensor<3x1xf32> -> !tv.tensor<4x3x8xf32>
  func.return %t, %s, %a, %a : !tv.tensor<2x3x5x7xf16>, !tv.tensor<2x1x5x1xf16>, !tv.tensor<4x3x8xf32>, !tv.tensor<4x3x8xf32>
}""",
    "matmul_of_views": """
func.func @f(%a: !tv.tensor<40x50xf16>, %b: !tv.tensor<30x20xf16>) -> !tv.tensor<20x20xf32> {
  %av = tv.view %a[0, 0][20, 25][2, 2] : !tv.tensor<40x50xf16> to !tv.tensor<20x25xf16>
  %bv = tv.view %b[5, 0][25, 20][1, 1] : !tv.tensor<30x20xf16> to !tv.tensor<25x20xf16>
  %c = tv.matmul %av, %bv acc(f32) : !tv.tensor<20x25xf16>, !tv.tensor<25x20xf16> -> !tv.tensor<20x20xf32>
  %d = tv.reduce_sum %c [1] keepdims : !tv.tensor<20x20xf32> -> !tv.tensor<20x1xf32>
  %e = tv.sub %c, %d : !tv.tensor<20x20xf32>, !tv.tensor<20x1xf32> -> !tv.tensor<20x20xf32>
  func.return %e : !tv.tensor<20x20xf32>
}""",
    "batched_matmul_bf16": """
func.func @f(%a: !tv.tensor<3x20x9xbf16>, %b: !tv.tensor<3x9x18xbf16>) -> !tv.tensor<3x20x18xbf16> {
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<3x20x9xbf16>, !tv.tensor<3x9x18xbf16> -> !tv.tensor<3x20x18xbf16>
  %t = tv.tanh %c : !tv.tensor<3x20x18xbf16>
  func.return %t : !tv.tensor<3x20x18xbf16>
}""",
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kernel", sorted(OTHER_KERNELS))
def test_other_kernels(kernel: str, target: str) -> None:
    text = OTHER_KERNELS[kernel]
    if kernel == "dynamic":
        reference, lowered = parse(text), lower(text, target)
        for rows, cols in [(1, 1), (23, 77), (4, 600)]:
            rng = np.random.default_rng(rows + cols)
            x = rng.uniform(-1, 1, (rows, cols)).astype(np.float16)
            b = rng.uniform(-1, 1, (cols,)).astype(np.float16)
            comparisons = compare_levels(reference, lowered, "f", [x, b])
            assert all(c.ok for c in comparisons), [c.describe() for c in comparisons]
        return
    assert_levels_agree(text, "f", target)
