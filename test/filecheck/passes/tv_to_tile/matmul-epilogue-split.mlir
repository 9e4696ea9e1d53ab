// A matmul whose elementwise epilogue does not fit UB next to a base block (an
// i8 matmul accumulates 32x32 i32 blocks: 4096 bytes, all of tiny's UB) stores
// its result to a GM temporary, and the epilogue becomes a vector nest of its own.
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny}' --verify-diagnostics | filecheck %s

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
  // expected-remark @+1 {{tiled tv.min as one loop nest over 64x13}}
  %m = tv.min %c, %y : !tv.tensor<64x13xi32>
  func.return %m : !tv.tensor<64x13xi32>
}
