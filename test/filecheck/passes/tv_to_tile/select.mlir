// tv.select is an elementwise MAP member: a leaky relu (a fill, a multiply and
// a select), a select against a [M, 1] column and the row sum after them are one
// loop nest, each select one tile.select on the nest's tiles (the [M, 1]
// operand as a [tm, 1] tile). On tiny the 37x129 nest tiles the row in 72-column
// chunks with a runtime-valid tail, as tv.add's would.
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b late-invariants=false matmul-l2-order=false}' | filecheck %s
// RUN: pypto-opt %s -p 'tv-to-tile{target=tiny late-invariants=false matmul-l2-order=false}' | filecheck %s --check-prefix=TINY

func.func @leaky(%x: !tv.tensor<37x129xf32>, %t: !tv.tensor<37x1xf32>) -> (!tv.tensor<37x129xf32>, !tv.tensor<37xf32>) {
  %s = arith.constant 0.01 : f32
  %z = arith.constant 0.0 : f32
  %zero = tv.fill %z : f32 -> !tv.tensor<37x129xf32>
  %m = tv.mul %x, %s : !tv.tensor<37x129xf32>, f32 -> !tv.tensor<37x129xf32>
  %r = tv.select gt %x, %zero, %x, %m : !tv.tensor<37x129xf32>, !tv.tensor<37x129xf32>, !tv.tensor<37x129xf32>, !tv.tensor<37x129xf32> -> !tv.tensor<37x129xf32>
  %c = tv.select le %r, %t, %r, %t : !tv.tensor<37x129xf32>, !tv.tensor<37x1xf32>, !tv.tensor<37x129xf32>, !tv.tensor<37x1xf32> -> !tv.tensor<37x129xf32>
  %sum = tv.reduce_sum %c [1] : !tv.tensor<37x129xf32> -> !tv.tensor<37xf32>
  func.return %c, %sum : !tv.tensor<37x129xf32>, !tv.tensor<37xf32>
}

// CHECK-LABEL: func.func @leaky
// CHECK:      %[[X:.*]] = tile.load %x[%{{.*}}, %{{.*}}] : memref<37x129xf32> -> !tile.tile<37x136xf32, ub, valid = [37, 129]>
// CHECK-NEXT: %[[Z:.*]] = tile.fill %z : f32 -> !tile.tile<37x136xf32, ub, valid = [37, 129]>
// CHECK-NEXT: %[[M:.*]] = tile.mul %[[X]], %s
// CHECK-NEXT: %[[R:.*]] = tile.select gt %[[X]], %[[Z]], %[[X]], %[[M]] : !tile.tile<37x136xf32, ub, valid = [37, 129]>
// CHECK-NEXT: %[[T:.*]] = tile.load %t[%{{.*}}, %{{.*}}] : memref<37x1xf32> -> !tile.tile<37x1xf32, ub>
// CHECK-NEXT: %[[C:.*]] = tile.select le %[[R]], %[[T]], %[[R]], %[[T]] : !tile.tile<37x136xf32, ub, valid = [37, 129]>, !tile.tile<37x1xf32, ub>, !tile.tile<37x136xf32, ub, valid = [37, 129]>, !tile.tile<37x1xf32, ub>
// CHECK-NEXT: tile.store %[[C]], %out0
// CHECK-NEXT: tile.reduce_sum %[[C]], axis = 1
// CHECK-NOT:  tile.load

// TINY-LABEL: func.func @leaky
// TINY:       scf.for
// TINY:       scf.for
// TINY:       %[[X:.*]] = tile.load %x[%{{.*}}, %{{.*}}] valid [%{{.*}}] : memref<37x129xf32> -> !tile.tile<1x72xf32, ub, valid = [1, ?]>
// TINY:       %[[R:.*]] = tile.select gt %[[X]], %{{.*}}, %[[X]], %{{.*}} : !tile.tile<1x72xf32, ub, valid = [1, ?]>
// TINY-NEXT:  %[[C:.*]] = tile.select le %[[R]], %{{.*}}, %[[R]], %{{.*}} : !tile.tile<1x72xf32, ub, valid = [1, ?]>, !tile.tile<1x1xf32, ub>, !tile.tile<1x72xf32, ub, valid = [1, ?]>, !tile.tile<1x1xf32, ub>
// TINY-NEXT:  tile.reduce_sum %[[C]], axis = 1
