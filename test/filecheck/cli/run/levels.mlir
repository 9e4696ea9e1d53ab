// The level comes from the dialects of the function's ops (and its callees'):
// ascend_hw, tile or tv; a function with none of them is tile-level when it
// takes memrefs, else tv-level. One function cannot mix levels.
// RUN: pypto-run %s --entry via_call | filecheck %s --check-prefix=CALL
// RUN: pypto-run %s --entry untouched | filecheck %s --check-prefix=MEMREF
// RUN: pypto-run %s --entry scalar | filecheck %s --check-prefix=SCALAR
// RUN: bash -c 'pypto-run %s --entry mixed; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MIXED

func.func @via_call(%x: memref<4xf32>) {
  func.call @store_tile(%x) : (memref<4xf32>) -> ()
  func.return
}
func.func private @store_tile(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : memref<4xf32> -> !tile.tile<4xf32, ub>
  %n = tile.neg %t : !tile.tile<4xf32, ub>
  tile.store %n, %x[%c0] : !tile.tile<4xf32, ub> -> memref<4xf32>
  func.return
}
func.func @untouched(%x: memref<4xi32>) {
  func.return
}
func.func @scalar(%a: i32, %b: i32) -> i32 {
  %c = arith.addi %a, %b : i32
  func.return %c : i32
}
func.func @mixed(%x: memref<4xf32>, %y: !tv.tensor<4xf32>) -> !tv.tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0] : memref<4xf32> -> !tile.tile<4xf32, ub>
  %e = tv.exp %y : !tv.tensor<4xf32>
  func.return %e : !tv.tensor<4xf32>
}

// CALL: @via_call: tile level, run by the tile interpreter
// CALL-NEXT: inputs: random (seed 0)
// CALL-NEXT: arg0  f32[4]  sum={{.*}} crc32={{[0-9a-f]+}}{{$}}

// MEMREF: @untouched: tile level, run by the tile interpreter
// MEMREF: arg0  i32[4]  {{.*}}  (unchanged)

// SCALAR: @scalar: tv level, run by the tv reference interpreter
// SCALAR: result0  i32[]  sum={{-?[0-9]+}} crc32={{[0-9a-f]+}}

// MIXED: levels.mlir:27:1: error: @mixed mixes tile and tv ops; pypto-run runs a function of one level
// MIXED: exit=1
