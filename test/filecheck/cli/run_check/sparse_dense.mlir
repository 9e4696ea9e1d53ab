// A sparse function with dense ops (docs/sparse.md, *Dense ops beside sparse
// ones*): a * 0.5 on the stored values, spmm, + c and relu, checked on the
// simulator against the tv reference, exact; and CSR spmm through its dense
// fallback forced (sparse-dense-density), within the error bound.
// RUN: pypto-run %s --entry f --target tiny --check | filecheck %s
// RUN: pypto-run %s --entry g --target tiny --check --lower-options "sparse-dense-density=0.000001" | filecheck %s

// CHECK: vs tv reference: max |error| {{.*}}: ok
// CHECK: check: ok (1 of 1 outputs within tolerance of the tv reference)

func.func @f(%a: !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, %b: !tv.tensor<16x32xf16>, %c: !tv.tensor<8x32xf16>) -> !tv.tensor<8x32xf16> {
    %0, %1, %2 = tv.disassemble %a : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>> -> !tv.tensor<9xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16>
    %3 = arith.constant 5.000000e-01 : f16
    %4 = tv.mul %2, %3 : !tv.tensor<?xf16>, f16 -> !tv.tensor<?xf16>
    %5 = tv.assemble %0, %1, %4 : !tv.tensor<9xi32>, !tv.tensor<?xi32>, !tv.tensor<?xf16> -> !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>
    %6 = tv.spmm %5, %b : !tv.tensor<8x16xf16, #tv.csr<rows = 8, cols = 16, nnz = ?, index = i32>>, !tv.tensor<16x32xf16> -> !tv.tensor<8x32xf16>
    %7 = tv.add %6, %c : !tv.tensor<8x32xf16>
    %8 = tv.relu %7 : !tv.tensor<8x32xf16>
    func.return %8 : !tv.tensor<8x32xf16>
}
func.func @g(%a: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, %b: !tv.tensor<64x32xf16>) -> !tv.tensor<64x32xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  func.return %c : !tv.tensor<64x32xf16>
}
