// Chains with the shape matmul -> row softmax -> matmul that are not fused get
// a remark saying why, and keep their three nests (the scores through GM; with
// row-fusion=false, since row fusion would put the scores matmul and the
// softmax in one nest: test/filecheck/passes/tv_to_tile/matmul-row-fusion.mlir).
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b row-fusion=false}' --verify-diagnostics | filecheck %s
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b attention-fusion=false row-fusion=false}' 2>&1 | filecheck %s --check-prefix=OFF

// OFF-NOT: attention not fused
// OFF-NOT: fused attention

// The softmax is also read by another op: it must go to GM.
// CHECK-LABEL: func.func @softmax_read_twice
// CHECK: memref.alloc
func.func @softmax_read_twice(%q: !tv.tensor<64x32xf16>, %k: !tv.tensor<32x64xf16>, %v: !tv.tensor<64x32xf16>) -> (!tv.tensor<64x32xf16>, !tv.tensor<64x64xf16>) {
  // expected-remark @+1 {{tiled tv.matmul}}
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<32x64xf16> -> !tv.tensor<64x64xf16>
  // expected-remark @+1 {{tiled tv.softmax}}
  %p = tv.softmax %s axis = 1 : !tv.tensor<64x64xf16>
  // expected-remark @+1 {{tiled tv.mul}}
  %z = tv.mul %p, %p : !tv.tensor<64x64xf16>, !tv.tensor<64x64xf16> -> !tv.tensor<64x64xf16>
  // expected-remark @+2 {{attention not fused: the softmax or a value before it is also read elsewhere}}
  // expected-remark @+1 {{tiled tv.matmul}}
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  func.return %o, %z : !tv.tensor<64x32xf16>, !tv.tensor<64x64xf16>
}

// -----

// A reduction between the matmuls (a hand-written softmax) is not one
// elementwise chain and a softmax.
// CHECK-LABEL: func.func @reduction_between
func.func @reduction_between(%q: !tv.tensor<64x32xf16>, %k: !tv.tensor<32x64xf16>, %v: !tv.tensor<64x32xf16>) -> !tv.tensor<64x32xf16> {
  // expected-remark @+1 {{tiled tv.matmul}}
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<32x64xf16> -> !tv.tensor<64x64xf16>
  %m = tv.reduce_max %s [1] keepdims : !tv.tensor<64x64xf16> -> !tv.tensor<64x1xf16>
  %d = tv.sub %s, %m : !tv.tensor<64x64xf16>, !tv.tensor<64x1xf16> -> !tv.tensor<64x64xf16>
  // expected-remark @+1 {{tiled tv.reduce_max, tv.sub, tv.softmax}}
  %p = tv.softmax %d axis = 1 : !tv.tensor<64x64xf16>
  // expected-remark @+2 {{attention not fused: 'tv.reduce_max' between the matmuls is not elementwise}}
  // expected-remark @+1 {{tiled tv.matmul}}
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  func.return %o : !tv.tensor<64x32xf16>
}

// -----

// f32 operands: the nest moves f16 probabilities to the cube.
// CHECK-LABEL: func.func @f32_operands
func.func @f32_operands(%q: !tv.tensor<64x32xf32>, %k: !tv.tensor<32x64xf32>, %v: !tv.tensor<64x32xf32>) -> !tv.tensor<64x32xf32> {
  // expected-remark @+1 {{tiled tv.matmul}}
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<64x32xf32>, !tv.tensor<32x64xf32> -> !tv.tensor<64x64xf32>
  // expected-remark @+1 {{tiled tv.softmax}}
  %p = tv.softmax %s axis = 1 : !tv.tensor<64x64xf32>
  // expected-remark @+2 {{attention not fused: the matmul operands and the softmax are not all f16}}
  // expected-remark @+1 {{tiled tv.matmul}}
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<64x64xf32>, !tv.tensor<64x32xf32> -> !tv.tensor<64x32xf32>
  func.return %o : !tv.tensor<64x32xf32>
}

// -----

// A dynamic sequence length.
// CHECK-LABEL: func.func @dynamic
func.func @dynamic(%q: !tv.tensor<?x32xf16>, %k: !tv.tensor<32x?xf16>, %v: !tv.tensor<?x32xf16>) -> !tv.tensor<?x32xf16> {
  // expected-remark @+1 {{tiled tv.matmul}}
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<?x32xf16>, !tv.tensor<32x?xf16> -> !tv.tensor<?x?xf16>
  // expected-remark @+1 {{tiled tv.softmax}}
  %p = tv.softmax %s axis = 1 : !tv.tensor<?x?xf16>
  // expected-remark @+2 {{attention not fused: a dim is not static}}
  // expected-remark @+1 {{tiled tv.matmul}}
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<?x?xf16>, !tv.tensor<?x32xf16> -> !tv.tensor<?x32xf16>
  func.return %o : !tv.tensor<?x32xf16>
}

// -----

// Head dims that are not whole fractals.
// CHECK-LABEL: func.func @odd_head
func.func @odd_head(%q: !tv.tensor<64x24xf16>, %k: !tv.tensor<24x64xf16>, %v: !tv.tensor<64x24xf16>) -> !tv.tensor<64x24xf16> {
  // expected-remark @+1 {{tiled tv.matmul}}
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<64x24xf16>, !tv.tensor<24x64xf16> -> !tv.tensor<64x64xf16>
  // expected-remark @+1 {{tiled tv.softmax}}
  %p = tv.softmax %s axis = 1 : !tv.tensor<64x64xf16>
  // expected-remark @+2 {{attention not fused: head dims 24, 24 are not multiples of 16}}
  // expected-remark @+1 {{tiled tv.matmul}}
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x24xf16> -> !tv.tensor<64x24xf16>
  func.return %o : !tv.tensor<64x24xf16>
}

// -----

// The probabilities are also a result: the fused nest would keep them on chip
// and never store them (was an internal KeyError in tv-to-tile).
// CHECK-LABEL: func.func @softmax_returned
func.func @softmax_returned(%q: !tv.tensor<64x32xf16>, %k: !tv.tensor<32x64xf16>, %v: !tv.tensor<64x32xf16>) -> (!tv.tensor<64x32xf16>, !tv.tensor<64x64xf16>) {
  // expected-remark @+1 {{tiled tv.matmul}}
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<32x64xf16> -> !tv.tensor<64x64xf16>
  // expected-remark @+1 {{tiled tv.softmax}}
  %p = tv.softmax %s axis = 1 : !tv.tensor<64x64xf16>
  // expected-remark @+2 {{attention not fused: the softmax is also a result}}
  // expected-remark @+1 {{tiled tv.matmul}}
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  func.return %o, %p : !tv.tensor<64x32xf16>, !tv.tensor<64x64xf16>
}

// -----

// The scores are also a result: not the attention pattern, three nests.
// CHECK-LABEL: func.func @scores_returned
func.func @scores_returned(%q: !tv.tensor<64x32xf16>, %k: !tv.tensor<32x64xf16>, %v: !tv.tensor<64x32xf16>) -> (!tv.tensor<64x32xf16>, !tv.tensor<64x64xf16>) {
  // expected-remark @+1 {{tiled tv.matmul}}
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<32x64xf16> -> !tv.tensor<64x64xf16>
  // expected-remark @+1 {{tiled tv.softmax}}
  %p = tv.softmax %s axis = 1 : !tv.tensor<64x64xf16>
  // expected-remark @+1 {{tiled tv.matmul}}
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  func.return %o, %s : !tv.tensor<64x32xf16>, !tv.tensor<64x64xf16>
}

// -----

// The softmax written out, its row maximum also a result: the nest would
// keep it on chip.
// CHECK-LABEL: func.func @spelled_max_returned
func.func @spelled_max_returned(%q: !tv.tensor<64x32xf16>, %k: !tv.tensor<32x64xf16>, %v: !tv.tensor<64x32xf16>) -> (!tv.tensor<64x32xf16>, !tv.tensor<64x1xf16>) {
  // expected-remark @+1 {{tiled tv.matmul}}
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<32x64xf16> -> !tv.tensor<64x64xf16>
  %m = tv.reduce_max %s [1] keepdims : !tv.tensor<64x64xf16> -> !tv.tensor<64x1xf16>
  %d = tv.sub %s, %m : !tv.tensor<64x64xf16>, !tv.tensor<64x1xf16> -> !tv.tensor<64x64xf16>
  %e = tv.exp %d : !tv.tensor<64x64xf16>
  %t = tv.reduce_sum %e [1] keepdims : !tv.tensor<64x64xf16> -> !tv.tensor<64x1xf16>
  // expected-remark @+1 {{tiled tv.reduce_max, tv.sub, tv.exp, tv.reduce_sum, tv.div}}
  %p = tv.div %e, %t : !tv.tensor<64x64xf16>, !tv.tensor<64x1xf16> -> !tv.tensor<64x64xf16>
  // expected-remark @+2 {{attention not fused: the softmax or a value before it is also read elsewhere}}
  // expected-remark @+1 {{tiled tv.matmul}}
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  func.return %o, %m : !tv.tensor<64x32xf16>, !tv.tensor<64x1xf16>
}

// -----

// The output matmul reads `p + 2 e`, not a softmax: not the attention
// pattern, three nests and no attention remark.
// CHECK-LABEL: func.func @spelled_exp_read_twice
func.func @spelled_exp_read_twice(%q: !tv.tensor<64x32xf16>, %k: !tv.tensor<32x64xf16>, %v: !tv.tensor<64x32xf16>) -> !tv.tensor<64x32xf16> {
  // expected-remark @+1 {{tiled tv.matmul}}
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<32x64xf16> -> !tv.tensor<64x64xf16>
  %m = tv.reduce_max %s [1] keepdims : !tv.tensor<64x64xf16> -> !tv.tensor<64x1xf16>
  %d = tv.sub %s, %m : !tv.tensor<64x64xf16>, !tv.tensor<64x1xf16> -> !tv.tensor<64x64xf16>
  %e = tv.exp %d : !tv.tensor<64x64xf16>
  %t = tv.reduce_sum %e [1] keepdims : !tv.tensor<64x64xf16> -> !tv.tensor<64x1xf16>
  %p = tv.div %e, %t : !tv.tensor<64x64xf16>, !tv.tensor<64x1xf16> -> !tv.tensor<64x64xf16>
  %c = arith.constant 2.000000e+00 : f16
  %f = tv.mul %e, %c : !tv.tensor<64x64xf16>, f16 -> !tv.tensor<64x64xf16>
  // expected-remark @+1 {{tiled tv.reduce_max, tv.sub, tv.exp, tv.reduce_sum, tv.div, tv.mul, tv.add}}
  %g = tv.add %p, %f : !tv.tensor<64x64xf16>, !tv.tensor<64x64xf16> -> !tv.tensor<64x64xf16>
  // expected-remark @+1 {{tiled tv.matmul}}
  %o = tv.matmul %g, %v acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  func.return %o : !tv.tensor<64x32xf16>
}

// -----

// A softmax over the queries (reductions over dim 0): not attention.
// CHECK-LABEL: func.func @spelled_over_queries
func.func @spelled_over_queries(%q: !tv.tensor<64x32xf16>, %k: !tv.tensor<32x64xf16>, %v: !tv.tensor<64x32xf16>) -> !tv.tensor<64x32xf16> {
  // expected-remark @+1 {{tiled tv.matmul}}
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<64x32xf16>, !tv.tensor<32x64xf16> -> !tv.tensor<64x64xf16>
  %m = tv.reduce_max %s [0] keepdims : !tv.tensor<64x64xf16> -> !tv.tensor<1x64xf16>
  %d = tv.sub %s, %m : !tv.tensor<64x64xf16>, !tv.tensor<1x64xf16> -> !tv.tensor<64x64xf16>
  %e = tv.exp %d : !tv.tensor<64x64xf16>
  %t = tv.reduce_sum %e [0] keepdims : !tv.tensor<64x64xf16> -> !tv.tensor<1x64xf16>
  // expected-remark @+1 {{tiled tv.reduce_max, tv.sub, tv.exp, tv.reduce_sum, tv.div}}
  %p = tv.div %e, %t : !tv.tensor<64x64xf16>, !tv.tensor<1x64xf16> -> !tv.tensor<64x64xf16>
  // expected-remark @+1 {{tiled tv.matmul}}
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<64x64xf16>, !tv.tensor<64x32xf16> -> !tv.tensor<64x32xf16>
  func.return %o : !tv.tensor<64x32xf16>
}
