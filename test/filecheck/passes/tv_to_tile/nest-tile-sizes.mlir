// nest-tile-sizes=NEST,ROWS,COLS: one vector nest's tile sizes (what pypto-tune
// sets per nest), honoured with a remark for that nest only, forwarded by
// pypto-lower, and refused with a located diagnostic when they do not fit or
// name a nest the module does not have.
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny nest-tile-sizes=1,4,32}' 2>&1 | filecheck %s
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny nest-tile-sizes=0,2,256}' 2>&1 | filecheck %s --check-prefix=LOWER
// RUN: pypto-run %s --check --target tiny --lower-options 'nest-tile-sizes=0,2,256,1,4,32' | filecheck %s --check-prefix=SIM
// RUN: bash -c 'pypto-opt %s -p "tv-to-tile{target=tiny nest-tile-sizes=0,64,1024}" 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=UB
// RUN: bash -c 'pypto-opt %s -p "tv-to-tile{target=tiny nest-tile-sizes=0,4,20}" 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=ALIGN
// RUN: bash -c 'pypto-opt %s -p "tv-to-tile{target=tiny nest-tile-sizes=2,4,16}" 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=BEYOND
// RUN: bash -c 'pypto-opt %s -p "tv-to-tile{target=tiny nest-tile-sizes=2,4}" 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=TRIPLES
// RUN: bash -c 'pypto-opt %s -p "tv-to-tile{target=tiny nest-tile-sizes=0,4,16,0,2,16}" 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=TWICE

builtin.module {
  func.func @f(%x: !tv.tensor<64x1024xf16>, %a: !tv.tensor<32x64xf16>) -> (!tv.tensor<64x1024xf16>, !tv.tensor<32x64xf16>) {
    %y = tv.exp %x : !tv.tensor<64x1024xf16>
    %b = tv.abs %a : !tv.tensor<32x64xf16>
    func.return %y, %b : !tv.tensor<64x1024xf16>, !tv.tensor<32x64xf16>
  }
}

// The first nest keeps the model's tiles, the second takes 4x32.
// CHECK: nest-tile-sizes.mlir:16:5: remark: tiled tv.exp as one loop nest over 64x1024: ub tiles 1x512; 2048 bytes live of 4096 in ub (double-buffered){{$}}
// CHECK: nest-tile-sizes.mlir:17:5: remark: tiled tv.abs as one loop nest over 32x64: ub tiles 4x32; 512 bytes live of 4096 in ub (double-buffered); tile sizes from the tuner (nest-tile-sizes, vector nest 1)
// CHECK: tile.load {{.*}} : memref<64x1024xf16> -> !tile.tile<1x512xf16, ub>
// CHECK: tile.load {{.*}} : memref<32x64xf16> -> !tile.tile<4x32xf16, ub>

// LOWER: remark: tiled tv.exp as one loop nest over 64x1024: ub tiles 2x256; {{.*}}; tile sizes from the tuner (nest-tile-sizes, vector nest 0)
// LOWER: remark: tiled tv.abs as one loop nest over 32x64: ub tiles 8x64; {{.*}}(double-buffered){{$}}

// SIM: check: ok (2 of 2 outputs within tolerance of the tv reference)

// UB: nest-tile-sizes.mlir:16:5: error: nest-tile-sizes of vector nest 0: tile-sizes 64,1024: the tiles live at once need 262144 bytes of ub but ub of target 'tiny' holds 4096 bytes
// UB: exit=1
// ALIGN: nest-tile-sizes.mlir:16:5: error: nest-tile-sizes of vector nest 0: tile-sizes: 20 elements along dim 1 is not a multiple of 16 elements, so tile rows would break the ub alignment
// ALIGN: exit=1
// BEYOND: nest-tile-sizes.mlir:14:1: error: tv-to-tile: nest-tile-sizes names vector nest 2 but the module has 2 vector nest(s)
// BEYOND: exit=1
// TRIPLES: error: tv-to-tile: nest-tile-sizes takes NEST,ROWS,COLS triples (NEST >= 0), got 2,4
// TRIPLES: exit=1
// TWICE: error: tv-to-tile: nest-tile-sizes takes positive ROWS,COLS, each nest once, got 0,4,16,0,2,16
// TWICE: exit=1
