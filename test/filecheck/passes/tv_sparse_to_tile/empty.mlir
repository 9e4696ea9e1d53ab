// A sparse op on a tensor with a dimension of size 0 (no rows, no columns) is
// a located error naming the op and the type, with exit 1: the nests and the
// dense fallback's cost model divided by the rows or columns (an internal
// ZeroDivisionError before). pypto-run without --check runs the tv reference.
// RUN: not pypto-opt %s --split-input-file -p 'pypto-lower{target=tiny}' 2>&1 | filecheck %s
// RUN: not pypto-run %s --entry no_rows --check --target ascend910b 2>&1 | filecheck %s --check-prefix=SIM
// RUN: pypto-run %s --entry no_rows 2>&1 | filecheck %s --check-prefix=REF

// CHECK-NOT: internal error
// CHECK: empty.mlir:[[# @LINE + 5]]:3: error: tv-sparse-to-tile cannot lower 'tv.spmm' on an empty tensor (!tv.tensor<0x20xf16, #tv.csr<rows = 0, cols = 20, nnz = ?, index = i32>>: a dimension of size 0); the tv reference (pypto-run without --check) runs it
// SIM-NOT: internal error
// SIM: error: tv-sparse-to-tile cannot lower 'tv.spmm' on an empty tensor
// REF: result0  f16[0x24]  sum=0
func.func @no_rows(%a: !tv.tensor<0x20xf16, #tv.csr<rows = 0, cols = 20, nnz = ?, index = i32>>, %b: !tv.tensor<20x24xf16>) -> !tv.tensor<0x24xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<0x20xf16, #tv.csr<rows = 0, cols = 20, nnz = ?, index = i32>>, !tv.tensor<20x24xf16> -> !tv.tensor<0x24xf16>
  func.return %c : !tv.tensor<0x24xf16>
}

// -----

// CHECK-NOT: internal error
// CHECK: empty.mlir:[[# @LINE + 2]]:3: error: tv-sparse-to-tile cannot lower 'tv.spmm' on an empty tensor (!tv.tensor<8x0xf16, #tv.csr<rows = 8, cols = 0, nnz = ?, index = i32>>
func.func @no_columns(%a: !tv.tensor<8x0xf16, #tv.csr<rows = 8, cols = 0, nnz = ?, index = i32>>, %b: !tv.tensor<0x24xf16>) -> !tv.tensor<8x24xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<8x0xf16, #tv.csr<rows = 8, cols = 0, nnz = ?, index = i32>>, !tv.tensor<0x24xf16> -> !tv.tensor<8x24xf16>
  func.return %c : !tv.tensor<8x24xf16>
}
