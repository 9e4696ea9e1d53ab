// A matmul whose elementwise epilogue does not fit UB next to a base block (an
// i8 matmul accumulates 32x32 i32 blocks: 4096 bytes, all of tiny's UB) stores
// its result to a GM temporary, and the epilogue becomes a vector nest of its own.
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=tiny}' --verify-diagnostics | filecheck %s

// CHECK-LABEL: func.func @f
// CHECK:      %[[C:.*]] = memref.alloc() : memref<64x13xi32>
// CHECK:      tile.matmul
// CHECK:      tile.store %{{.*}}, %[[C]]
// CHECK:      tile.load %[[C]]
// CHECK:      tile.min
// CHECK:      tile.store %{{.*}}, %out
// CHECK:      memref.dealloc %[[C]]
func.func @f(%a: !tv.tensor<64x33xi8>, %b: !tv.tensor<33x13xi8>, %y: !tv.tensor<64x13xi32>) -> !tv.tensor<64x13xi32> {
  // expected-remark @+1 {{accumulator(s) in l0c; double-buffered}}
  %c = tv.matmul %a, %b acc(i32) : !tv.tensor<64x33xi8>, !tv.tensor<33x13xi8> -> !tv.tensor<64x13xi32>
  // expected-remark @+2 {{tiled tv.min as one loop nest over 64x13}}
  // expected-remark @+1 {{epilogue tv.min not fused with tv.matmul: no base block fits ub next to the epilogue on 'tiny'; the result goes through GM}}
  %m = tv.min %c, %y : !tv.tensor<64x13xi32>
  func.return %m : !tv.tensor<64x13xi32>
}

// -----

// Base blocks are multiples of the fractal edge (16 for f32): the rows of an
// i8 epilogue tile need 32 elements, so the epilogue is a nest of its own.
// CHECK-LABEL: func.func @i8_epilogue
// CHECK:      %[[C:.*]] = memref.alloc() : memref<17x2xf32>
// CHECK:      tile.matmul
// CHECK:      tile.store %{{.*}}, %[[C]]
// CHECK:      tile.load %[[C]]{{.*}} -> !tile.tile<{{.*}}x32xf32, ub
// CHECK:      tile.cast %{{.*}} -> !tile.tile<{{.*}}x32xi8, ub
func.func @i8_epilogue(%a: !tv.tensor<17x8xf32>, %b: !tv.tensor<8x2xf32>) -> !tv.tensor<17x2xi8> {
  // expected-remark @+1 {{accumulator(s) in l0c; double-buffered}}
  %c = tv.matmul %a, %b acc(f32) : !tv.tensor<17x8xf32>, !tv.tensor<8x2xf32> -> !tv.tensor<17x2xf32>
  // expected-remark @+2 {{tiled tv.cast as one loop nest over 17x2}}
  // expected-remark @+1 {{epilogue tv.cast not fused with tv.matmul: its tiles need rows of 32 elements, a base block's are multiples of 16; the result goes through GM}}
  %d = tv.cast %c : !tv.tensor<17x2xf32> to !tv.tensor<17x2xi8>
  func.return %d : !tv.tensor<17x2xi8>
}
