// Loops whose bounds are only known at run time (a CSR row's entries,
// docs/sparse.md). One without carried values is unrolled by the stages that
// fit after a remainder loop of max(0, ceil((ub - lb) / step)) mod stages
// trips, as tile-to-hw does a core's chunk; one that carries values is left
// alone. One whose body holds loops (a CSR row: its index windows loaded,
// then loops over its entries) runs them in the middle phase, so the next
// row's windows load first. Each says so. Scalar reads (memref.load) move with the loads they
// address, unless the body stores to the memref they read.
// RUN: pypto-opt %s --split-input-file --verify-diagnostics -p 'tile-pipeline{stages=2 target=ascend910b}' | filecheck %s
// With runtime-bounds=false (pypto-lower's pipeline-runtime-bounds=false) such
// loops stay as they are, without a remark.
// RUN: pypto-opt %s --split-input-file -p 'tile-pipeline{stages=2 target=ascend910b runtime-bounds=false}' 2>&1 | filecheck %s --check-prefix=OFF
// OFF-NOT:     remark
// OFF-LABEL:   func.func @gather
// OFF-NEXT:      %c0 = arith.constant 0 : index
// OFF-NEXT:      %c3 = arith.constant 3 : index
// OFF-NEXT:      scf.for %p = %lo to %hi step %c3 {
// OFF-NOT:     remark

// CHECK-LABEL: func.func @gather
// CHECK:         %[[SPAN:.*]] = arith.subi %hi, %lo : index
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[BACK:.*]] = arith.cmpi slt, %[[SPAN]], %[[ZERO]] : index
// CHECK-NEXT:    %[[POS:.*]] = arith.select %[[BACK]], %[[ZERO]], %[[SPAN]] : index
// CHECK-NEXT:    %[[UP:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[ROUND:.*]] = arith.addi %[[POS]], %[[UP]] : index
// CHECK-NEXT:    %[[TRIPS:.*]] = arith.divui %[[ROUND]], %c3 : index
// CHECK-NEXT:    %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[REST:.*]] = arith.remui %[[TRIPS]], %[[TWO]] : index
// CHECK-NEXT:    %[[SKIP:.*]] = arith.muli %[[REST]], %c3 : index
// CHECK-NEXT:    %[[MAIN:.*]] = arith.addi %lo, %[[SKIP]] : index
// CHECK-NEXT:    %[[SIX:.*]] = arith.constant 6 : index
// CHECK-NEXT:    scf.for %p = %lo to %[[MAIN]] step %c3 {
// CHECK-NEXT:      %col = memref.load %idx[%p] : memref<64xindex>
// CHECK-NEXT:      %row = tile.load %x[%col, %c0]
// CHECK-NEXT:      tile.store %row, %out[%p, %c0]
// CHECK-NEXT:    } {pypto.pipeline_prologue}
// CHECK-NEXT:    scf.for %[[P:.*]] = %[[MAIN]] to %hi step %[[SIX]] {
// CHECK:           memref.load %idx[%[[P]]]
// CHECK-NEXT:      tile.load
// CHECK-NEXT:      memref.load
// CHECK-NEXT:      tile.load
// CHECK-NEXT:      tile.store
// CHECK-NEXT:      tile.store
// CHECK-NEXT:    }
func.func @gather(%idx: memref<64xindex>, %x: memref<32x64xf32>, %out: memref<64x64xf32>, %lo: index, %hi: index) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  // expected-remark @+1 {{tile-pipeline: 2 stages over a loop of run-time bounds (unrolled after a remainder loop of trips mod 2)}}
  scf.for %p = %lo to %hi step %c3 {
    %col = memref.load %idx[%p] : memref<64xindex>
    %row = tile.load %x[%col, %c0] : memref<32x64xf32> -> !tile.tile<1x64xf32, ub>
    tile.store %row, %out[%p, %c0] : !tile.tile<1x64xf32, ub> -> memref<64x64xf32>
  }
  func.return
}

// -----

// CHECK-LABEL: func.func @row
// CHECK:         scf.for %p = %start to %end step %c1 iter_args
func.func @row(%off: memref<9xindex>, %idx: memref<?xindex>, %b: memref<16x64xf32>, %out: memref<8x64xf32>, %r: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %start = memref.load %off[%r] : memref<9xindex>
  %r1 = arith.addi %r, %c1 : index
  %end = memref.load %off[%r1] : memref<9xindex>
  %init = tile.fill %zero : f32 -> !tile.tile<1x64xf32, ub>
  // expected-remark @+1 {{tile-pipeline: not pipelined: it carries values and its bounds are only known at run time}}
  %acc = scf.for %p = %start to %end step %c1 iter_args(%a = %init) -> (!tile.tile<1x64xf32, ub>) {
    %col = memref.load %idx[%p] : memref<?xindex>
    %row = tile.load %b[%col, %c0] : memref<16x64xf32> -> !tile.tile<1x64xf32, ub>
    %a2 = tile.add %a, %row : !tile.tile<1x64xf32, ub>
    scf.yield %a2 : !tile.tile<1x64xf32, ub>
  }
  tile.store %acc, %out[%r, %c0] : !tile.tile<1x64xf32, ub> -> memref<8x64xf32>
  func.return
}

// -----

// The indices are read from the tensor the body writes: a read moved above
// an earlier iteration's store would see the old value.
// CHECK-LABEL: func.func @reads_what_it_writes
// CHECK:         scf.for %p = %c0 to %c64 step %c1 {
// CHECK-NEXT:      memref.load %idx
// CHECK-NEXT:      arith.index_cast
// CHECK-NEXT:      tile.load
// CHECK-NEXT:      tile.store
// CHECK-NEXT:    }
func.func @reads_what_it_writes(%idx: memref<64x8xi32>, %x: memref<32x8xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %p = %c0 to %c64 step %c1 {
    %col = memref.load %idx[%p, %c0] : memref<64x8xi32>
    %i = arith.index_cast %col : i32 to index
    %row = tile.load %x[%i, %c0] : memref<32x8xi32> -> !tile.tile<1x8xi32, ub>
    tile.store %row, %idx[%p, %c0] : !tile.tile<1x8xi32, ub> -> memref<64x8xi32>
  }
  func.return
}

// -----

// A loop of run-time bounds over rows whose body loads the row's window of
// i32 indices and then loops over its entries: the windows of both copies
// load first (the next row's while this one computes), the entry loops run
// in the middle phase, the stores last.
// CHECK-LABEL: func.func @rows
// CHECK:         scf.for %{{.*}} = %lo to %{{.*}} step %c1 {
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %hi step %{{.*}} {
// CHECK:           %[[W0:.*]] = tile.load %idx[%{{.*}}] : memref<?xi32> -> !tile.tile<8xi32, ub>
// CHECK:           %[[W1:.*]] = tile.load %idx[%{{.*}}] : memref<?xi32> -> !tile.tile<8xi32, ub>
// CHECK:           scf.for
// CHECK:             tile.extract %[[W0]]
// CHECK:           scf.for
// CHECK:             tile.extract %[[W1]]
// CHECK:           tile.store
// CHECK-NEXT:      tile.store
func.func @rows(%off: memref<9xindex>, %idx: memref<?xi32>, %b: memref<16x64xf32>, %out: memref<8x64xf32>, %lo: index, %hi: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-remark @+1 {{tile-pipeline: 2 stages over a loop of run-time bounds (unrolled after a remainder loop of trips mod 2)}}
  scf.for %r = %lo to %hi step %c1 {
    %start = memref.load %off[%r] : memref<9xindex>
    %r1 = arith.addi %r, %c1 : index
    %end = memref.load %off[%r1] : memref<9xindex>
    %window = tile.load %idx[%start] : memref<?xi32> -> !tile.tile<8xi32, ub>
    %init = tile.fill %zero : f32 -> !tile.tile<1x64xf32, ub>
    // expected-remark @+1 {{tile-pipeline: not pipelined: it carries values and its bounds are only known at run time}}
    %acc = scf.for %p = %start to %end step %c1 iter_args(%a = %init) -> (!tile.tile<1x64xf32, ub>) {
      %k = arith.subi %p, %start : index
      %col = tile.extract %window[%k] : !tile.tile<8xi32, ub> -> index
      %row = tile.load %b[%col, %c0] : memref<16x64xf32> -> !tile.tile<1x64xf32, ub>
      %a2 = tile.add %a, %row : !tile.tile<1x64xf32, ub>
      scf.yield %a2 : !tile.tile<1x64xf32, ub>
    }
    tile.store %acc, %out[%r, %c0] : !tile.tile<1x64xf32, ub> -> memref<8x64xf32>
  }
  func.return
}
