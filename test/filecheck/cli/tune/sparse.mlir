// pypto-tune on a CSR SpMM (docs/tuning.md): the row-tile width of the sparse
// nest is a dimension (probed widths, the default 0 among them), the candidates
// run on random CSR inputs as pypto-run --random draws them, and
// pypto-lower{tuned=true} applies the winner.
// RUN: rm -f %t.sqlite
// RUN: env PYPTO_TUNE_CACHE=%t.sqlite pypto-tune %s --target tiny --budget 3 --jobs 1 --no-progress --options sparse-tile-cols,bsr-cube | filecheck %s --check-prefix=TUNE
// RUN: env PYPTO_TUNE_CACHE=%t.sqlite pypto-opt %s -p 'pypto-lower{target=tiny tuned=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=USED

// TUNE: @spmm on tiny: 4 configurations (1 options), 3 choices pruned before running
// TUNE: sparse-tile-cols: 4 values (5 widths probed, up to 128)
// TUNE: pruned before running: 1 x bsr-cube: no effect on the tile IR
// TUNE: pruned before running: 1 x sparse-tile-cols: alignment
// TUNE: pruned before running: 1 x sparse-tile-cols: capacity
// TUNE: measured 3 candidates in {{.*}} on 1 local worker(s)
// TUNE: default {{.*}} 1.00x
// TUNE: best: {{.*}}; numerics: ok (1 of 1 outputs within tolerance of the tv reference)

// USED: sparse.mlir:[[# @LINE + 1]]:1: remark: pypto-lower{tuned=true}: options tuned for @spmm on tiny: {{.*}} ({{[0-9]+}} cycles, default {{[0-9]+}}, 3 candidates measured)
func.func @spmm(%a: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, %b: !tv.tensor<64x128xf16>) -> !tv.tensor<64x128xf16> {
  %c = tv.spmm %a, %b : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = ?, index = i32>>, !tv.tensor<64x128xf16> -> !tv.tensor<64x128xf16>
  func.return %c : !tv.tensor<64x128xf16>
}
