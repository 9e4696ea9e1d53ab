// A sparse kernel compared level against level: pypto-run draws a random CSR
// argument (30 % of the entries stored) or reads argN_offsets, argN_indices and
// argN_values from --inputs (checked: a decreasing offset is located at the
// file), lowers with pypto-lower (tv-sparse-to-tile) and compares: the tile
// level is exact, and so is the ascend_hw level on the simulator (the scalar
// unit reads the offsets and indices: ascend_hw.load_scalar, docs/sparse.md).
// RUN: pypto-run %s --check=tile --target tiny | filecheck %s --check-prefix=TILE
// RUN: pypto-run %s --check=tile --lower-options "bsr-cube=false sparse-tile-cols=16" | filecheck %s --check-prefix=TILE
// RUN: python -c "import numpy as np; np.savez('%t.npz', arg0_offsets=np.array([0, 1, 0, 2, 2, 2, 2, 2, 2], np.int32), arg0_indices=np.array([3, 0], np.int32), arg0_values=np.ones(2, np.float16), arg1=np.ones((20, 24), np.float16))"
// RUN: bash -c 'pypto-run %s --inputs %t.npz --check=tile; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: pypto-run %s --check --target tiny | filecheck %s --check-prefix=HW
// RUN: pypto-run %s --check --target ascend910b | filecheck %s --check-prefix=HW

// TILE: @spmm: tv level, lowered by pypto-lower{{.*}} to the tile level
// TILE: inputs: random (seed 0)
// TILE: vs tv reference: max |error| 0 (0 ulp
// TILE: check: ok (1 of 1 outputs within tolerance of the tv reference)

// BAD: sparse.mlir.tmp.npz: error: arg0: the row offsets decrease at row 1: 1 then 0
// BAD: exit=1

// HW: @spmm: tv level, lowered by pypto-lower{{.*}} to the ascend_hw level
// HW: vs tv reference: max |error| 0 (0 ulp
// HW: check: ok (1 of 1 outputs within tolerance of the tv reference)

func.func @spmm(%a: !tv.tensor<8x20xf16, #tv.csr<rows = 8, cols = 20, nnz = ?, index = i32>>, %b: !tv.tensor<20x24xf16>) -> !tv.tensor<8x24xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<8x20xf16, #tv.csr<rows = 8, cols = 20, nnz = ?, index = i32>>, !tv.tensor<20x24xf16> -> !tv.tensor<8x24xf16>
  func.return %c : !tv.tensor<8x24xf16>
}
