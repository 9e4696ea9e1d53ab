// gather-run=4 (the default): the last index dim in groups of 4; the scalar
// unit reads the 4 indices and compares idx[p + t] == idx[p] + t; a run moves
// as one 4-row tile (one DMA each way), another group row by row; the last
// n mod 4 indices row by row. An index tensor shorter than a run is not
// grouped; gather-run=0 is refused. A function with a gather is marked
// pypto.interleave_groups: tile-to-hw splits each of its nests over all the
// cores (the gathers of top-k attention beside the copy of q), not the later
// ones of a phase left to the last core.
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b}' 2>&1 | filecheck %s
// RUN: pypto-opt %s --verify-diagnostics -p 'tv-sparse-to-tile{target=ascend910b gather-run=0}'
// RUN: pypto-opt %s -p 'tv-sparse-to-tile{target=ascend910b interleave=false}' 2>&1 | filecheck %s --check-prefix=OFF

// CHECK: remark: tv-sparse-to-tile: gather by rows, 40 columns a tile; 4 consecutive indices (compared on the scalar unit) move as one 4-row DMA, other groups row by row; each nest of its phase split over all the cores (interleave)
// CHECK: remark: tv-sparse-to-tile: gather by rows, 40 columns a tile (runs of consecutive indices not merged: gather-run=1 or fewer indices than a run)

// CHECK-LABEL: func.func @gather(%x: memref<50x40xf16>, %idx: memref<3x10xi32>, %out: memref<3x10x40xf16>) attributes {pypto.interleave_groups}
// CHECK:   scf.for %[[I:.*]] =
// CHECK:     scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %[[FOUR:.*]] {
// CHECK:       %[[R0:.*]] = arith.index_cast
// CHECK:       %[[R1:.*]] = arith.index_cast
// CHECK:       %[[NEXT:.*]] = arith.addi %[[R0]], %{{.*}}
// CHECK:       %[[SAME:.*]] = arith.cmpi eq, %[[R1]], %[[NEXT]]
// CHECK-COUNT-2: arith.andi
// CHECK:       scf.if %{{.*}} {
// CHECK:         %[[BLOCK:.*]] = tile.load %x[%[[R0]], %{{.*}}] : memref<50x40xf16> -> !tile.tile<4x48xf16, ub, valid = [4, 40]>
// CHECK:         tile.store %[[BLOCK]], %out[%[[I]], %[[P]], %{{.*}}]
// CHECK:       } else {
// CHECK-COUNT-4: tile.load %x[{{.*}}] : memref<50x40xf16> -> !tile.tile<1x48xf16, ub, valid = [1, 40]>
// CHECK:       }
// CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK:       tile.load %x[{{.*}}] : memref<50x40xf16> -> !tile.tile<1x48xf16, ub, valid = [1, 40]>

// CHECK-LABEL: func.func @short

// interleave=false: no mark, the remark does not say it.
// OFF: remark: tv-sparse-to-tile: gather by rows, 40 columns a tile; 4 consecutive indices (compared on the scalar unit) move as one 4-row DMA, other groups row by row{{$}}
// OFF: func.func @gather(%x: memref<50x40xf16>, %idx: memref<3x10xi32>, %out: memref<3x10x40xf16>) {

func.func @gather(%x: !tv.tensor<50x40xf16>, %idx: !tv.tensor<3x10xi32>) -> !tv.tensor<3x10x40xf16> {
  // expected-error @+1 {{tv-sparse-to-tile: gather-run must be >= 1, got 0}}
  %g = tv.gather %x[%idx] : !tv.tensor<50x40xf16>, !tv.tensor<3x10xi32> -> !tv.tensor<3x10x40xf16>
  func.return %g : !tv.tensor<3x10x40xf16>
}

func.func @short(%x: !tv.tensor<50x40xf16>, %idx: !tv.tensor<3xi32>) -> !tv.tensor<3x40xf16> {
  %g = tv.gather %x[%idx] : !tv.tensor<50x40xf16>, !tv.tensor<3xi32> -> !tv.tensor<3x40xf16>
  func.return %g : !tv.tensor<3x40xf16>
}
