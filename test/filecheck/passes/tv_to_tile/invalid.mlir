// What tv-to-tile refuses, each with a located error and exit status 1: tile
// sizes that break the alignment or do not fit (naming the memory, the bytes
// needed and the bytes it holds), sparse tensors, tensors inside regions, a
// reduction over an empty dimension.
// RUN: pypto-opt %s --split-input-file --verify-diagnostics -p 'tv-to-tile{target=tiny tile-sizes=4,20 matmul-tile-sizes=16,16,20}'

func.func @misaligned(%x: !tv.tensor<64x1024xf16>) -> !tv.tensor<64x1024xf16> {
  // expected-error@below {{tile-sizes: 20 elements along dim 1 is not a multiple of 16 elements, so tile rows would break the ub alignment}}
  %y = tv.exp %x : !tv.tensor<64x1024xf16>
  func.return %y : !tv.tensor<64x1024xf16>
}

// -----

func.func @not_fractal(%a: !tv.tensor<64x64xf16>, %b: !tv.tensor<64x64xf16>) -> !tv.tensor<64x64xf16> {
  // expected-error@below {{matmul-tile-sizes: k0 = 20 is not a positive multiple of the 16-element fractal}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x64xf16> -> !tv.tensor<64x64xf16>
  func.return %c : !tv.tensor<64x64xf16>
}

// -----

func.func @sparse(%x: !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = 8, index = i32>>) -> !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = 8, index = i32>> {
  // expected-error@below {{tv-to-tile does not tile sparse tensors (!tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = 8, index = i32>>); run tv-sparse-to-tile first}}
  func.return %x : !tv.tensor<64x64xf16, #tv.csr<rows = 64, cols = 64, nnz = 8, index = i32>>
}

// -----

func.func @in_a_loop(%x: !tv.tensor<64xf16>, %n: index) -> !tv.tensor<64xf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@below {{tv-to-tile cannot lower 'scf.for' on tensors}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (!tv.tensor<64xf16>) {
    %e = tv.exp %a : !tv.tensor<64xf16>
    scf.yield %e : !tv.tensor<64xf16>
  }
  func.return %r : !tv.tensor<64xf16>
}

// -----

func.func @empty_reduction(%x: !tv.tensor<0x8xf32>) -> !tv.tensor<8xf32> {
  // expected-error@below {{tv-to-tile cannot tile a reduction over an empty dimension}}
  %s = tv.reduce_sum %x [0] : !tv.tensor<0x8xf32> -> !tv.tensor<8xf32>
  func.return %s : !tv.tensor<8xf32>
}
