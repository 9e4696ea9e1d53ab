// Row reductions, softmax and layernorm tile along the reduced axis. When a whole
// row fits in UB (ascend910b here) the nest loops over row blocks only and every
// value is loaded and computed once. When it does not (tiny: a 4 KiB UB), the
// nest makes passes over column tiles inside each row block: softmax in two
// (online max and rescaled sum, then the output), layernorm in three (sum, sum of
// squares of the centred values, output), with the statistics carried in [rows, 1]
// tiles through scf.for iteration arguments. f16 sums accumulate in f32.
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' 2>&1 | filecheck %s --check-prefix=A2
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny}' 2>&1 | filecheck %s --check-prefix=TINY

func.func @softmax(%x: !tv.tensor<64x1000xf32>) -> !tv.tensor<64x1000xf32> {
  %y = tv.softmax %x axis = 1 : !tv.tensor<64x1000xf32>
  func.return %y : !tv.tensor<64x1000xf32>
}

// A2:        remark: tiled tv.softmax as one loop nest over 64x1000: ub tiles 8x1000, reduced dims [1] kept whole in ub
// TINY:      remark: tiled tv.softmax as one loop nest over 64x1000: ub tiles 1x200, 2 pass(es) over reduced dims [1]

func.func @layernorm(%x: !tv.tensor<8x700xf16>) -> !tv.tensor<8x700xf16> {
  %inv = arith.constant 0.00142857141 : f32
  %eps = arith.constant 1.0e-5 : f32
  %s = tv.reduce_sum %x [1] keepdims : !tv.tensor<8x700xf16> -> !tv.tensor<8x1xf16>
  %mean = tv.mul %s, %inv : !tv.tensor<8x1xf16>, f32 -> !tv.tensor<8x1xf16>
  %d = tv.sub %x, %mean : !tv.tensor<8x700xf16>, !tv.tensor<8x1xf16> -> !tv.tensor<8x700xf16>
  %sq = tv.mul %d, %d : !tv.tensor<8x700xf16>
  %ss = tv.reduce_sum %sq [1] keepdims : !tv.tensor<8x700xf16> -> !tv.tensor<8x1xf16>
  %var = tv.mul %ss, %inv : !tv.tensor<8x1xf16>, f32 -> !tv.tensor<8x1xf16>
  %ve = tv.add %var, %eps : !tv.tensor<8x1xf16>, f32 -> !tv.tensor<8x1xf16>
  %rs = tv.rsqrt %ve : !tv.tensor<8x1xf16>
  %y = tv.mul %d, %rs : !tv.tensor<8x700xf16>, !tv.tensor<8x1xf16> -> !tv.tensor<8x700xf16>
  func.return %y : !tv.tensor<8x700xf16>
}

// A2:        remark: tiled tv.reduce_sum, tv.mul, tv.sub, tv.mul, tv.reduce_sum, tv.mul, tv.add, tv.rsqrt, tv.mul as one loop nest over 8x700: ub tiles 8x704 (step 8x700), reduced dims [1] kept whole in ub
// TINY:      remark: tiled tv.reduce_sum, tv.mul, tv.sub, tv.mul, tv.reduce_sum, tv.mul, tv.add, tv.rsqrt, tv.mul as one loop nest over 8x700: ub tiles 1x240, 3 pass(es) over reduced dims [1]

func.func @column_max(%x: !tv.tensor<300x45xf32>) -> !tv.tensor<45xf32> {
  %m = tv.reduce_max %x [0] : !tv.tensor<300x45xf32> -> !tv.tensor<45xf32>
  func.return %m : !tv.tensor<45xf32>
}

// A2:        remark: tiled tv.reduce_max as one loop nest over 300x45: ub tiles 300x48 (step 300x45), reduced dims [0] kept whole in ub

// A2-LABEL:  func.func @softmax(%x: memref<64x1000xf32>, %out: memref<64x1000xf32>) {
// A2:          scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// A2-NEXT:       %[[X:.*]] = tile.load %x[%[[I]], %{{.*}}] : memref<64x1000xf32> -> !tile.tile<8x1000xf32, ub>
// A2-NEXT:       %[[M:.*]] = tile.reduce_max %[[X]], axis = 1 : !tile.tile<8x1000xf32, ub> -> !tile.tile<8x1xf32, ub>
// A2-NEXT:       %[[D:.*]] = tile.sub %[[X]], %[[M]] : !tile.tile<8x1000xf32, ub>, !tile.tile<8x1xf32, ub>
// A2-NEXT:       %[[E:.*]] = tile.exp %[[D]] : !tile.tile<8x1000xf32, ub>
// A2-NEXT:       %[[S:.*]] = tile.reduce_sum %[[E]], axis = 1 : !tile.tile<8x1000xf32, ub> -> !tile.tile<8x1xf32, ub>
// A2-NEXT:       %[[Y:.*]] = tile.div %[[E]], %[[S]] : !tile.tile<8x1000xf32, ub>, !tile.tile<8x1xf32, ub>
// A2-NEXT:       tile.store %[[Y]], %out[%[[I]], %{{.*}}] : !tile.tile<8x1000xf32, ub> -> memref<64x1000xf32>
// A2-NEXT:     }

// TINY-LABEL: func.func @softmax(%x: memref<64x1000xf32>, %out: memref<64x1000xf32>) {
// TINY:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// TINY-NEXT:      %[[M0:.*]] = tile.fill %{{.*}} : f32 -> !tile.tile<1x1xf32, ub>
// TINY-NEXT:      %[[S0:.*]] = tile.fill %{{.*}} : f32 -> !tile.tile<1x1xf32, ub>
// TINY-NEXT:      %[[MAX:.*]], %[[SUM:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[M:.*]] = %[[M0]], %[[S:.*]] = %[[S0]]) -> (!tile.tile<1x1xf32, ub>, !tile.tile<1x1xf32, ub>) {
// TINY-NEXT:        %[[X:.*]] = tile.load %x[%[[I]], %[[J]]] : memref<64x1000xf32> -> !tile.tile<1x200xf32, ub>
// TINY-NEXT:        %[[LM:.*]] = tile.reduce_max %[[X]], axis = 1
// TINY-NEXT:        %[[NM:.*]] = tile.max %[[M]], %[[LM]]
// TINY-NEXT:        %[[D:.*]] = tile.sub %[[X]], %[[NM]]
// TINY-NEXT:        %[[E:.*]] = tile.exp %[[D]]
// TINY-NEXT:        %[[LS:.*]] = tile.reduce_sum %[[E]], axis = 1
// TINY-NEXT:        %[[DM:.*]] = tile.sub %[[M]], %[[NM]]
// TINY-NEXT:        %[[C:.*]] = tile.exp %[[DM]]
// TINY-NEXT:        %[[R:.*]] = tile.mul %[[S]], %[[C]]
// TINY-NEXT:        %[[NS:.*]] = tile.add %[[R]], %[[LS]]
// TINY-NEXT:        scf.yield %[[NM]], %[[NS]]
// TINY-NEXT:      }
// TINY-NEXT:      scf.for %[[J2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// TINY-NEXT:        %[[X2:.*]] = tile.load %x[%[[I]], %[[J2]]] : memref<64x1000xf32> -> !tile.tile<1x200xf32, ub>
// TINY-NEXT:        %[[D2:.*]] = tile.sub %[[X2]], %[[MAX]]
// TINY-NEXT:        %[[E2:.*]] = tile.exp %[[D2]]
// TINY-NEXT:        %[[Y:.*]] = tile.div %[[E2]], %[[SUM]]
// TINY-NEXT:        tile.store %[[Y]], %out[%[[I]], %[[J2]]]
