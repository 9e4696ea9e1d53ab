// The generic form of ascend_hw IR goes through upstream MLIR (which does not
// know the dialect) and back: op names, !ascend_hw.buf types, enum, mask and unit
// attributes, dense stride arrays and operand segment sizes survive. MLIR sorts
// properties by name, so the custom form lists them alphabetically afterwards.
// REQUIRES: mlir-opt
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect --mlir-print-op-generic | pypto-opt | filecheck %s
// RUN: pypto-opt %s --print-op-generic | %mlir-opt --allow-unregistered-dialect | filecheck %s --check-prefix=MLIR

// MLIR: module attributes {pypto.target = "ascend910b"}
// MLIR: "ascend_hw.alloc"() <{offset = 0 : i64}> : () -> !ascend_hw.buf<2x64x128xf16, ub>
// MLIR: "ascend_hw.set_flag"() <{dst = #ascend_hw<pipe mte2>, event = 0 : i64, src = #ascend_hw<pipe mte3>}> : () -> ()
// MLIR: "ascend_hw.dma_load"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{burst_bytes = 256 : i64, bursts = 64 : i64, dst_gap = 0 : i64, src_gap = 1792 : i64}>
// MLIR: "ascend_hw.vadd"(%{{.*}}, %{{.*}}, %{{.*}}) <{mask = #ascend_hw.mask<0xffffffffffffffff>, repeat = 64 : i64}>
// MLIR: "ascend_hw.nd2nz"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{cols = 128 : i64, operandSegmentSizes = array<i32: 1, 2, 1, 2>, rows = 128 : i64}>
// MLIR: "ascend_hw.load_l0"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{cols = 128 : i64, operandSegmentSizes = array<i32: 1, 2, 1, 2>, rows = 128 : i64, transpose}>
// MLIR: "ascend_hw.sync_all"() : () -> ()
// MLIR: "ascend_hw.vcast"(%{{.*}}, %{{.*}}) <{blk_stride = array<i64: 1, 1>, rep_stride = array<i64: 8, 4>, repeat = 2 : i64, round = #ascend_hw<round rint>}>

// CHECK-LABEL: builtin.module attributes {pypto.target = "ascend910b"}
builtin.module attributes {pypto.target = "ascend910b"} {
  // CHECK-LABEL: func.func @add_double_buffered
  func.func @add_double_buffered(%x: memref<4096x1024xf16>, %y: memref<4096x1024xf16>, %z: memref<4096x1024xf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c1024 = arith.constant 1024 : index
    // CHECK: %[[CORE:.*]] = ascend_hw.block_idx
    // CHECK-NEXT: %[[CORES:.*]] = ascend_hw.block_dim
    %core = ascend_hw.block_idx
    %cores = ascend_hw.block_dim
    %row = arith.muli %core, %c64 : index
    // CHECK: ascend_hw.alloc [0, 32768) : !ascend_hw.buf<2x64x128xf16, ub>
    %xs = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<2x64x128xf16, ub>
    %ys = ascend_hw.alloc [32768, 65536) : !ascend_hw.buf<2x64x128xf16, ub>
    // CHECK: ascend_hw.set_flag mte3 -> mte2, 0
    ascend_hw.set_flag mte3 -> mte2, 0
    ascend_hw.set_flag mte3 -> mte2, 1
    // CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
    scf.for %j = %c0 to %c1024 step %c128 {
      %step = arith.divui %j, %c128 : index
      %slot = arith.remui %step, %c2 : index
      // CHECK: %[[XB:.*]] = ascend_hw.subview %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : !ascend_hw.buf<2x64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
      %xb = ascend_hw.subview %xs[%slot, %c0, %c0] : !ascend_hw.buf<2x64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
      %yb = ascend_hw.subview %ys[%slot, %c0, %c0] : !ascend_hw.buf<2x64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
      // CHECK: ascend_hw.wait_flag mte3 -> mte2, 0
      ascend_hw.wait_flag mte3 -> mte2, 0
      // A 64x128 window of a 1024-wide row-major tensor: 64 bursts of 256 B, 1792 B apart.
      // CHECK: ascend_hw.dma_load %{{.*}}[%{{.*}}, %[[J]]] -> %[[XB]] {burst_bytes = 256 : i64, bursts = 64 : i64, src_gap = 1792 : i64} : memref<4096x1024xf16> -> !ascend_hw.buf<64x128xf16, ub>
      ascend_hw.dma_load %x[%row, %j] -> %xb {bursts = 64, burst_bytes = 256, src_gap = 1792} : memref<4096x1024xf16> -> !ascend_hw.buf<64x128xf16, ub>
      ascend_hw.dma_load %y[%row, %j] -> %yb {bursts = 64, burst_bytes = 256, src_gap = 1792} : memref<4096x1024xf16> -> !ascend_hw.buf<64x128xf16, ub>
      ascend_hw.set_flag mte2 -> v, 0
      ascend_hw.wait_flag mte2 -> v, 0
      // CHECK: ascend_hw.vadd %[[XB]], %{{.*}} -> %[[XB]] {mask = #ascend_hw.mask<0xffffffffffffffff>, repeat = 64 : i64} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
      ascend_hw.vadd %xb, %yb -> %xb {repeat = 64, mask = #ascend_hw.mask<0xffffffffffffffff>} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
      // CHECK: ascend_hw.vadd %[[XB]], %{{.*}} -> %[[XB]] {mask = #ascend_hw.mask<0xffffffffffffffff0000000000000000>, repeat = 64 : i64}
      ascend_hw.vadd %xb, %yb -> %xb {repeat = 64, mask = #ascend_hw.mask<0xffffffffffffffff0000000000000000>} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
      // CHECK: ascend_hw.pipe_barrier v
      ascend_hw.pipe_barrier v
      ascend_hw.set_flag v -> mte3, 0
      ascend_hw.wait_flag v -> mte3, 0
      // CHECK: ascend_hw.dma_store %[[XB]] -> %{{.*}}[%{{.*}}, %[[J]]] {burst_bytes = 256 : i64, bursts = 64 : i64, dst_gap = 1792 : i64} : !ascend_hw.buf<64x128xf16, ub> -> memref<4096x1024xf16>
      ascend_hw.dma_store %xb -> %z[%row, %j] {bursts = 64, burst_bytes = 256, dst_gap = 1792} : !ascend_hw.buf<64x128xf16, ub> -> memref<4096x1024xf16>
      ascend_hw.set_flag mte3 -> mte2, 0
    }
    ascend_hw.wait_flag mte3 -> mte2, 0
    ascend_hw.wait_flag mte3 -> mte2, 1
    func.return
  }

  // CHECK-LABEL: func.func @matmul_bt
  func.func @matmul_bt(%a: memref<128x128xf16>, %b: memref<128x128xf16>, %c: memref<128x128xf32>, %s: f32) {
    %c0 = arith.constant 0 : index
    %a1 = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<128x128xf16, l1, nz>
    %b1 = ascend_hw.alloc [32768, 65536) : !ascend_hw.buf<128x128xf16, l1, nz>
    %a0 = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<128x128xf16, l0a, nz>
    %b0 = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<128x128xf16, l0b, nz>
    %acc = ascend_hw.alloc [0, 65536) : !ascend_hw.buf<128x128xf32, l0c, nz>
    %u = ascend_hw.alloc [0, 65536) : !ascend_hw.buf<128x128xf32, ub>
    %h = ascend_hw.alloc [65536, 98304) : !ascend_hw.buf<128x128xf16, ub>
    %l1h = ascend_hw.alloc [65536, 98304) : !ascend_hw.buf<128x128xf16, l1>
    %mask = ascend_hw.alloc [98304, 100352) : !ascend_hw.buf<2048xi8, ub>
    %offs = ascend_hw.alloc [100352, 100864) : !ascend_hw.buf<128xi32, ub>
    %row = ascend_hw.alloc [100864, 101120) : !ascend_hw.buf<128xf16, ub>
    %bc = ascend_hw.alloc [101120, 105216) : !ascend_hw.buf<128x16xf16, ub>
    // CHECK: ascend_hw.nd2nz %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}}[%{{.*}}, %{{.*}}] {cols = 128 : i64, rows = 128 : i64} : memref<128x128xf16> -> !ascend_hw.buf<128x128xf16, l1, nz>
    ascend_hw.nd2nz %a[%c0, %c0] -> %a1[%c0, %c0] {rows = 128, cols = 128} : memref<128x128xf16> -> !ascend_hw.buf<128x128xf16, l1, nz>
    ascend_hw.nd2nz %b[%c0, %c0] -> %b1[%c0, %c0] {rows = 128, cols = 128} : memref<128x128xf16> -> !ascend_hw.buf<128x128xf16, l1, nz>
    ascend_hw.set_flag mte2 -> mte1, 0
    ascend_hw.wait_flag mte2 -> mte1, 0
    // CHECK: ascend_hw.dma_copy %{{.*}} -> %{{.*}} {burst_bytes = 32768 : i64, bursts = 1 : i64} : !ascend_hw.buf<128x128xf16, l1, nz> -> !ascend_hw.buf<128x128xf16, l0a, nz>
    ascend_hw.dma_copy %a1 -> %a0 {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<128x128xf16, l1, nz> -> !ascend_hw.buf<128x128xf16, l0a, nz>
    // CHECK: ascend_hw.load_l0 %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}}[%{{.*}}, %{{.*}}] {cols = 128 : i64, rows = 128 : i64, transpose} : !ascend_hw.buf<128x128xf16, l1, nz> -> !ascend_hw.buf<128x128xf16, l0b, nz>
    ascend_hw.load_l0 %b1[%c0, %c0] -> %b0[%c0, %c0] {rows = 128, cols = 128, transpose} : !ascend_hw.buf<128x128xf16, l1, nz> -> !ascend_hw.buf<128x128xf16, l0b, nz>
    ascend_hw.set_flag mte1 -> m, 0
    ascend_hw.wait_flag mte1 -> m, 0
    // CHECK: ascend_hw.mmad %{{.*}}, %{{.*}} -> %{{.*}} {k = 128 : i64, m = 128 : i64, n = 128 : i64} : !ascend_hw.buf<128x128xf16, l0a, nz>, !ascend_hw.buf<128x128xf16, l0b, nz> -> !ascend_hw.buf<128x128xf32, l0c, nz>
    ascend_hw.mmad %a0, %b0 -> %acc {m = 128, n = 128, k = 128} : !ascend_hw.buf<128x128xf16, l0a, nz>, !ascend_hw.buf<128x128xf16, l0b, nz> -> !ascend_hw.buf<128x128xf32, l0c, nz>
    // CHECK: ascend_hw.mmad %{{.*}}, %{{.*}} -> %{{.*}} {accumulate, k = 64 : i64, m = 128 : i64, n = 128 : i64}
    ascend_hw.mmad %a0, %b0 -> %acc {m = 128, n = 128, k = 64, accumulate} : !ascend_hw.buf<128x128xf16, l0a, nz>, !ascend_hw.buf<128x128xf16, l0b, nz> -> !ascend_hw.buf<128x128xf32, l0c, nz>
    ascend_hw.set_flag m -> fix, 0
    ascend_hw.wait_flag m -> fix, 0
    // CHECK: ascend_hw.fixpipe %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}}[%{{.*}}, %{{.*}}] {cols = 128 : i64, rows = 128 : i64} : !ascend_hw.buf<128x128xf32, l0c, nz> -> memref<128x128xf32>
    ascend_hw.fixpipe %acc[%c0, %c0] -> %c[%c0, %c0] {rows = 128, cols = 128} : !ascend_hw.buf<128x128xf32, l0c, nz> -> memref<128x128xf32>
    // CHECK: ascend_hw.sync_all
    ascend_hw.sync_all
    ascend_hw.fixpipe %acc[%c0, %c0] -> %u[%c0, %c0] {rows = 128, cols = 128} : !ascend_hw.buf<128x128xf32, l0c, nz> -> !ascend_hw.buf<128x128xf32, ub>
    ascend_hw.set_flag fix -> v, 0
    ascend_hw.wait_flag fix -> v, 0
    // CHECK: ascend_hw.vmuls %{{.*}}, %{{.*}} -> %{{.*}} {repeat = 255 : i64} : !ascend_hw.buf<128x128xf32, ub>, f32 -> !ascend_hw.buf<128x128xf32, ub>
    ascend_hw.vmuls %u, %s -> %u {repeat = 255} : !ascend_hw.buf<128x128xf32, ub>, f32 -> !ascend_hw.buf<128x128xf32, ub>
    ascend_hw.vadds %u, %s -> %u : !ascend_hw.buf<128x128xf32, ub>, f32 -> !ascend_hw.buf<128x128xf32, ub>
    ascend_hw.vmaxs %u, %s -> %u : !ascend_hw.buf<128x128xf32, ub>, f32 -> !ascend_hw.buf<128x128xf32, ub>
    ascend_hw.vmins %u, %s -> %u : !ascend_hw.buf<128x128xf32, ub>, f32 -> !ascend_hw.buf<128x128xf32, ub>
    // CHECK: ascend_hw.vcast rint %{{.*}} -> %{{.*}} {blk_stride = array<i64: 1, 1>, rep_stride = array<i64: 8, 4>, repeat = 2 : i64} : !ascend_hw.buf<128x128xf32, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vcast rint %u -> %h {repeat = 2, blk_stride = array<i64: 1, 1>, rep_stride = array<i64: 8, 4>} : !ascend_hw.buf<128x128xf32, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vsub %h, %h -> %h : !ascend_hw.buf<128x128xf16, ub>, !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vmul %h, %h -> %h : !ascend_hw.buf<128x128xf16, ub>, !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vdiv %h, %h -> %h : !ascend_hw.buf<128x128xf16, ub>, !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vmax %h, %h -> %h : !ascend_hw.buf<128x128xf16, ub>, !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vmin %h, %h -> %h : !ascend_hw.buf<128x128xf16, ub>, !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vexp %h -> %h : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vln %h -> %h : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vabs %h -> %h : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vrelu %h -> %h : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vsqrt %h -> %h : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vrsqrt %h -> %h : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vreciprocal %h -> %h : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vcopy %h -> %h : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    // CHECK: ascend_hw.vreduce_max %{{.*}} -> %{{.*}} {repeat = 128 : i64} : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128xf16, ub>
    ascend_hw.vreduce_max %h -> %row {repeat = 128, dst_stride = 1} : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128xf16, ub>
    ascend_hw.vreduce_min %h -> %row {repeat = 128} : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128xf16, ub>
    ascend_hw.vreduce_sum %h -> %row {repeat = 128} : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128xf16, ub>
    // CHECK: ascend_hw.vbrcb %{{.*}} -> %{{.*}} {repeat = 16 : i64} : !ascend_hw.buf<128xf16, ub> -> !ascend_hw.buf<128x16xf16, ub>
    ascend_hw.vbrcb %row -> %bc {repeat = 16} : !ascend_hw.buf<128xf16, ub> -> !ascend_hw.buf<128x16xf16, ub>
    // CHECK: ascend_hw.vcmp ge %{{.*}}, %{{.*}} -> %{{.*}} {repeat = 128 : i64}
    ascend_hw.vcmp ge %h, %h -> %mask {repeat = 128} : !ascend_hw.buf<128x128xf16, ub>, !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<2048xi8, ub>
    ascend_hw.vselect %mask, %h, %h -> %h {repeat = 128} : !ascend_hw.buf<2048xi8, ub>, !ascend_hw.buf<128x128xf16, ub>, !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, ub>
    %z16 = arith.constant 0.0 : f16
    ascend_hw.vcmps eq %h, %z16 -> %mask : !ascend_hw.buf<128x128xf16, ub>, f16 -> !ascend_hw.buf<2048xi8, ub>
    ascend_hw.vdup %z16 -> %h : f16 -> !ascend_hw.buf<128x128xf16, ub>
    ascend_hw.vgather %h, %offs -> %h : !ascend_hw.buf<128x128xf16, ub>, !ascend_hw.buf<128xi32, ub> -> !ascend_hw.buf<128x128xf16, ub>
    // CHECK: ascend_hw.dma_copy %{{.*}} -> %{{.*}} {burst_bytes = 32768 : i64, bursts = 1 : i64} : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, l1>
    ascend_hw.dma_copy %h -> %l1h {bursts = 1, burst_bytes = 32768} : !ascend_hw.buf<128x128xf16, ub> -> !ascend_hw.buf<128x128xf16, l1>
    // CHECK: ascend_hw.pipe_barrier all
    ascend_hw.pipe_barrier all
    func.return
  }
}
