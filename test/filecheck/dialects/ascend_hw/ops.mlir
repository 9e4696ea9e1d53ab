// Every ascend_hw op, type and attribute prints in its custom form, survives a
// round trip through the generic form, and has the generic form below.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s
// RUN: pypto-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// The layout is printed only when it is nz.
// CHECK-LABEL: func.func @buffers
// CHECK-SAME: (%{{.*}}: !ascend_hw.buf<64x1024xf16, ub>, %{{.*}}: !ascend_hw.buf<256x128xf16, l1, nz>, %{{.*}}: !ascend_hw.buf<16xi8, ub>)
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : index
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[A:.*]] = ascend_hw.alloc [0, 131072) : !ascend_hw.buf<64x1024xf16, ub>
// CHECK-NEXT: %[[B:.*]] = ascend_hw.alloc [131072, 163840) : !ascend_hw.buf<64x128xf32, l1, nz>
// CHECK-NEXT: %{{.*}} = ascend_hw.subview %[[A]][%[[C1]], %[[C0]]] : !ascend_hw.buf<64x1024xf16, ub> -> !ascend_hw.buf<1x1024xf16, ub>
// CHECK-NEXT: %{{.*}} = ascend_hw.subview %[[A]][%[[C1]], %[[C0]]] : !ascend_hw.buf<64x1024xf16, ub> -> !ascend_hw.buf<32x1024xf16, ub>
// CHECK-NEXT: %{{.*}} = ascend_hw.subview %[[B]][%[[C0]], %[[C0]]] : !ascend_hw.buf<64x128xf32, l1, nz> -> !ascend_hw.buf<64x8xf32, l1, nz>
// GENERIC-LABEL: "func.func"() <{sym_name = "buffers"
// GENERIC: "ascend_hw.alloc"() <{offset = 0 : i64}> : () -> !ascend_hw.buf<64x1024xf16, ub>
// GENERIC: "ascend_hw.alloc"() <{offset = 131072 : i64}> : () -> !ascend_hw.buf<64x128xf32, l1, nz>
// GENERIC: "ascend_hw.subview"(%{{.*}}, %{{.*}}, %{{.*}}) : (!ascend_hw.buf<64x1024xf16, ub>, index, index) -> !ascend_hw.buf<1x1024xf16, ub>
func.func @buffers(%u: !ascend_hw.buf<64x1024xf16, ub>, %l: !ascend_hw.buf<256x128xf16, l1, nz>, %m: !ascend_hw.buf<16xi8, ub, nd>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = ascend_hw.alloc [0, 131072) : !ascend_hw.buf<64x1024xf16, ub>
  %b = ascend_hw.alloc [131072, 163840) : !ascend_hw.buf<64x128xf32, l1, nz>
  %row = ascend_hw.subview %a[%c1, %c0] : !ascend_hw.buf<64x1024xf16, ub> -> !ascend_hw.buf<1x1024xf16, ub>
  %half = ascend_hw.subview %a[%c1, %c0] : !ascend_hw.buf<64x1024xf16, ub> -> !ascend_hw.buf<32x1024xf16, ub>
  %col = ascend_hw.subview %b[%c0, %c0] : !ascend_hw.buf<64x128xf32, l1, nz> -> !ascend_hw.buf<64x8xf32, l1, nz>
  func.return
}

// Gaps default to 0 and are printed only when set; GM windows may be strided views.
// CHECK-LABEL: func.func @dma
// CHECK: ascend_hw.dma_load %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}} {bursts = 64 : i64, burst_bytes = 2048 : i64} : memref<4096x1024xf16> -> !ascend_hw.buf<64x1024xf16, ub>
// CHECK-NEXT: ascend_hw.dma_load %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}} {bursts = 64 : i64, burst_bytes = 200 : i64, src_gap = 1848 : i64, dst_gap = 32 : i64} : memref<4096x1024xf16> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.dma_load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] -> %{{.*}} {bursts = 16 : i64, burst_bytes = 64 : i64, src_gap = 64 : i64} : memref<4x16x32xf16, strided<[1024, 64, 1], offset: ?>> -> !ascend_hw.buf<16x32xf16, l1>
// CHECK-NEXT: ascend_hw.dma_store %{{.*}} -> %{{.*}}[%{{.*}}, %{{.*}}] {bursts = 64 : i64, burst_bytes = 200 : i64, src_gap = 32 : i64, dst_gap = 1848 : i64} : !ascend_hw.buf<64x128xf16, ub> -> memref<4096x1024xf16>
// CHECK-NEXT: ascend_hw.dma_copy %{{.*}} -> %{{.*}} {bursts = 4 : i64, burst_bytes = 1024 : i64, src_gap = 3072 : i64} : !ascend_hw.buf<128x64xf16, l1, nz> -> !ascend_hw.buf<32x64xf16, l0b, nz>
// CHECK-NEXT: ascend_hw.dma_copy %{{.*}} -> %{{.*}} {bursts = 1 : i64, burst_bytes = 4096 : i64} : !ascend_hw.buf<16x128xf16, l1> -> !ascend_hw.buf<16x128xf16, ub>
// CHECK-NEXT: ascend_hw.nd2nz %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}}[%{{.*}}, %{{.*}}] {rows = 100 : i64, cols = 64 : i64} : memref<4096x1024xf16> -> !ascend_hw.buf<128x64xf16, l1, nz>
// CHECK-NEXT: ascend_hw.load_l0 %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}}[%{{.*}}, %{{.*}}] {rows = 64 : i64, cols = 64 : i64} : !ascend_hw.buf<128x64xf16, l1, nz> -> !ascend_hw.buf<64x64xf16, l0a, nz>
// CHECK-NEXT: ascend_hw.load_l0 %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}}[%{{.*}}, %{{.*}}] {rows = 64 : i64, cols = 128 : i64, transpose} : !ascend_hw.buf<128x64xf16, l1, nz> -> !ascend_hw.buf<64x128xf16, l0b, nz>
// CHECK-NEXT: ascend_hw.fixpipe %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}}[%{{.*}}, %{{.*}}] {rows = 100 : i64, cols = 64 : i64} : !ascend_hw.buf<128x64xf32, l0c, nz> -> memref<4096x1024xf16>
// CHECK-NEXT: ascend_hw.fixpipe %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}}[%{{.*}}, %{{.*}}] {rows = 128 : i64, cols = 64 : i64} : !ascend_hw.buf<128x64xf32, l0c, nz> -> !ascend_hw.buf<128x64xf32, ub>
// CHECK-NEXT: ascend_hw.fixpipe %{{.*}}[%{{.*}}, %{{.*}}] -> %{{.*}}[%{{.*}}, %{{.*}}] {rows = 128 : i64, cols = 64 : i64} : !ascend_hw.buf<128x64xf32, l0c, nz> -> !ascend_hw.buf<128x64xf16, l1, nz>
// GENERIC-LABEL: "func.func"() <{sym_name = "dma"
// GENERIC: "ascend_hw.dma_load"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{bursts = 64 : i64, burst_bytes = 2048 : i64, src_gap = 0 : i64, dst_gap = 0 : i64}> : (memref<4096x1024xf16>, index, index, !ascend_hw.buf<64x1024xf16, ub>) -> ()
// GENERIC: "ascend_hw.dma_store"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{bursts = 64 : i64, burst_bytes = 200 : i64, src_gap = 32 : i64, dst_gap = 1848 : i64}> : (!ascend_hw.buf<64x128xf16, ub>, memref<4096x1024xf16>, index, index) -> ()
// GENERIC: "ascend_hw.dma_copy"(%{{.*}}, %{{.*}}) <{bursts = 4 : i64, burst_bytes = 1024 : i64, src_gap = 3072 : i64, dst_gap = 0 : i64}> : (!ascend_hw.buf<128x64xf16, l1, nz>, !ascend_hw.buf<32x64xf16, l0b, nz>) -> ()
// GENERIC: "ascend_hw.nd2nz"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{rows = 100 : i64, cols = 64 : i64, operandSegmentSizes = array<i32: 1, 2, 1, 2>}>
// GENERIC: "ascend_hw.load_l0"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{rows = 64 : i64, cols = 128 : i64, transpose, operandSegmentSizes = array<i32: 1, 2, 1, 2>}>
// GENERIC: "ascend_hw.fixpipe"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{rows = 100 : i64, cols = 64 : i64, operandSegmentSizes = array<i32: 1, 2, 1, 2>}>
func.func @dma(%x: memref<4096x1024xf16>, %v: memref<4x16x32xf16, strided<[1024, 64, 1], offset: ?>>, %i: index) {
  %c0 = arith.constant 0 : index
  %u = ascend_hw.alloc [0, 131072) : !ascend_hw.buf<64x1024xf16, ub>
  %t = ascend_hw.alloc [131072, 147456) : !ascend_hw.buf<64x128xf16, ub>
  %s = ascend_hw.alloc [0, 1024) : !ascend_hw.buf<16x32xf16, l1>
  %l1 = ascend_hw.alloc [1024, 17408) : !ascend_hw.buf<128x64xf16, l1, nz>
  %l1nd = ascend_hw.alloc [17408, 21504) : !ascend_hw.buf<16x128xf16, l1>
  %ub2 = ascend_hw.alloc [147456, 151552) : !ascend_hw.buf<16x128xf16, ub>
  %l0a = ascend_hw.alloc [0, 8192) : !ascend_hw.buf<64x64xf16, l0a, nz>
  %l0b = ascend_hw.alloc [0, 4096) : !ascend_hw.buf<32x64xf16, l0b, nz>
  %l0bt = ascend_hw.alloc [4096, 20480) : !ascend_hw.buf<64x128xf16, l0b, nz>
  %l0c = ascend_hw.alloc [0, 32768) : !ascend_hw.buf<128x64xf32, l0c, nz>
  %ub32 = ascend_hw.alloc [151552, 184320) : !ascend_hw.buf<128x64xf32, ub>
  %l1h = ascend_hw.alloc [21504, 37888) : !ascend_hw.buf<128x64xf16, l1, nz>
  ascend_hw.dma_load %x[%i, %c0] -> %u {bursts = 64, burst_bytes = 2048} : memref<4096x1024xf16> -> !ascend_hw.buf<64x1024xf16, ub>
  // A 64x100 tail: 200-byte rows land on 256-byte UB rows (224 rounded up + 32 gap).
  ascend_hw.dma_load %x[%i, %c0] -> %t {bursts = 64, burst_bytes = 200, src_gap = 1848, dst_gap = 32} : memref<4096x1024xf16> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.dma_load %v[%c0, %c0, %c0] -> %s {bursts = 16, burst_bytes = 64, src_gap = 64} : memref<4x16x32xf16, strided<[1024, 64, 1], offset: ?>> -> !ascend_hw.buf<16x32xf16, l1>
  ascend_hw.dma_store %t -> %x[%i, %c0] {bursts = 64, burst_bytes = 200, src_gap = 32, dst_gap = 1848} : !ascend_hw.buf<64x128xf16, ub> -> memref<4096x1024xf16>
  // Rows 32..63 of an nz matrix: one 1 KiB burst per 16-column block.
  ascend_hw.dma_copy %l1 -> %l0b {bursts = 4, burst_bytes = 1024, src_gap = 3072} : !ascend_hw.buf<128x64xf16, l1, nz> -> !ascend_hw.buf<32x64xf16, l0b, nz>
  ascend_hw.dma_copy %l1nd -> %ub2 {bursts = 1, burst_bytes = 4096} : !ascend_hw.buf<16x128xf16, l1> -> !ascend_hw.buf<16x128xf16, ub>
  ascend_hw.nd2nz %x[%i, %c0] -> %l1[%c0, %c0] {rows = 100, cols = 64} : memref<4096x1024xf16> -> !ascend_hw.buf<128x64xf16, l1, nz>
  ascend_hw.load_l0 %l1[%c0, %c0] -> %l0a[%c0, %c0] {rows = 64, cols = 64} : !ascend_hw.buf<128x64xf16, l1, nz> -> !ascend_hw.buf<64x64xf16, l0a, nz>
  ascend_hw.load_l0 %l1[%c0, %c0] -> %l0bt[%c0, %c0] {rows = 64, cols = 128, transpose} : !ascend_hw.buf<128x64xf16, l1, nz> -> !ascend_hw.buf<64x128xf16, l0b, nz>
  ascend_hw.fixpipe %l0c[%c0, %c0] -> %x[%i, %c0] {rows = 100, cols = 64} : !ascend_hw.buf<128x64xf32, l0c, nz> -> memref<4096x1024xf16>
  ascend_hw.fixpipe %l0c[%c0, %c0] -> %ub32[%c0, %c0] {rows = 128, cols = 64} : !ascend_hw.buf<128x64xf32, l0c, nz> -> !ascend_hw.buf<128x64xf32, ub>
  ascend_hw.fixpipe %l0c[%c0, %c0] -> %l1h[%c0, %c0] {rows = 128, cols = 64} : !ascend_hw.buf<128x64xf32, l0c, nz> -> !ascend_hw.buf<128x64xf16, l1, nz>
  func.return
}

// CHECK-LABEL: func.func @cube
// CHECK: ascend_hw.mmad %{{.*}}, %{{.*}} -> %{{.*}} {m = 128 : i64, n = 128 : i64, k = 64 : i64} : !ascend_hw.buf<128x64xf16, l0a, nz>, !ascend_hw.buf<64x128xf16, l0b, nz> -> !ascend_hw.buf<128x128xf32, l0c, nz>
// CHECK-NEXT: ascend_hw.mmad %{{.*}}, %{{.*}} -> %{{.*}} {m = 100 : i64, n = 128 : i64, k = 40 : i64, accumulate} : !ascend_hw.buf<128x64xf16, l0a, nz>, !ascend_hw.buf<64x128xf16, l0b, nz> -> !ascend_hw.buf<128x128xf32, l0c, nz>
// CHECK-NEXT: ascend_hw.mmad %{{.*}}, %{{.*}} -> %{{.*}} {m = 32 : i64, n = 32 : i64, k = 64 : i64} : !ascend_hw.buf<32x64xi8, l0a, nz>, !ascend_hw.buf<64x32xi8, l0b, nz> -> !ascend_hw.buf<32x32xi32, l0c, nz>
// GENERIC-LABEL: "func.func"() <{sym_name = "cube"
// GENERIC: "ascend_hw.mmad"(%{{.*}}, %{{.*}}, %{{.*}}) <{m = 128 : i64, n = 128 : i64, k = 64 : i64}>
// GENERIC: "ascend_hw.mmad"(%{{.*}}, %{{.*}}, %{{.*}}) <{m = 100 : i64, n = 128 : i64, k = 40 : i64, accumulate}>
func.func @cube(%a: !ascend_hw.buf<128x64xf16, l0a, nz>, %b: !ascend_hw.buf<64x128xf16, l0b, nz>, %c: !ascend_hw.buf<128x128xf32, l0c, nz>,
                %qa: !ascend_hw.buf<32x64xi8, l0a, nz>, %qb: !ascend_hw.buf<64x32xi8, l0b, nz>, %qc: !ascend_hw.buf<32x32xi32, l0c, nz>) {
  ascend_hw.mmad %a, %b -> %c {m = 128, n = 128, k = 64} : !ascend_hw.buf<128x64xf16, l0a, nz>, !ascend_hw.buf<64x128xf16, l0b, nz> -> !ascend_hw.buf<128x128xf32, l0c, nz>
  ascend_hw.mmad %a, %b -> %c {m = 100, n = 128, k = 40, accumulate} : !ascend_hw.buf<128x64xf16, l0a, nz>, !ascend_hw.buf<64x128xf16, l0b, nz> -> !ascend_hw.buf<128x128xf32, l0c, nz>
  ascend_hw.mmad %qa, %qb -> %qc {m = 32, n = 32, k = 64} : !ascend_hw.buf<32x64xi8, l0a, nz>, !ascend_hw.buf<64x32xi8, l0b, nz> -> !ascend_hw.buf<32x32xi32, l0c, nz>
  func.return
}

// repeat = 1 is the default and is not printed; masks are a lane count or a bit pattern.
// CHECK-LABEL: func.func @vector
// CHECK: ascend_hw.vadd %[[X:.*]], %[[Y:.*]] -> %[[Z:.*]] {repeat = 64 : i64} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vsub %[[X]], %[[Y]] -> %[[Z]] {repeat = 64 : i64, mask = 100 : i64} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vmul %[[X]], %[[Y]] -> %[[Z]] {mask = #ascend_hw.mask<0xffff0000ffff>} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vdiv %[[X]], %[[Y]] -> %[[Z]] {repeat = 8 : i64, blk_stride = array<i64: 1, 0, 1>, rep_stride = array<i64: 8, 1, 8>} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vmax %[[X]], %[[Y]] -> %[[Z]] : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vmin %[[X]], %[[Y]] -> %[[Z]] : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vadds %[[X]], %[[S:.*]] -> %[[Z]] {repeat = 64 : i64} : !ascend_hw.buf<64x128xf16, ub>, f16 -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vmuls %[[X]], %[[S]] -> %[[Z]] : !ascend_hw.buf<64x128xf16, ub>, f16 -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vmaxs %[[X]], %[[S]] -> %[[Z]] : !ascend_hw.buf<64x128xf16, ub>, f16 -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vmins %[[X]], %[[S]] -> %[[Z]] : !ascend_hw.buf<64x128xf16, ub>, f16 -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vexp %[[X]] -> %[[Z]] {repeat = 64 : i64} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vln %[[X]] -> %[[Z]] : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vabs %[[X]] -> %[[Z]] : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vrelu %[[X]] -> %[[Z]] : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vsqrt %[[X]] -> %[[Z]] : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vrsqrt %[[X]] -> %[[Z]] : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vreciprocal %[[X]] -> %[[Z]] : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vcopy %[[X]] -> %[[Z]] {repeat = 2 : i64, blk_stride = array<i64: 2, 1>, rep_stride = array<i64: 16, 8>} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vcast none %[[X]] -> %[[F:.*]] {repeat = 128 : i64} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf32, ub>
// CHECK-NEXT: ascend_hw.vcast rint %[[F]] -> %[[X]] {repeat = 128 : i64} : !ascend_hw.buf<64x128xf32, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vcast trunc %[[F]] -> %[[I:.*]] {mask = 10 : i64} : !ascend_hw.buf<64x128xf32, ub> -> !ascend_hw.buf<64x128xi32, ub>
// CHECK-NEXT: ascend_hw.vreduce_sum %[[X]] -> %[[R:.*]] {repeat = 64 : i64} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
// CHECK-NEXT: ascend_hw.vreduce_max %[[X]] -> %[[R]] {repeat = 32 : i64, dst_stride = 2 : i64} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
// CHECK-NEXT: ascend_hw.vreduce_min %[[X]] -> %[[R]] {mask = 64 : i64} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
// CHECK-NEXT: ascend_hw.vblock_reduce_max %[[F]] -> %[[F]] {repeat = 16 : i64} : !ascend_hw.buf<64x128xf32, ub> -> !ascend_hw.buf<64x128xf32, ub>
// CHECK-NEXT: ascend_hw.vblock_reduce_min %[[X]] -> %[[R]] {repeat = 8 : i64} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
// CHECK-NEXT: ascend_hw.vdup %[[S]] -> %[[Z]] {repeat = 64 : i64} : f16 -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vbrcb %[[R]] -> %[[BC:.*]] {repeat = 8 : i64} : !ascend_hw.buf<64xf16, ub> -> !ascend_hw.buf<64x16xf16, ub>
// CHECK-NEXT: ascend_hw.vcmp lt %[[X]], %[[Y]] -> %[[M:.*]] {repeat = 64 : i64} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<1024xi8, ub>
// CHECK-NEXT: ascend_hw.vcmp ne %[[X]], %[[Y]] -> %[[M]] : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<1024xi8, ub>
// CHECK-NEXT: ascend_hw.vcmps ge %[[X]], %[[S]] -> %[[M]] {repeat = 64 : i64} : !ascend_hw.buf<64x128xf16, ub>, f16 -> !ascend_hw.buf<1024xi8, ub>
// CHECK-NEXT: ascend_hw.vselect %[[M]], %[[X]], %[[Y]] -> %[[Z]] {repeat = 64 : i64} : !ascend_hw.buf<1024xi8, ub>, !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
// CHECK-NEXT: ascend_hw.vgather %[[X]], %[[O:.*]] -> %[[Z]] {repeat = 2 : i64} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<256xi32, ub> -> !ascend_hw.buf<64x128xf16, ub>
// GENERIC-LABEL: "func.func"() <{sym_name = "vector"
// GENERIC: "ascend_hw.vadd"(%{{.*}}, %{{.*}}, %{{.*}}) <{repeat = 64 : i64}> : (!ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub>) -> ()
// GENERIC: "ascend_hw.vmul"(%{{.*}}, %{{.*}}, %{{.*}}) <{mask = #ascend_hw.mask<0xffff0000ffff>, repeat = 1 : i64}>
// GENERIC: "ascend_hw.vdiv"(%{{.*}}, %{{.*}}, %{{.*}}) <{repeat = 8 : i64, blk_stride = array<i64: 1, 0, 1>, rep_stride = array<i64: 8, 1, 8>}>
// GENERIC: "ascend_hw.vadds"(%{{.*}}, %{{.*}}, %{{.*}}) <{repeat = 64 : i64}> : (!ascend_hw.buf<64x128xf16, ub>, f16, !ascend_hw.buf<64x128xf16, ub>) -> ()
// GENERIC: "ascend_hw.vcast"(%{{.*}}, %{{.*}}) <{round = #ascend_hw<round none>, repeat = 128 : i64}>
// GENERIC: "ascend_hw.vreduce_max"(%{{.*}}, %{{.*}}) <{repeat = 32 : i64, dst_stride = 2 : i64}>
// GENERIC: "ascend_hw.vblock_reduce_max"(%{{.*}}, %{{.*}}) <{repeat = 16 : i64, dst_stride = 1 : i64}>
// GENERIC: "ascend_hw.vdup"(%{{.*}}, %{{.*}}) <{repeat = 64 : i64}> : (f16, !ascend_hw.buf<64x128xf16, ub>) -> ()
// GENERIC: "ascend_hw.vcmp"(%{{.*}}, %{{.*}}, %{{.*}}) <{cmp = #ascend_hw<cmp lt>, repeat = 64 : i64}>
// GENERIC: "ascend_hw.vselect"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{repeat = 64 : i64}>
// GENERIC: "ascend_hw.vgather"(%{{.*}}, %{{.*}}, %{{.*}}) <{repeat = 2 : i64}>
func.func @vector(%x: !ascend_hw.buf<64x128xf16, ub>, %y: !ascend_hw.buf<64x128xf16, ub>, %z: !ascend_hw.buf<64x128xf16, ub>,
                  %f: !ascend_hw.buf<64x128xf32, ub>, %n: !ascend_hw.buf<64x128xi32, ub>, %r: !ascend_hw.buf<64xf16, ub>,
                  %bc: !ascend_hw.buf<64x16xf16, ub>, %m: !ascend_hw.buf<1024xi8, ub>, %o: !ascend_hw.buf<256xi32, ub>, %s: f16) {
  ascend_hw.vadd %x, %y -> %z {repeat = 64} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vsub %x, %y -> %z {repeat = 64, mask = 100} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vmul %x, %y -> %z {mask = #ascend_hw.mask<0xFFFF0000FFFF>} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  // Row-wise broadcast of one 32-byte block of %y per repeat (block stride 0).
  ascend_hw.vdiv %x, %y -> %z {repeat = 8, blk_stride = array<i64: 1, 0, 1>, rep_stride = array<i64: 8, 1, 8>} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vmax %x, %y -> %z {repeat = 1} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vmin %x, %y -> %z : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vadds %x, %s -> %z {repeat = 64} : !ascend_hw.buf<64x128xf16, ub>, f16 -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vmuls %x, %s -> %z : !ascend_hw.buf<64x128xf16, ub>, f16 -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vmaxs %x, %s -> %z : !ascend_hw.buf<64x128xf16, ub>, f16 -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vmins %x, %s -> %z : !ascend_hw.buf<64x128xf16, ub>, f16 -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vexp %x -> %z {repeat = 64} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vln %x -> %z : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vabs %x -> %z : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vrelu %x -> %z : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vsqrt %x -> %z : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vrsqrt %x -> %z : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vreciprocal %x -> %z : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  // Every other 32-byte block of two rows, packed.
  ascend_hw.vcopy %x -> %z {repeat = 2, blk_stride = array<i64: 2, 1>, rep_stride = array<i64: 16, 8>} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  // f16 <-> f32: 64 lanes per repeat, so 128 repeats cover the 8192 elements.
  ascend_hw.vcast none %x -> %f {repeat = 128} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf32, ub>
  ascend_hw.vcast rint %f -> %x {repeat = 128} : !ascend_hw.buf<64x128xf32, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vcast trunc %f -> %n {mask = 10} : !ascend_hw.buf<64x128xf32, ub> -> !ascend_hw.buf<64x128xi32, ub>
  ascend_hw.vreduce_sum %x -> %r {repeat = 64} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
  ascend_hw.vreduce_max %x -> %r {repeat = 32, dst_stride = 2} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
  ascend_hw.vreduce_min %x -> %r {mask = 64} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
  // Each 32-byte block of a repeat to one value, 8 per repeat, packed.
  ascend_hw.vblock_reduce_max %f -> %f {repeat = 16} : !ascend_hw.buf<64x128xf32, ub> -> !ascend_hw.buf<64x128xf32, ub>
  ascend_hw.vblock_reduce_min %x -> %r {repeat = 8} : !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64xf16, ub>
  ascend_hw.vdup %s -> %z {repeat = 64} : f16 -> !ascend_hw.buf<64x128xf16, ub>
  // Each of the 64 row values fills one 32-byte block.
  ascend_hw.vbrcb %r -> %bc {repeat = 8} : !ascend_hw.buf<64xf16, ub> -> !ascend_hw.buf<64x16xf16, ub>
  ascend_hw.vcmp lt %x, %y -> %m {repeat = 64} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<1024xi8, ub>
  ascend_hw.vcmp ne %x, %y -> %m : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<1024xi8, ub>
  ascend_hw.vcmps ge %x, %s -> %m {repeat = 64} : !ascend_hw.buf<64x128xf16, ub>, f16 -> !ascend_hw.buf<1024xi8, ub>
  ascend_hw.vselect %m, %x, %y -> %z {repeat = 64} : !ascend_hw.buf<1024xi8, ub>, !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<64x128xf16, ub> -> !ascend_hw.buf<64x128xf16, ub>
  ascend_hw.vgather %x, %o -> %z {repeat = 2} : !ascend_hw.buf<64x128xf16, ub>, !ascend_hw.buf<256xi32, ub> -> !ascend_hw.buf<64x128xf16, ub>
  func.return
}

// CHECK-LABEL: func.func @sync
// CHECK-NEXT: %{{.*}} = ascend_hw.block_idx
// CHECK-NEXT: %{{.*}} = ascend_hw.block_dim
// CHECK-NEXT: ascend_hw.set_flag mte2 -> v, 0
// CHECK-NEXT: ascend_hw.wait_flag mte2 -> v, 0
// CHECK-NEXT: ascend_hw.set_flag v -> mte3, 7
// CHECK-NEXT: ascend_hw.wait_flag fix -> s, 3
// CHECK-NEXT: ascend_hw.pipe_barrier v
// CHECK-NEXT: ascend_hw.pipe_barrier all
// CHECK-NEXT: ascend_hw.sync_all
// GENERIC-LABEL: "func.func"() <{sym_name = "sync"
// GENERIC: "ascend_hw.block_idx"() : () -> index
// GENERIC: "ascend_hw.block_dim"() : () -> index
// GENERIC: "ascend_hw.set_flag"() <{src = #ascend_hw<pipe mte2>, dst = #ascend_hw<pipe v>, event = 0 : i64}> : () -> ()
// GENERIC: "ascend_hw.wait_flag"() <{src = #ascend_hw<pipe mte2>, dst = #ascend_hw<pipe v>, event = 0 : i64}> : () -> ()
// GENERIC: "ascend_hw.pipe_barrier"() <{pipe = #ascend_hw<pipe v>}> : () -> ()
// GENERIC: "ascend_hw.sync_all"() : () -> ()
func.func @sync() -> (index, index) {
  %i = ascend_hw.block_idx
  %n = ascend_hw.block_dim
  ascend_hw.set_flag mte2 -> v, 0
  ascend_hw.wait_flag mte2 -> v, 0
  ascend_hw.set_flag v -> mte3, 7
  ascend_hw.wait_flag fix -> s, 3
  ascend_hw.pipe_barrier v
  ascend_hw.pipe_barrier all
  ascend_hw.sync_all
  func.return %i, %n : index, index
}

// A loop whose bounds are the same on every core may hold a sync_all.
// CHECK-LABEL: func.func @sync_in_loop
// CHECK: scf.for
// CHECK-NEXT: ascend_hw.sync_all
func.func @sync_in_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %k = %c0 to %n step %c1 {
    ascend_hw.sync_all
  }
  func.return
}
