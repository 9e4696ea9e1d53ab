// Option and target errors: no target, an unknown target, malformed tile sizes,
// sizes that do not fit. Each is a diagnostic with exit status 1.
// RUN: bash -c 'pypto-opt %s -p tv-to-tile 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=NOTARGET
// RUN: bash -c 'pypto-opt %s -p "tv-to-tile{target=nosuch}" 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=UNKNOWN
// RUN: bash -c 'pypto-opt %s -p "tv-to-tile{target=tiny tile-sizes=4}" 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=COUNT
// RUN: bash -c 'pypto-opt %s -p "tv-to-tile{target=tiny tile-sizes=64,1024}" 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=UB
// RUN: bash -c 'pypto-opt %s -p "tv-to-tile{target=tiny matmul-tile-sizes=64,64,64}" 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=L0A
// RUN: bash -c 'pypto-opt %s -p "tv-to-tile{target=tiny matmul-tile-sizes=48,32,16,16,16}" 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=L0C
// RUN: bash -c 'pypto-opt %s -p "tv-to-tile{target=tiny tilesizes=4,16}" 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=OPTION
// A module that names its target needs no option.
// RUN: bash -c 'sed "s/^builtin.module {/builtin.module attributes {pypto.target = \"tiny\"} {/" %s | pypto-opt -p tv-to-tile 2>&1; echo "exit=$?"' | filecheck %s --check-prefix=ATTR

builtin.module {
  func.func @f(%x: !tv.tensor<64x1024xf16>, %a: !tv.tensor<64x64xf16>) -> (!tv.tensor<64x1024xf16>, !tv.tensor<64x64xf16>) {
    %y = tv.exp %x : !tv.tensor<64x1024xf16>
    %c = tv.matmul %a, %a acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x64xf16> -> !tv.tensor<64x64xf16>
    func.return %y, %c : !tv.tensor<64x1024xf16>, !tv.tensor<64x64xf16>
  }
}

// NOTARGET: options.mlir:13:1: error: tv-to-tile needs a target: pass target=NAME (or a TOML file) or set pypto.target on the module
// NOTARGET: exit=1
// UNKNOWN: error: tv-to-tile: unknown target: nosuch: no such target file (builtin targets: ascend910b, tiny)
// UNKNOWN: exit=1
// COUNT: error: tv-to-tile: tile-sizes takes two positive numbers ROWS,COLS, got 4
// COUNT: exit=1
// UB: options.mlir:15:5: error: tile-sizes 64,1024: the tiles live at once need 262144 bytes of ub but ub of target 'tiny' holds 4096 bytes
// UB: exit=1
// L0A: options.mlir:16:5: error: matmul-tile-sizes 64,64,64: l0a needs 8192 bytes but l0a of target 'tiny' holds 2048 bytes
// L0A: exit=1
// L0C: options.mlir:16:5: error: matmul-tile-sizes 48,32,16,16,16: l0c needs 6144 bytes but l0c of target 'tiny' holds 4096 bytes
// L0C: exit=1
// OPTION: error: pass 'tv-to-tile' has no option 'tilesizes' (its options: target, tile-sizes, matmul-tile-sizes, nest-tile-sizes, max-cores, matmul-panels, matmul-split-k, matmul-unroll-k, matmul-l2-order, attention-fusion, late-invariants, attention-cube-sum, attention-scale-multiply, attention-scale-fold, attention-key-split, attention-f32-max, attention-prefetch, epilogue-fusion, row-fusion, prologue-fusion)
// OPTION: exit=1
// ATTR: remark: tiled tv.exp
// ATTR: builtin.module attributes {pypto.target = "tiny"}
// ATTR: exit=0
