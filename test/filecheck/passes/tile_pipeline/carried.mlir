// Loops that carry values (a matmul's K loop carrying its l0c accumulator)
// are pipelined too when their loads do not read the carried values: the loads
// of both copies first, then each copy's moves and matmuls in order, the second
// copy accumulating into what the first yields. A loop of 5 trips becomes two
// iterations of two copies and a straight-line fifth copy that takes the
// loop's result; a loop whose loads read a carried value is left alone.
// RUN: pypto-opt %s --split-input-file -p 'tile-pipeline{stages=2 target=ascend910b}' | filecheck %s

func.func @k_loop(%a: memref<16x320xf16>, %b: memref<320x16xf16>, %out: memref<16x16xf16>,
                  %first: !tile.tile<16x16xf32, l0c>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c384 = arith.constant 384 : index
  %acc = scf.for %k = %c64 to %c384 step %c64 iter_args(%x = %first) -> (!tile.tile<16x16xf32, l0c>) {
    %la = tile.load %a[%c0, %k] : memref<16x320xf16> -> !tile.tile<16x64xf16, l1, layout = nz>
    %lb = tile.load %b[%k, %c0] : memref<320x16xf16> -> !tile.tile<64x16xf16, l1, layout = nz>
    %ma = tile.move %la : !tile.tile<16x64xf16, l1, layout = nz> -> !tile.tile<16x64xf16, l0a>
    %mb = tile.move %lb : !tile.tile<64x16xf16, l1, layout = nz> -> !tile.tile<64x16xf16, l0b>
    %y = tile.matmul %ma, %mb, %x : !tile.tile<16x64xf16, l0a>, !tile.tile<64x16xf16, l0b> -> !tile.tile<16x16xf32, l0c>
    scf.yield %y : !tile.tile<16x16xf32, l0c>
  }
  tile.store %acc, %out[%c0, %c0] : !tile.tile<16x16xf32, l0c> -> memref<16x16xf16>
  func.return
}

// CHECK-LABEL: func.func @k_loop(
// CHECK:         %[[R:.*]] = scf.for %[[K:.*]] = %c64 to %{{.*}} step %{{.*}} iter_args(%[[X:.*]] = %first) -> (!tile.tile<16x16xf32, l0c>) {
// CHECK:           %[[K1:.*]] = arith.addi %[[K]], %{{.*}} : index
// CHECK-NEXT:      %[[A0:.*]] = tile.load %a[%c0, %[[K]]]
// CHECK-NEXT:      %[[B0:.*]] = tile.load %b[%[[K]], %c0]
// CHECK-NEXT:      %[[A1:.*]] = tile.load %a[%c0, %[[K1]]]
// CHECK-NEXT:      %[[B1:.*]] = tile.load %b[%[[K1]], %c0]
// CHECK-NEXT:      %[[MA0:.*]] = tile.move %[[A0]]
// CHECK-NEXT:      %[[MB0:.*]] = tile.move %[[B0]]
// CHECK-NEXT:      %[[Y0:.*]] = tile.matmul %[[MA0]], %[[MB0]], %[[X]]
// CHECK-NEXT:      %[[MA1:.*]] = tile.move %[[A1]]
// CHECK-NEXT:      %[[MB1:.*]] = tile.move %[[B1]]
// CHECK-NEXT:      %[[Y1:.*]] = tile.matmul %[[MA1]], %[[MB1]], %[[Y0]]
// CHECK-NEXT:      scf.yield %[[Y1]] : !tile.tile<16x16xf32, l0c>
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[LA:.*]] = tile.load %a[%c0, %{{.*}}]
// CHECK-NEXT:    %[[LB:.*]] = tile.load %b[%{{.*}}, %c0]
// CHECK-NEXT:    %[[LMA:.*]] = tile.move %[[LA]]
// CHECK-NEXT:    %[[LMB:.*]] = tile.move %[[LB]]
// CHECK-NEXT:    %[[LAST:.*]] = tile.matmul %[[LMA]], %[[LMB]], %[[R]]
// CHECK-NEXT:    tile.store %[[LAST]], %out[%c0, %c0]

// -----

func.func @loads_read_carried(%a: memref<64x64xf16>, %t: !tile.tile<16x64xf16, ub>, %out: memref<16x64xf16>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %r, %row = scf.for %i = %c0 to %c64 step %c16 iter_args(%x = %t, %j = %c0) -> (!tile.tile<16x64xf16, ub>, index) {
    %l = tile.load %a[%j, %c0] : memref<64x64xf16> -> !tile.tile<16x64xf16, ub>
    %y = tile.add %l, %x : !tile.tile<16x64xf16, ub>
    %next = arith.addi %j, %c16 : index
    scf.yield %y, %next : !tile.tile<16x64xf16, ub>, index
  }
  tile.store %r, %out[%c0, %c0] : !tile.tile<16x64xf16, ub> -> memref<16x64xf16>
  func.return
}

// CHECK-LABEL: func.func @loads_read_carried(
// CHECK:         scf.for %{{.*}} = %c0 to %c64 step %c16 iter_args(
// CHECK-NEXT:      tile.load %a[%{{.*}}, %c0]
// CHECK-NEXT:      tile.add
