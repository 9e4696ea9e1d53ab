// Every tile op and the tile type print in their custom form and survive a round
// trip through the generic form.
// RUN: pypto-opt %s | pypto-opt | filecheck %s
// RUN: %roundtrip | filecheck %s

// Defaults are omitted when printing: the valid shape when it is the whole tile,
// nd in ub/l1 and nz in l0a/l0b/l0c.
// CHECK-LABEL: func.func @types
// CHECK-SAME: %{{[a-z]}}: !tile.tile<64x1024xf16, ub>
// CHECK-SAME: %{{[a-z]}}: !tile.tile<64x1024xf16, ub, valid = [?, 1000]>
// CHECK-SAME: %{{[a-z]}}: !tile.tile<64x1024xf16, ub>
// CHECK-SAME: %{{[a-z]}}: !tile.tile<128xf32, ub, valid = [5], pad = min>
// CHECK-SAME: %{{[a-z]}}: !tile.tile<2x8x32xbf16, l1, pad = max>
// CHECK-SAME: %{{[a-z]}}: !tile.tile<64x64xi8, l1, valid = [?, ?], layout = nz, pad = zero>
// CHECK-SAME: %{{[a-z]}}: !tile.tile<16x32xf16, l0a>
// CHECK-SAME: %{{[a-z]}}: !tile.tile<32x16xf16, l0b>
// CHECK-SAME: %{{[a-z]}}: !tile.tile<16x16xi32, l0c>
// CHECK-SAME: %{{[a-z]}}: !tile.tile<8x16xi16, ub>
func.func @types(%a: !tile.tile<64x1024xf16, ub>,
                 %b: !tile.tile<64x1024xf16, ub, valid = [?, 1000]>,
                 %c: !tile.tile<64x1024xf16, ub, valid = [64, 1024], layout = nd>,
                 %d: !tile.tile<128xf32, ub, pad = min, valid = [5]>,
                 %e: !tile.tile<2x8x32xbf16, l1, pad = max>,
                 %f: !tile.tile<64x64xi8, l1, valid = [?, ?], layout = nz, pad = zero>,
                 %g: !tile.tile<16x32xf16, l0a, layout = nz>,
                 %h: !tile.tile<32x16xf16, l0b>,
                 %i: !tile.tile<16x16xi32, l0c>,
                 %j: !tile.tile<8x16xi16, ub>) {
  func.return
}

// CHECK-LABEL: func.func @movement
func.func @movement(%x: memref<100x1000xf16>, %y: memref<4x100x1000xf16>,
                    %v: memref<64x64xf16, strided<[1000, 1], offset: ?>>,
                    %deep: !tile.tile<64x128xf16, l1, valid = [?, 100], layout = nz, pad = zero>,
                    %i: index, %rows: index, %cols: index) {
  %c0 = arith.constant 0 : index
  // CHECK: %[[T:.*]] = tile.load %{{.*}}[%{{.*}}, %{{.*}}] valid [%{{.*}}] : memref<100x1000xf16> -> !tile.tile<64x1008xf16, ub, valid = [?, 1000]>
  %t = tile.load %x[%i, %c0] valid [%rows] : memref<100x1000xf16> -> !tile.tile<64x1008xf16, ub, valid = [?, 1000]>
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<100x1000xf16> -> !tile.tile<16x32xf16, ub>
  %t2 = tile.load %x[%i, %c0] : memref<100x1000xf16> -> !tile.tile<16x32xf16, ub>
  // A tile of lower rank than the memref: the leading memref dims have extent 1.
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] valid [%{{.*}}, %{{.*}}] : memref<4x100x1000xf16> -> !tile.tile<64x64xf16, l1, valid = [?, ?], layout = nz, pad = zero>
  %l1 = tile.load %y[%c0, %i, %c0] valid [%rows, %cols] : memref<4x100x1000xf16> -> !tile.tile<64x64xf16, l1, valid = [?, ?], layout = nz, pad = zero>
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<64x64xf16, strided<[1000, 1], offset: ?>> -> !tile.tile<64x64xf16, ub>
  %sv = tile.load %v[%c0, %c0] : memref<64x64xf16, strided<[1000, 1], offset: ?>> -> !tile.tile<64x64xf16, ub>
  // CHECK: tile.store %[[T]], %{{.*}}[%{{.*}}, %{{.*}}] : !tile.tile<64x1008xf16, ub, valid = [?, 1000]> -> memref<100x1000xf16>
  tile.store %t, %x[%i, %c0] : !tile.tile<64x1008xf16, ub, valid = [?, 1000]> -> memref<100x1000xf16>
  // CHECK: tile.move %{{.*}} : !tile.tile<64x64xf16, l1, valid = [?, ?], layout = nz, pad = zero> -> !tile.tile<64x64xf16, l0a, valid = [?, ?], pad = zero>
  %a = tile.move %l1 : !tile.tile<64x64xf16, l1, valid = [?, ?], layout = nz, pad = zero> -> !tile.tile<64x64xf16, l0a, valid = [?, ?], pad = zero>
  // CHECK: tile.move %{{.*}} transpose : !tile.tile<64x64xf16, l1, valid = [?, ?], layout = nz, pad = zero> -> !tile.tile<64x64xf16, l0b, valid = [?, ?]>
  %b = tile.move %l1 transpose : !tile.tile<64x64xf16, l1, valid = [?, ?], layout = nz, pad = zero> -> !tile.tile<64x64xf16, l0b, valid = [?, ?]>
  // A window along K of a deeper L1 tile: its valid extent is what the source
  // has past the offset (a ? only where the window covers the dim whole).
  // CHECK: tile.move %{{.*}} window [0, 64] : !tile.tile<64x128xf16, l1, valid = [?, 100], layout = nz, pad = zero> -> !tile.tile<64x64xf16, l0a, valid = [?, 36], pad = zero>
  %w = tile.move %deep window [0, 64] : !tile.tile<64x128xf16, l1, valid = [?, 100], layout = nz, pad = zero> -> !tile.tile<64x64xf16, l0a, valid = [?, 36], pad = zero>
  // CHECK: tile.move %{{.*}} window [0, 32] transpose : !tile.tile<64x128xf16, l1, valid = [?, 100], layout = nz, pad = zero> -> !tile.tile<32x64xf16, l0b, valid = [32, ?]>
  %wt = tile.move %deep window [0, 32] transpose : !tile.tile<64x128xf16, l1, valid = [?, 100], layout = nz, pad = zero> -> !tile.tile<32x64xf16, l0b, valid = [32, ?]>
  // CHECK: tile.move %{{.*}} : !tile.tile<64x1008xf16, ub, valid = [?, 1000]> -> !tile.tile<64x1008xf16, l1, valid = [?, 1000]>
  %u2l = tile.move %t : !tile.tile<64x1008xf16, ub, valid = [?, 1000]> -> !tile.tile<64x1008xf16, l1, valid = [?, 1000]>
  // CHECK: tile.move %{{.*}} : !tile.tile<64x1008xf16, l1, valid = [?, 1000]> -> !tile.tile<64x1008xf16, ub, valid = [?, 1000]>
  %l2u = tile.move %u2l : !tile.tile<64x1008xf16, l1, valid = [?, 1000]> -> !tile.tile<64x1008xf16, ub, valid = [?, 1000]>
  func.return
}

// CHECK-LABEL: func.func @cube
func.func @cube(%a: !tile.tile<64x32xf16, l0a, valid = [?, ?], pad = zero>,
                %b: !tile.tile<32x128xf16, l0b, valid = [?, 128], pad = zero>,
                %a8: !tile.tile<32x64xi8, l0a>, %b8: !tile.tile<64x32xi8, l0b>,
                %out: memref<64x128xf16>, %out32: memref<64x128xf32>) {
  %c0 = arith.constant 0 : index
  // CHECK: %[[C:.*]] = tile.matmul %{{.*}}, %{{.*}} : !tile.tile<64x32xf16, l0a, valid = [?, ?], pad = zero>, !tile.tile<32x128xf16, l0b, valid = [?, 128], pad = zero> -> !tile.tile<64x128xf32, l0c, valid = [?, 128]>
  %c = tile.matmul %a, %b : !tile.tile<64x32xf16, l0a, valid = [?, ?], pad = zero>, !tile.tile<32x128xf16, l0b, valid = [?, 128], pad = zero> -> !tile.tile<64x128xf32, l0c, valid = [?, 128]>
  // CHECK: %[[D:.*]] = tile.matmul %{{.*}}, %{{.*}}, %[[C]] : !tile.tile<64x32xf16, l0a, valid = [?, ?], pad = zero>, !tile.tile<32x128xf16, l0b, valid = [?, 128], pad = zero> -> !tile.tile<64x128xf32, l0c, valid = [?, 128]>
  %d = tile.matmul %a, %b, %c : !tile.tile<64x32xf16, l0a, valid = [?, ?], pad = zero>, !tile.tile<32x128xf16, l0b, valid = [?, 128], pad = zero> -> !tile.tile<64x128xf32, l0c, valid = [?, 128]>
  // CHECK: tile.matmul %{{.*}}, %{{.*}} : !tile.tile<32x64xi8, l0a>, !tile.tile<64x32xi8, l0b> -> !tile.tile<32x32xi32, l0c>
  %i = tile.matmul %a8, %b8 : !tile.tile<32x64xi8, l0a>, !tile.tile<64x32xi8, l0b> -> !tile.tile<32x32xi32, l0c>
  // CHECK: tile.move %[[D]] : !tile.tile<64x128xf32, l0c, valid = [?, 128]> -> !tile.tile<64x128xf16, ub, valid = [?, 128]>
  %h = tile.move %d : !tile.tile<64x128xf32, l0c, valid = [?, 128]> -> !tile.tile<64x128xf16, ub, valid = [?, 128]>
  // CHECK: tile.move %[[D]] : !tile.tile<64x128xf32, l0c, valid = [?, 128]> -> !tile.tile<64x128xf32, l1, valid = [?, 128], layout = nz>
  %l = tile.move %d : !tile.tile<64x128xf32, l0c, valid = [?, 128]> -> !tile.tile<64x128xf32, l1, valid = [?, 128], layout = nz>
  // CHECK: tile.store %[[D]], %{{.*}}[%{{.*}}, %{{.*}}] : !tile.tile<64x128xf32, l0c, valid = [?, 128]> -> memref<64x128xf16>
  tile.store %d, %out[%c0, %c0] : !tile.tile<64x128xf32, l0c, valid = [?, 128]> -> memref<64x128xf16>
  // CHECK: tile.store %[[D]], %{{.*}}[%{{.*}}, %{{.*}}] : !tile.tile<64x128xf32, l0c, valid = [?, 128]> -> memref<64x128xf32>
  tile.store %d, %out32[%c0, %c0] : !tile.tile<64x128xf32, l0c, valid = [?, 128]> -> memref<64x128xf32>
  func.return
}

// CHECK-LABEL: func.func @unary
func.func @unary(%t: !tile.tile<8x64xf32, ub, valid = [?, 60], pad = zero>, %n: !tile.tile<8x16xi32, ub>) {
  // The result drops the operand's pad value.
  // CHECK: tile.neg %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60], pad = zero>
  %0 = tile.neg %t : !tile.tile<8x64xf32, ub, valid = [?, 60], pad = zero>
  // CHECK: tile.neg %{{.*}} : !tile.tile<8x16xi32, ub>
  %1 = tile.neg %n : !tile.tile<8x16xi32, ub>
  // CHECK: tile.abs %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %2 = tile.abs %0 : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  // CHECK: tile.abs %{{.*}} : !tile.tile<8x16xi32, ub>
  %3 = tile.abs %n : !tile.tile<8x16xi32, ub>
  // CHECK: tile.exp %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %4 = tile.exp %0 : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  // CHECK: tile.log %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %5 = tile.log %0 : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  // CHECK: tile.sqrt %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %6 = tile.sqrt %0 : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  // CHECK: tile.rsqrt %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %7 = tile.rsqrt %0 : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  // CHECK: tile.reciprocal %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %8 = tile.reciprocal %0 : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  // CHECK: tile.relu %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %9 = tile.relu %0 : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  // CHECK: tile.relu %{{.*}} : !tile.tile<8x16xi32, ub>
  %10 = tile.relu %n : !tile.tile<8x16xi32, ub>
  // CHECK: tile.sigmoid %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %11 = tile.sigmoid %0 : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  // CHECK: tile.tanh %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %12 = tile.tanh %0 : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  // CHECK: tile.gelu %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %13 = tile.gelu %0 : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  // CHECK: tile.silu %{{.*}} : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  %14 = tile.silu %0 : !tile.tile<8x64xf32, ub, valid = [?, 60]>
  func.return
}

// CHECK-LABEL: func.func @binary
func.func @binary(%x: !tile.tile<64x1024xf16, ub>, %y: !tile.tile<64x1024xf16, ub>,
                  %row: !tile.tile<64x1xf16, ub>, %col: !tile.tile<1x1024xf16, ub>,
                  %p: !tile.tile<64x1024xf16, ub, pad = zero>,
                  %n: !tile.tile<8x16xi32, ub>, %s: i32) {
  %c = arith.constant 0.5 : f16
  // CHECK: tile.add %{{.*}}, %{{.*}} : !tile.tile<64x1024xf16, ub>
  %0 = tile.add %x, %y : !tile.tile<64x1024xf16, ub>
  // CHECK: tile.sub %{{.*}}, %{{.*}} : !tile.tile<64x1024xf16, ub>, !tile.tile<64x1xf16, ub>
  %1 = tile.sub %x, %row : !tile.tile<64x1024xf16, ub>, !tile.tile<64x1xf16, ub>
  // CHECK: tile.mul %{{.*}}, %{{.*}} : !tile.tile<1x1024xf16, ub>, !tile.tile<64x1024xf16, ub>
  %2 = tile.mul %col, %x : !tile.tile<1x1024xf16, ub>, !tile.tile<64x1024xf16, ub>
  // CHECK: tile.div %{{.*}}, %{{.*}} : f16, !tile.tile<64x1024xf16, ub>
  %3 = tile.div %c, %x : f16, !tile.tile<64x1024xf16, ub>
  // CHECK: tile.max %{{.*}}, %{{.*}} : !tile.tile<64x1024xf16, ub>, f16
  %4 = tile.max %x, %c : !tile.tile<64x1024xf16, ub>, f16
  // CHECK: tile.min %{{.*}}, %{{.*}} : !tile.tile<64x1024xf16, ub, pad = zero>, !tile.tile<64x1024xf16, ub>
  %5 = tile.min %p, %x : !tile.tile<64x1024xf16, ub, pad = zero>, !tile.tile<64x1024xf16, ub>
  // A row and a column broadcast to a whole tile.
  // CHECK: tile.add %{{.*}}, %{{.*}} : !tile.tile<64x1xf16, ub>, !tile.tile<1x1024xf16, ub>
  %6 = tile.add %row, %col : !tile.tile<64x1xf16, ub>, !tile.tile<1x1024xf16, ub>
  // CHECK: tile.mul %{{.*}}, %{{.*}} : !tile.tile<8x16xi32, ub>, i32
  %7 = tile.mul %n, %s : !tile.tile<8x16xi32, ub>, i32
  func.return
}

// CHECK-LABEL: func.func @other
func.func @other(%t: !tile.tile<64x1024xf32, ub, valid = [?, 1000]>, %n: index, %v: f32) {
  // CHECK: tile.cast %{{.*}} : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1024xf16, ub, valid = [?, 1000]>
  %h = tile.cast %t : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1024xf16, ub, valid = [?, 1000]>
  // CHECK: tile.cast %{{.*}} : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1024xbf16, ub, valid = [?, 1000]>
  %bf = tile.cast %t : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1024xbf16, ub, valid = [?, 1000]>
  // CHECK: tile.cast %{{.*}} round floor : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1024xi32, ub, valid = [?, 1000]>
  %i = tile.cast %t round floor : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1024xi32, ub, valid = [?, 1000]>
  // CHECK: %[[M:.*]] = tile.reduce_max %{{.*}}, axis = 1 : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1xf32, ub, valid = [?, 1]>
  %m = tile.reduce_max %t, axis = 1 : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1xf32, ub, valid = [?, 1]>
  // CHECK: tile.reduce_sum %{{.*}}, axis = 0 : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<1x1024xf32, ub, valid = [1, 1000]>
  %s = tile.reduce_sum %t, axis = 0 : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<1x1024xf32, ub, valid = [1, 1000]>
  // CHECK: tile.reduce_min %{{.*}}, axis = 1 : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1xf32, ub, valid = [?, 1]>
  %mn = tile.reduce_min %t, axis = 1 : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1xf32, ub, valid = [?, 1]>
  // CHECK: tile.broadcast %[[M]] : !tile.tile<64x1xf32, ub, valid = [?, 1]> -> !tile.tile<64x1024xf32, ub, valid = [?, 1000]>
  %b = tile.broadcast %m : !tile.tile<64x1xf32, ub, valid = [?, 1]> -> !tile.tile<64x1024xf32, ub, valid = [?, 1000]>
  // CHECK: tile.broadcast %[[M]] valid [%{{.*}}] : !tile.tile<64x1xf32, ub, valid = [?, 1]> -> !tile.tile<64x1024xf32, ub, valid = [?, ?]>
  %b2 = tile.broadcast %m valid [%n] : !tile.tile<64x1xf32, ub, valid = [?, 1]> -> !tile.tile<64x1024xf32, ub, valid = [?, ?]>
  // CHECK: tile.fill %{{.*}} : f32 -> !tile.tile<64x8xf32, ub>
  %f = tile.fill %v : f32 -> !tile.tile<64x8xf32, ub>
  // CHECK: tile.fill %{{.*}} valid [%{{.*}}, %{{.*}}] : f32 -> !tile.tile<64x8xf32, ub, valid = [?, ?], pad = min>
  %f2 = tile.fill %v valid [%n, %n] : f32 -> !tile.tile<64x8xf32, ub, valid = [?, ?], pad = min>
  // CHECK: tile.pad %{{.*}} : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1024xf32, ub, valid = [?, 1000], pad = zero>
  %p = tile.pad %t : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<64x1024xf32, ub, valid = [?, 1000], pad = zero>
  // CHECK: tile.transpose %{{.*}} : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<1024x64xf32, ub, valid = [1000, ?]>
  %tr = tile.transpose %t : !tile.tile<64x1024xf32, ub, valid = [?, 1000]> -> !tile.tile<1024x64xf32, ub, valid = [1000, ?]>
  // CHECK: tile.valid_dim %{{.*}}, 0 : !tile.tile<64x1024xf32, ub, valid = [?, 1000]>
  %vd = tile.valid_dim %t, 0 : !tile.tile<64x1024xf32, ub, valid = [?, 1000]>
  func.return
}

// Tiles flow through scf.for as iteration arguments (e.g. a running maximum).
// CHECK-LABEL: func.func @loop
func.func @loop(%x: memref<64x4096xf32>, %init: !tile.tile<64x1xf32, ub>) -> !tile.tile<64x1xf32, ub> {
  %c0 = arith.constant 0 : index
  %c512 = arith.constant 512 : index
  %c4096 = arith.constant 4096 : index
  // CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (!tile.tile<64x1xf32, ub>)
  %r = scf.for %j = %c0 to %c4096 step %c512 iter_args(%acc = %init) -> (!tile.tile<64x1xf32, ub>) {
    %t = tile.load %x[%c0, %j] : memref<64x4096xf32> -> !tile.tile<64x512xf32, ub>
    %m = tile.reduce_max %t, axis = 1 : !tile.tile<64x512xf32, ub> -> !tile.tile<64x1xf32, ub>
    %n = tile.max %acc, %m : !tile.tile<64x1xf32, ub>
    scf.yield %n : !tile.tile<64x1xf32, ub>
  }
  func.return %r : !tile.tile<64x1xf32, ub>
}
