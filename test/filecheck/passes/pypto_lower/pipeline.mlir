// pypto-lower takes a tv function to ascend_hw: tensors become GM memrefs
// (results a trailing %out), the work tiles, buffers and instructions, pipes
// synchronised by flags. Every stage is its own pass: --mlir-timing and
// --mlir-print-ir-after name the member passes, in order.
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny}' 2>/dev/null | filecheck %s
// RUN: pypto-opt %s -p pypto-lower 2>/dev/null | filecheck %s --check-prefix=DEFAULT
// RUN: pypto-opt %s -p pypto-lower --mlir-timing 2>&1 >/dev/null | filecheck %s --check-prefix=STAGES
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny}' --mlir-print-ir-after=tile-peel-tails 2>&1 >/dev/null | filecheck %s --check-prefix=TILE
// RUN: pypto-opt --help | filecheck %s --check-prefix=HELP

func.func @add(%x: !tv.tensor<20x40xf32>, %y: !tv.tensor<20x40xf32>) -> !tv.tensor<20x40xf32> {
  %z = tv.add %x, %y : !tv.tensor<20x40xf32>
  func.return %z : !tv.tensor<20x40xf32>
}

// CHECK:       builtin.module attributes {pypto.target = "tiny"}
// CHECK-NEXT:  func.func @add(%x: memref<20x40xf32>, %y: memref<20x40xf32>, %out: memref<20x40xf32>) attributes {ascend_hw.block_dim =
// CHECK-NOT:   tv.
// CHECK-NOT:   tile.
// CHECK:       ascend_hw.alloc {{.*}} ub>
// CHECK:       ascend_hw.dma_load %x
// CHECK:       ascend_hw.set_flag mte2 -> v
// CHECK:       ascend_hw.wait_flag mte2 -> v
// CHECK:       ascend_hw.vadd
// CHECK:       ascend_hw.set_flag v -> mte3
// CHECK:       ascend_hw.wait_flag v -> mte3
// CHECK:       ascend_hw.dma_store {{.*}} -> %out
// CHECK-NOT:   tile.

// Without a target option or attribute, ascend910b.
// DEFAULT: builtin.module attributes {pypto.target = "ascend910b"}

// STAGES:      CanonicalizePass
// STAGES-NEXT: SetTargetPass
// STAGES-NEXT: TvExpandMathPass
// STAGES-NEXT: TvSchedulePass
// STAGES-NEXT: TvSparseToTilePass
// STAGES-NEXT: TvToTilePass
// STAGES-NEXT: TilePeelTailsPass
// STAGES:      TileToHwPass
// STAGES:      HwInsertSyncPass

// TILE:      IR Dump After TilePeelTailsPass (tile-peel-tails)
// TILE:      func.func @add(%x: memref<20x40xf32>, %y: memref<20x40xf32>, %out: memref<20x40xf32>)
// TILE:      tile.load %x
// TILE:      tile.add
// TILE:      tile.store

// HELP:      pipelines of pypto-mlir:
// HELP:        pypto-lower {{ +}}Lower tv to ascend_hw
// HELP-NEXT:     target: str = ''
// HELP-NEXT:     tile-sizes: tuple[int, ...] = ()
// HELP-NEXT:     matmul-tile-sizes: tuple[int, ...] = ()
// HELP-NEXT:     nest-tile-sizes: tuple[int, ...] = ()
// HELP-NEXT:     max-cores: int = 0
