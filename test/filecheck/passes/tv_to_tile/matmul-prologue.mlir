// Prologue fusion (tv-to-tile's prologue-fusion, passes/matmul_fusion.py): a
// matmul operand computed by elementwise ops is computed in ub on each block
// the nest needs and moved ub -> l1 (nz), instead of going through GM. What it
// refuses keeps the operand's own nest and says why.
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b}' --verify-diagnostics | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b prologue-fusion=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s --split-input-file -p 'pypto-lower{target=ascend910b prologue-fusion=false}' 2>&1 | filecheck %s --check-prefix=OFF

// OFF-NOT: fused prologue
// OFF-NOT: of the lhs not fused

// CHECK-LABEL: func.func @relu
// CHECK-NOT:  memref.alloc
// CHECK:      %[[X:.*]] = tile.load %x{{.*}} -> !tile.tile<16x48xf16, ub, valid = [?, 40]>
// CHECK:      %[[R:.*]] = tile.relu %[[X]]
// CHECK:      %[[P:.*]] = tile.pad %[[R]]
// CHECK:      %[[L1:.*]] = tile.move %[[P]] {{.*}} -> !tile.tile<16x48xf16, l1, valid = [?, 40], layout = nz, pad = zero>
// CHECK:      tile.move %[[L1]] {{.*}} -> !tile.tile<16x48xf16, l0a
// CHECK:      tile.matmul
func.func @relu(%x: !tv.tensor<77x40xf16>, %w: !tv.tensor<40x133xf16>) -> !tv.tensor<77x133xf16> {
  %r = tv.relu %x : !tv.tensor<77x40xf16>
  // expected-remark @+3 {{fused prologue tv.relu into the nest of tv.matmul: the lhs is computed in ub on each block and moved ub -> l1 (no GM round trip)}}
  // expected-remark @+2 {{prologue kept in the matmul's nest: estimated 3442 cycles with the operand computed on each block in the matmul's nest, 6555 with a nest of its own over the cores, a sync_all and the matmul's best blocks}}
  // expected-remark @+1 {{tiled tv.matmul 77x133x40}}
  %m = tv.matmul %r, %w acc(f32) : !tv.tensor<77x40xf16>, !tv.tensor<40x133xf16> -> !tv.tensor<77x133xf16>
  func.return %m : !tv.tensor<77x133xf16>
}

// -----

// A scaled bias on B, and a cast of A from f32.
// CHECK-LABEL: func.func @both
// CHECK-NOT:  memref.alloc
// CHECK-DAG:  tile.cast {{.*}} -> !tile.tile<{{.*}}xf16, ub
// CHECK-DAG:  tile.add
// CHECK:      tile.matmul
func.func @both(%x: !tv.tensor<64x32xf32>, %w: !tv.tensor<32x48xf16>, %b: !tv.tensor<48xf16>) -> !tv.tensor<64x48xf16> {
  %a = tv.cast %x : !tv.tensor<64x32xf32> to !tv.tensor<64x32xf16>
  %c = arith.constant 5.000000e-01 : f16
  %s = tv.mul %w, %c : !tv.tensor<32x48xf16>, f16 -> !tv.tensor<32x48xf16>
  %v = tv.add %s, %b : !tv.tensor<32x48xf16>, !tv.tensor<48xf16> -> !tv.tensor<32x48xf16>
  // expected-remark @+4 {{fused prologue tv.cast into the nest of tv.matmul: the lhs}}
  // expected-remark @+3 {{fused prologue tv.mul, tv.add into the nest of tv.matmul: the rhs}}
  // expected-remark @+2 {{prologue kept in the matmul's nest: estimated 3324 cycles}}
  // expected-remark @+1 {{tiled tv.matmul 64x48x32}}
  %m = tv.matmul %a, %v acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<32x48xf16> -> !tv.tensor<64x48xf16>
  func.return %m : !tv.tensor<64x48xf16>
}

// -----

// The cube reads A transposed (the transpose is the matmul's flag): refused.
// CHECK-LABEL: func.func @transposed
// CHECK:      memref.alloc
func.func @transposed(%x: !tv.tensor<40x64xf16>, %w: !tv.tensor<40x32xf16>) -> !tv.tensor<64x32xf16> {
  // expected-remark @+1 {{tiled tv.relu as one loop nest}}
  %r = tv.relu %x : !tv.tensor<40x64xf16>
  %t = tv.transpose %r [1, 0] : !tv.tensor<40x64xf16> -> !tv.tensor<64x40xf16>
  // expected-remark @+2 {{prologue tv.relu of the lhs not fused: the cube reads the operand transposed (moved in l1 -> l0 only)}}
  // expected-remark @+1 {{tiled tv.matmul 64x32x40}}
  %m = tv.matmul %t, %w acc(f32) : !tv.tensor<64x40xf16>, !tv.tensor<40x32xf16> -> !tv.tensor<64x32xf16>
  func.return %m : !tv.tensor<64x32xf16>
}

// -----

// A single row of A: its ub tile would not be made of fractals.
// CHECK-LABEL: func.func @one_row
// CHECK:      memref.alloc
func.func @one_row(%x: !tv.tensor<1x32xf16>, %w: !tv.tensor<32x48xf16>) -> !tv.tensor<1x48xf16> {
  // expected-remark @+1 {{tiled tv.relu as one loop nest}}
  %r = tv.relu %x : !tv.tensor<1x32xf16>
  // expected-remark @+2 {{prologue tv.relu of the lhs not fused: the operand has a dim of extent 1}}
  // expected-remark @+1 {{tiled tv.matmul 1x48x32}}
  %m = tv.matmul %r, %w acc(f32) : !tv.tensor<1x32xf16>, !tv.tensor<32x48xf16> -> !tv.tensor<1x48xf16>
  func.return %m : !tv.tensor<1x48xf16>
}

// -----

// A transposed copy inside the operand's nest: not only elementwise work.
// CHECK-LABEL: func.func @transposing
// CHECK:      memref.alloc
func.func @transposing(%x: !tv.tensor<32x64xf16>, %w: !tv.tensor<32x48xf16>) -> !tv.tensor<64x48xf16> {
  %t = tv.transpose %x [1, 0] : !tv.tensor<32x64xf16> -> !tv.tensor<64x32xf16>
  // expected-remark @+1 {{tiled tv.transpose, tv.relu as one loop nest}}
  %r = tv.relu %t : !tv.tensor<64x32xf16>
  // expected-remark @+2 {{prologue tv.transpose, tv.relu of the lhs not fused: its group does more than elementwise work}}
  // expected-remark @+1 {{tiled tv.matmul 64x48x32}}
  %m = tv.matmul %r, %w acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<32x48xf16> -> !tv.tensor<64x48xf16>
  func.return %m : !tv.tensor<64x48xf16>
}

// -----

// An i8 operand: the vector unit has no i8 instructions to pad and move it.
// CHECK-LABEL: func.func @i8
// CHECK:      memref.alloc
func.func @i8(%x: !tv.tensor<64x32xi8>, %w: !tv.tensor<32x64xi8>) -> !tv.tensor<64x64xi32> {
  // expected-remark @+1 {{tiled tv.relu as one loop nest}}
  %r = tv.relu %x : !tv.tensor<64x32xi8>
  // expected-remark @+2 {{prologue tv.relu of the lhs not fused: only f16 operands are computed in ub for the cube}}
  // expected-remark @+1 {{tiled tv.matmul 64x64x32}}
  %m = tv.matmul %r, %w acc(i32) : !tv.tensor<64x32xi8>, !tv.tensor<32x64xi8> -> !tv.tensor<64x64xi32>
  func.return %m : !tv.tensor<64x64xi32>
}
