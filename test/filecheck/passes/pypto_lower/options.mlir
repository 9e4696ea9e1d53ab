// Options of pypto-lower reach its member passes: the target (also taken from
// the module's pypto.target), tile sizes (tv-to-tile) and the core limit
// (tile-to-hw).
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny tile-sizes=8,32 max-cores=2}' 2>/dev/null | filecheck %s
// RUN: pypto-opt %s -p 'pypto-lower{target=tiny tile-sizes=8,32}' 2>&1 >/dev/null | filecheck %s --check-prefix=REMARK
// RUN: pypto-opt %s -p 'pypto-lower{max-cores=1}' 2>/dev/null | filecheck %s --check-prefix=MODULE
// RUN: pypto-opt %s -p 'pypto-lower{max-cores=1}' 2>&1 >/dev/null | filecheck %s --check-prefix=MODULE-REMARK

builtin.module attributes {pypto.target = "tiny"} {
  func.func @add(%x: !tv.tensor<20x40xf32>, %y: !tv.tensor<20x40xf32>) -> !tv.tensor<20x40xf32> {
    %z = tv.add %x, %y : !tv.tensor<20x40xf32>
    func.return %z : !tv.tensor<20x40xf32>
  }
}

// CHECK: attributes {ascend_hw.block_dim = 2 : i64}
// CHECK: ascend_hw.alloc [{{[0-9]+}}, {{[0-9]+}}) : !ascend_hw.buf<8x32xf32, ub>
// REMARK: options.mlir:11:5: remark: tiled tv.add as one loop nest over 20x40: ub tiles 8x32;

// MODULE: builtin.module attributes {pypto.target = "tiny"}
// MODULE: attributes {ascend_hw.block_dim = 1 : i64}
// MODULE-REMARK: remark: {{.*}} of 4096 in ub
