"""The roofline of tile-level kernels (`pypto_mlir.tile_roofline`): the tile
examples get the tv roofline of the same problem, resource by resource, at
any shape on both targets; tails count exactly; a kernel the count cannot
follow has no bound; a tile kernel's report carries it."""

from __future__ import annotations

import numpy as np
import pytest
from example_kernels import example_kernel, load_example
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

import pypto_mlir as pto
from pypto_mlir.roofline import Roofline, roofline
from pypto_mlir.targets import load_target
from pypto_mlir.tile_roofline import tile_roofline, tile_roofline_bound
from pypto_mlir.universe import default_context

PAIRS = {
    "swish": load_example("tile_swish").swish,
    "gemm": load_example("tile_gemm").gemm,
    "softmax": load_example("tile_softmax").softmax,
}
"""The tile examples; the tensor-level kernel of each is example_kernel's."""


SHAPES = {
    "swish": [
        dict(M=m, N=n)
        for m, n in ((1, 1), (7, 13), (97, 1031), (1000, 333), (4096, 1024))
    ],
    "gemm": [
        dict(M=m, K=k, N=n)
        for m, k, n in (
            (1, 1, 1),
            (17, 19, 23),
            (100, 77, 130),
            (131, 67, 97),
            (1024, 1024, 1024),
        )
    ],
    "softmax": [dict(M=m, N=n) for m, n in ((1, 1), (37, 45), (97, 131), (1024, 512))],
}


def _parse(text: str) -> ModuleOp:
    return Parser(default_context(), text).parse_module()


def _work(bound: Roofline) -> dict[str, float]:
    return {b.resource: b.work for b in bound.bounds}


def _entry(module: ModuleOp) -> str:
    return next(iter(module.body.block.ops)).sym_name.data  # pyright: ignore


@pytest.mark.parametrize("target", ["ascend910b", "tiny"])
@pytest.mark.parametrize(
    ("kernel", "sizes"),
    [(name, sizes) for name, shapes in SHAPES.items() for sizes in shapes],
    ids=lambda v: v if isinstance(v, str) else "x".join(map(str, v.values())),
)
def test_tile_examples_get_the_tv_roofline(
    kernel: str, sizes: dict[str, int], target: str
) -> None:
    tile_kernel = PAIRS[kernel]
    tensor_kernel, _ = example_kernel(kernel, tuple(sizes.values()))
    try:
        tile_module = _parse(tile_kernel.mlir(target=target, **sizes))
    except pto.KernelError as error:
        pytest.skip(f"the tile kernel does not fit {target} at {sizes}: {error}")
    tensor_module = _parse(tensor_kernel.mlir())
    chip = load_target(target)
    tile = tile_roofline(tile_module, _entry(tile_module), chip)
    tensor = roofline(tensor_module, _entry(tensor_module), chip)
    assert _work(tile) == pytest.approx(_work(tensor))
    assert tile.cycles == pytest.approx(tensor.cycles)


TAIL = """
builtin.module {
  func.func @k(%x: memref<100x40xf32>, %y: memref<100x40xf32>) attributes {pypto.outputs = 1 : i64} {
    %c0 = arith.constant 0 : index
    %c100 = arith.constant 100 : index
    %c16 = arith.constant 16 : index
    scf.for %i = %c0 to %c100 step %c16 {
      %left = arith.subi %c100, %i : index
      %rows = arith.minsi %left, %c16 : index
      %t = tile.load %x[%i, %c0] valid [%rows] : memref<100x40xf32> -> !tile.tile<16x40xf32, ub, valid = [?, 40]>
      %e = tile.exp %t : !tile.tile<16x40xf32, ub, valid = [?, 40]>
      %z = tile.add %e, %e : !tile.tile<16x40xf32, ub, valid = [?, 40]>, !tile.tile<16x40xf32, ub, valid = [?, 40]>
      tile.store %z, %y[%i, %c0] : !tile.tile<16x40xf32, ub, valid = [?, 40]> -> memref<100x40xf32>
    }
    func.return
  }
}
"""


def test_a_tail_counts_its_valid_rows() -> None:
    """100 rows in steps of 16: 6 whole tiles and a 4-row tail, 100x40 elements
    (not 7x16x40) for the vector work and the bytes."""
    chip = load_target("ascend910b")
    bound = tile_roofline(_parse(TAIL), "k", chip)
    work = _work(bound)
    assert work["gm->ub"] == work["ub->gm"] == 100 * 40 * 4
    exact = tile_roofline(_parse(TAIL.replace("100", "112")), "k", chip)
    # 112 rows are 7 whole tiles: the vector work scales by 112/100.
    assert _work(exact)["vector"] == pytest.approx(work["vector"] * 112 / 100)


def test_a_repeated_load_reads_gm_once() -> None:
    """Loading the same memref in two loops reads it from GM once."""
    text = TAIL.replace(
        "    func.return",
        "    scf.for %j = %c0 to %c100 step %c16 {\n"
        "      %l = arith.subi %c100, %j : index\n"
        "      %r = arith.minsi %l, %c16 : index\n"
        "      %u = tile.load %x[%j, %c0] valid [%r] : memref<100x40xf32> -> "
        "!tile.tile<16x40xf32, ub, valid = [?, 40]>\n"
        "      tile.store %u, %y[%j, %c0] : !tile.tile<16x40xf32, ub, valid = [?, 40]> "
        "-> memref<100x40xf32>\n    }\n    func.return",
    )
    work = _work(tile_roofline(_parse(text), "k", load_target("ascend910b")))
    assert work["gm->ub"] == 100 * 40 * 4


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("scf.for %i = %c0 to %c100", "scf.for %i = %c0 to %n", "runtime bound"),
        (
            "%rows = arith.minsi %left, %c16",
            "%rows = arith.minsi %n, %c16",
            "runtime extent",
        ),
        ("%c16 = arith.constant 16", "%c16 = arith.constant 0", "step 0"),
    ],
)
def test_what_the_count_cannot_follow_has_no_bound(
    old: str, new: str, why: str
) -> None:
    text = TAIL.replace("%y: memref<100x40xf32>)", "%y: memref<100x40xf32>, %n: index)")
    text = text.replace("pypto.outputs = 1", "pypto.outputs = 0").replace(old, new)
    module = _parse(text)
    assert tile_roofline_bound(module, "k", load_target("ascend910b")) is None, why
    with pytest.raises(ValueError):
        tile_roofline(module, "k", load_target("ascend910b"))


def test_a_tile_kernel_report_has_the_roofline() -> None:
    kernel = PAIRS["swish"]
    x = np.random.default_rng(0).standard_normal((97, 131)).astype(np.float16)
    report = kernel.run(x).report
    assert report.sim is not None and report.sim.roofline is not None
    assert "roofline:" in report.to_text()
    chip = load_target("ascend910b")
    module = _parse(kernel.mlir(M=97, N=131))
    assert report.sim.roofline.cycles == pytest.approx(
        tile_roofline(module, "swish", chip).cycles
    )
