// A matmul C[20x16] = A[20x100] @ B[100x16] in 32x16 blocks of C and 32-deep
// K slices, accumulated in L0C: the accumulator carried by the K loop keeps one
// L0C buffer (mmad accumulates in place); after peeling, the K loop covers the
// full slices and the last 4-deep slice is straight-line code. Every A slice
// has 20 of 32 rows, so the rows that load_l0 reads (whole 16-row fractals) but
// nd2nz does not write are zeroed first (vdup in UB, dma_copy to L1); the last
// slices are zeroed from their valid columns on. mmad gets the exact m/n/k,
// and fixpipe converts the f32 accumulator to f16 on its way to GM.
// RUN: pypto-opt %s -p 'tile-peel-tails,tile-to-hw{target=ascend910b}' | filecheck %s


func.func @f(%a: memref<20x100xf16>, %b: memref<100x16xf16>, %c: memref<20x16xf16>) {
  %c0 = arith.constant 0 : index
  %m = arith.constant 20 : index
  %n = arith.constant 16 : index
  %k = arith.constant 100 : index
  %tm = arith.constant 32 : index
  %tn = arith.constant 16 : index
  %tk = arith.constant 32 : index
  scf.for %i = %c0 to %m step %tm {
    %vi_left = arith.subi %m, %i : index
    %vi_lt = arith.cmpi slt, %vi_left, %tm : index
    %vi = arith.select %vi_lt, %vi_left, %tm : index

    scf.for %j = %c0 to %n step %tn {
      %vj_left = arith.subi %n, %j : index
      %vj_lt = arith.cmpi slt, %vj_left, %tn : index
      %vj = arith.select %vj_lt, %vj_left, %tn : index

      %vk0_left = arith.subi %k, %c0 : index
      %vk0_lt = arith.cmpi slt, %vk0_left, %tk : index
      %vk0 = arith.select %vk0_lt, %vk0_left, %tk : index
      %a1 = tile.load %a[%i, %c0] valid [%vi, %vk0] : memref<20x100xf16> -> !tile.tile<32x32xf16, l1, valid = [?, ?], layout = nz, pad = zero>
      %b1 = tile.load %b[%c0, %j] valid [%vk0, %vj] : memref<100x16xf16> -> !tile.tile<32x16xf16, l1, valid = [?, ?], layout = nz, pad = zero>
      %a0 = tile.move %a1 : !tile.tile<32x32xf16, l1, valid = [?, ?], layout = nz, pad = zero> -> !tile.tile<32x32xf16, l0a, valid = [?, ?], pad = zero>
      %b0 = tile.move %b1 : !tile.tile<32x16xf16, l1, valid = [?, ?], layout = nz, pad = zero> -> !tile.tile<32x16xf16, l0b, valid = [?, ?], pad = zero>
      %first = tile.matmul %a0, %b0 : !tile.tile<32x32xf16, l0a, valid = [?, ?], pad = zero>, !tile.tile<32x16xf16, l0b, valid = [?, ?], pad = zero> -> !tile.tile<32x16xf32, l0c, valid = [?, ?]>
      %sum = scf.for %p = %tk to %k step %tk iter_args(%acc = %first) -> (!tile.tile<32x16xf32, l0c, valid = [?, ?]>) {
        %vk_left = arith.subi %k, %p : index
        %vk_lt = arith.cmpi slt, %vk_left, %tk : index
        %vk = arith.select %vk_lt, %vk_left, %tk : index

        %a1k = tile.load %a[%i, %p] valid [%vi, %vk] : memref<20x100xf16> -> !tile.tile<32x32xf16, l1, valid = [?, ?], layout = nz, pad = zero>
        %b1k = tile.load %b[%p, %j] valid [%vk, %vj] : memref<100x16xf16> -> !tile.tile<32x16xf16, l1, valid = [?, ?], layout = nz, pad = zero>
        %a0k = tile.move %a1k : !tile.tile<32x32xf16, l1, valid = [?, ?], layout = nz, pad = zero> -> !tile.tile<32x32xf16, l0a, valid = [?, ?], pad = zero>
        %b0k = tile.move %b1k : !tile.tile<32x16xf16, l1, valid = [?, ?], layout = nz, pad = zero> -> !tile.tile<32x16xf16, l0b, valid = [?, ?], pad = zero>
        %next = tile.matmul %a0k, %b0k, %acc : !tile.tile<32x32xf16, l0a, valid = [?, ?], pad = zero>, !tile.tile<32x16xf16, l0b, valid = [?, ?], pad = zero> -> !tile.tile<32x16xf32, l0c, valid = [?, ?]>
        scf.yield %next : !tile.tile<32x16xf32, l0c, valid = [?, ?]>
      }
      tile.store %sum, %c[%i, %j] : !tile.tile<32x16xf32, l0c, valid = [?, ?]> -> memref<20x16xf16>
    }
  }
  func.return
}

// CHECK:      func.func @f(%a: memref<20x100xf16>, %b: memref<100x16xf16>, %c: memref<20x16xf16>) attributes {ascend_hw.block_dim = 1 : i64} {
// CHECK-NEXT:   %[[A1:.*]] = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<32x32xf16, l1, nz>
// CHECK-NEXT:   %[[B1:.*]] = ascend_hw.alloc [2048, 3072) : !ascend_hw.buf<32x16xf16, l1, nz>
// CHECK-NEXT:   %[[A0:.*]] = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<32x32xf16, l0a, nz>
// CHECK-NEXT:   %[[B0:.*]] = ascend_hw.alloc [0, 1024) : !ascend_hw.buf<32x16xf16, l0b, nz>
// CHECK-NEXT:   %[[ACC:.*]] = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<32x16xf32, l0c, nz>
// Zeros for rows 20..31 of both column blocks of an A slice: 2 x 12 rows x 32 B.
// CHECK-NEXT:   %[[Z:.*]] = ascend_hw.alloc [0, 768) : !ascend_hw.buf<384xf16, ub>
// CHECK:        ascend_hw.vdup %{{.*}} -> %[[Z]] {repeat = 3 : i64} : f16 -> !ascend_hw.buf<384xf16, ub>
// CHECK-NEXT:   %[[ROW20:.*]] = ascend_hw.subview %[[A1]][%{{.*}}, %{{.*}}] : !ascend_hw.buf<32x32xf16, l1, nz> -> !ascend_hw.buf<704xf16, l1>
// CHECK-NEXT:   ascend_hw.dma_copy %[[Z]] -> %[[ROW20]] {bursts = 2 : i64, burst_bytes = 384 : i64, dst_gap = 640 : i64}
// CHECK-NEXT:   ascend_hw.nd2nz %a[%{{.*}}, %{{.*}}] -> %[[A1]][%{{.*}}, %{{.*}}] {rows = 20 : i64, cols = 32 : i64}
// CHECK-NEXT:   ascend_hw.nd2nz %b[%{{.*}}, %{{.*}}] -> %[[B1]][%{{.*}}, %{{.*}}] {rows = 32 : i64, cols = 16 : i64}
// CHECK-NEXT:   ascend_hw.load_l0 %[[A1]][%{{.*}}, %{{.*}}] -> %[[A0]][%{{.*}}, %{{.*}}] {rows = 32 : i64, cols = 32 : i64}
// CHECK-NEXT:   ascend_hw.load_l0 %[[B1]][%{{.*}}, %{{.*}}] -> %[[B0]][%{{.*}}, %{{.*}}] {rows = 32 : i64, cols = 16 : i64}
// CHECK-NEXT:   ascend_hw.mmad %[[A0]], %[[B0]] -> %[[ACC]] {m = 20 : i64, n = 16 : i64, k = 32 : i64}
// The K loop carries nothing any more: it accumulates into the same buffer.
// CHECK:        scf.for %[[P:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:          ascend_hw.nd2nz %a[%{{.*}}, %[[P]]] -> %[[A1]]
// CHECK:          ascend_hw.mmad %[[A0]], %[[B0]] -> %[[ACC]] {m = 20 : i64, n = 16 : i64, k = 32 : i64, accumulate}
// CHECK-NEXT:   }
// The last slice: A is 20x4 (zero the first column block, rows 0..31), B is 4x16
// (zero rows 4..15 of its column block); K = 4 is read as one 16-deep fractal.
// CHECK:        ascend_hw.dma_copy %{{.*}} -> %[[A1]] {bursts = 1 : i64, burst_bytes = 1024 : i64}
// CHECK-NEXT:   ascend_hw.nd2nz %a[%{{.*}}, %{{.*}}] -> %[[A1]][%{{.*}}, %{{.*}}] {rows = 20 : i64, cols = 4 : i64}
// CHECK:        ascend_hw.dma_copy %{{.*}} -> %{{.*}} {bursts = 1 : i64, burst_bytes = 384 : i64, dst_gap = 640 : i64}
// CHECK-NEXT:   ascend_hw.nd2nz %b[%{{.*}}, %{{.*}}] -> %[[B1]][%{{.*}}, %{{.*}}] {rows = 4 : i64, cols = 16 : i64}
// CHECK-NEXT:   ascend_hw.load_l0 %[[A1]][%{{.*}}, %{{.*}}] -> %[[A0]][%{{.*}}, %{{.*}}] {rows = 32 : i64, cols = 16 : i64}
// CHECK-NEXT:   ascend_hw.load_l0 %[[B1]][%{{.*}}, %{{.*}}] -> %[[B0]][%{{.*}}, %{{.*}}] {rows = 16 : i64, cols = 16 : i64}
// CHECK-NEXT:   ascend_hw.mmad %[[A0]], %[[B0]] -> %[[ACC]] {m = 20 : i64, n = 16 : i64, k = 4 : i64, accumulate}
// CHECK-NEXT:   ascend_hw.fixpipe %[[ACC]][%{{.*}}, %{{.*}}] -> %c[%{{.*}}, %{{.*}}] {rows = 20 : i64, cols = 16 : i64} : !ascend_hw.buf<32x16xf32, l0c, nz> -> memref<20x16xf16>
// CHECK-NEXT:   func.return
