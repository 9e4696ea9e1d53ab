// tile.select: per vector instruction of the region, a vcmp into a scratch i8 bit
// buffer (a bit a lane of the instruction's repeats, placed by the memory plan)
// and a vselect by it with the same repeats, mask and strides. @f: 20x40 f16 in
// 8x32 tiles, its tails peeled: full tiles in 2 contiguous repeats, the 8-column
// tail row by row (mask 8, repeat stride = the 64-byte row pitch); the result
// takes an operand's buffer. @g: an f32 compare against a [8, 1] column (vbrcb,
// block stride 0) selecting i32 values, a [1, 64] row read with repeat stride 0.
// RUN: pypto-opt %s -p 'tile-peel-tails,tile-to-hw{target=ascend910b max_cores=1},hw-coalesce-dma' | filecheck %s

func.func @f(%x: memref<20x40xf16>, %y: memref<20x40xf16>, %out: memref<20x40xf16>) {
  %c0 = arith.constant 0 : index
  %rows = arith.constant 20 : index
  %cols = arith.constant 40 : index
  %tm = arith.constant 8 : index
  %tn = arith.constant 32 : index
  scf.for %i = %c0 to %rows step %tm {
    %vi_left = arith.subi %rows, %i : index
    %vi_lt = arith.cmpi slt, %vi_left, %tm : index
    %vi = arith.select %vi_lt, %vi_left, %tm : index
    scf.for %j = %c0 to %cols step %tn {
      %vj_left = arith.subi %cols, %j : index
      %vj_lt = arith.cmpi slt, %vj_left, %tn : index
      %vj = arith.select %vj_lt, %vj_left, %tn : index
      %t = tile.load %x[%i, %j] valid [%vi, %vj] : memref<20x40xf16> -> !tile.tile<8x32xf16, ub, valid = [?, ?]>
      %u = tile.load %y[%i, %j] valid [%vi, %vj] : memref<20x40xf16> -> !tile.tile<8x32xf16, ub, valid = [?, ?]>
      %r = tile.select lt %t, %u, %u, %t : !tile.tile<8x32xf16, ub, valid = [?, ?]>
      tile.store %r, %out[%i, %j] : !tile.tile<8x32xf16, ub, valid = [?, ?]> -> memref<20x40xf16>
    }
  }
  func.return
}

// CHECK-LABEL: func.func @f
// CHECK-DAG:  %[[T:.*]] = ascend_hw.alloc [0, 512) : !ascend_hw.buf<8x32xf16, ub>
// CHECK-DAG:  %[[U:.*]] = ascend_hw.alloc [768, 1280) : !ascend_hw.buf<8x32xf16, ub>
// CHECK-DAG:  %[[BITS:.*]] = ascend_hw.alloc [{{.*}}) : !ascend_hw.buf<128xi8, ub>
// CHECK:      scf.for
// CHECK:      ascend_hw.vcmp lt %[[T]], %[[U]] -> %[[BITS]] {repeat = 2 : i64} : !ascend_hw.buf<8x32xf16, ub>, !ascend_hw.buf<8x32xf16, ub> -> !ascend_hw.buf<128xi8, ub>
// CHECK-NEXT: ascend_hw.vselect %[[BITS]], %[[U]], %[[T]] -> %[[T]] {repeat = 2 : i64}
// CHECK:      ascend_hw.vcmp lt %{{.*}}, %{{.*}} -> %{{.*}} {repeat = 8 : i64, mask = 8 : i64, blk_stride = array<i64: 1, 1>, rep_stride = array<i64: 2, 2>}
// CHECK-NEXT: ascend_hw.vselect %{{.*}}, %{{.*}}, %{{.*}} -> %{{.*}} {repeat = 8 : i64, mask = 8 : i64, blk_stride = array<i64: 1, 1, 1>, rep_stride = array<i64: 2, 2, 2>}
// CHECK:      ascend_hw.vcmp lt %[[T]], %[[U]] -> %[[BITS]] : !ascend_hw.buf<8x32xf16, ub>
// CHECK-NEXT: ascend_hw.vselect %[[BITS]], %[[U]], %[[T]] -> %[[T]] : !ascend_hw.buf<128xi8, ub>
// CHECK:      ascend_hw.vcmp lt %[[T]], %[[U]] -> %[[BITS]] {repeat = 4 : i64, mask = 8 : i64

func.func @g(%x: memref<8x64xf32>, %m: memref<8x1xf32>, %i: memref<8x64xi32>, %r: memref<1x64xi32>, %out: memref<8x64xi32>) {
  %c0 = arith.constant 0 : index
  %t = tile.load %x[%c0, %c0] : memref<8x64xf32> -> !tile.tile<8x64xf32, ub>
  %n = tile.load %m[%c0, %c0] : memref<8x1xf32> -> !tile.tile<8x1xf32, ub>
  %a = tile.load %i[%c0, %c0] : memref<8x64xi32> -> !tile.tile<8x64xi32, ub>
  %b = tile.load %r[%c0, %c0] : memref<1x64xi32> -> !tile.tile<1x64xi32, ub>
  %s = tile.select ge %t, %n, %a, %b : !tile.tile<8x64xf32, ub>, !tile.tile<8x1xf32, ub>, !tile.tile<8x64xi32, ub>, !tile.tile<1x64xi32, ub>
  tile.store %s, %out[%c0, %c0] : !tile.tile<8x64xi32, ub> -> memref<8x64xi32>
  func.return
}

// CHECK-LABEL: func.func @g
// CHECK-DAG:  %[[X:.*]] = ascend_hw.alloc [{{.*}}) : !ascend_hw.buf<8x64xf32, ub>
// CHECK-DAG:  %[[M:.*]] = ascend_hw.alloc [{{.*}}) : !ascend_hw.buf<8x1xf32, ub>
// CHECK-DAG:  %[[I:.*]] = ascend_hw.alloc [{{.*}}) : !ascend_hw.buf<8x64xi32, ub>
// CHECK-DAG:  %[[R:.*]] = ascend_hw.alloc [{{.*}}) : !ascend_hw.buf<1x64xi32, ub>
// CHECK-DAG:  %[[BITS:.*]] = ascend_hw.alloc [{{.*}}) : !ascend_hw.buf<64xi8, ub>
// CHECK-DAG:  %[[B:.*]] = ascend_hw.alloc [{{.*}}) : !ascend_hw.buf<64xf32, ub>
// CHECK:      ascend_hw.vbrcb %[[M]] -> %[[B]]
// CHECK-NEXT: ascend_hw.vcmp ge %[[X]], %[[B]] -> %[[BITS]] {repeat = 8 : i64, blk_stride = array<i64: 1, 0>, rep_stride = array<i64: 8, 1>}
// CHECK-NEXT: ascend_hw.vselect %[[BITS]], %[[I]], %[[R]] -> %[[I]] {repeat = 8 : i64, blk_stride = array<i64: 1, 1, 1>, rep_stride = array<i64: 8, 0, 8>}
// CHECK-NEXT: ascend_hw.dma_store %[[I]] -> %out
