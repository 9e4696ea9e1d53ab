"""tv.reshape through pypto-lower and the simulator of both targets against the
tv reference: of an argument, of a computed tensor (a GM temporary), of a
contiguous view, returned as it is, at odd shapes."""

from __future__ import annotations

import numpy as np
import pytest

from pypto_mlir.check import check_lowering
from pypto_mlir.cli.source import SourceChunk, default_context, parse_chunk
from pypto_mlir.diagnostics import diagnostic_handler
from pypto_mlir.pipelines import LowerPipeline

KERNELS = {
    "computed": """
func.func @k(%x: !tv.tensor<7x30xf32>) -> !tv.tensor<15x14xf32> {
  %e = tv.exp %x : !tv.tensor<7x30xf32>
  %r = tv.reshape %e : !tv.tensor<7x30xf32> to !tv.tensor<15x14xf32>
  %y = tv.add %r, %r : !tv.tensor<15x14xf32>
  func.return %y : !tv.tensor<15x14xf32>
}""",
    "argument": """
func.func @k(%x: !tv.tensor<3x5x13xf16>) -> !tv.tensor<13x15xf16> {
  %r = tv.reshape %x : !tv.tensor<3x5x13xf16> to !tv.tensor<13x15xf16>
  %y = tv.sigmoid %r : !tv.tensor<13x15xf16>
  func.return %y : !tv.tensor<13x15xf16>
}""",
    "view": """
func.func @k(%x: !tv.tensor<9x17xf32>) -> !tv.tensor<17x4xf32> {
  %v = tv.view %x[3, 0] [4, 17] [1, 1] : !tv.tensor<9x17xf32> to !tv.tensor<4x17xf32>
  %r = tv.reshape %v : !tv.tensor<4x17xf32> to !tv.tensor<17x4xf32>
  %y = tv.mul %r, %r : !tv.tensor<17x4xf32>
  func.return %y : !tv.tensor<17x4xf32>
}""",
    "returned": """
func.func @k(%x: !tv.tensor<6x11xf16>) -> !tv.tensor<66xf16> {
  %r = tv.reshape %x : !tv.tensor<6x11xf16> to !tv.tensor<66xf16>
  func.return %r : !tv.tensor<66xf16>
}""",
}

SHAPES = {
    "computed": (7, 30),
    "argument": (3, 5, 13),
    "view": (9, 17),
    "returned": (6, 11),
}
DTYPES = {
    "computed": np.float32,
    "argument": np.float16,
    "view": np.float32,
    "returned": np.float16,
}


@pytest.mark.parametrize("target", ["tiny", "ascend910b"])
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_reshape_through_the_pipeline(kernel: str, target: str) -> None:
    module = parse_chunk(default_context(), SourceChunk(KERNELS[kernel], 1), "k.mlir")
    rng = np.random.default_rng(7)
    x = rng.uniform(-3, 3, SHAPES[kernel]).astype(DTYPES[kernel])
    with diagnostic_handler(lambda _: None):
        result = check_lowering(
            module, "k", [x], "ascend_hw", LowerPipeline(target=target)
        )
    assert result.ok, [c.describe() for c in result.comparisons]
