// The key split (attention-key-split): 128 queries over 2048 keys are 4 query
// blocks on 24 cores; each block's keys are split into ranges run as units of
// their own, whose partial accumulators, row maxima and sums go to f32
// workspaces (the statistics broadcast to 8 columns: one UB block per row, one
// burst), combined by a second nest after them. The remark gives both
// estimates. Off (tv-to-tile or pypto-lower), one unit per query block and no
// workspace. A query tail (100 rows) refuses the split: a unit's rows would be
// a run-time function of its index. S = 512 self-attention keeps one unit per
// query block by cost and says what the split was estimated at.
// tv-to-tile once with its defaults, checked by ON, TAIL, TAILREMARK and SQUARE.
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b}' > %t 2>&1
// RUN: filecheck %s --check-prefix=ON < %t
// RUN: pypto-opt %s -p 'tv-to-tile{target=ascend910b attention-key-split=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s -p 'pypto-lower{target=ascend910b attention-key-split=false}' --mlir-print-ir-after=tv-to-tile 2>&1 | filecheck %s --check-prefix=OFF

// ON:       remark: fused attention {{.*}} over 128x2048: {{.*}} keys split in 4 ranges of 512 per query block, combined after a sync_all in tiles of 16 rows (estimated {{[0-9]+}} cycles, {{[0-9]+}} without the split)
// ON-LABEL: func.func @decode
// ON:       memref.alloc() : memref<512x128xf32>
// ON:       memref.alloc() : memref<512x8xf32>
// ON:       memref.alloc() : memref<512x8xf32>
// ON:       scf.for
// ON:         arith.remui
// ON:         tile.store {{.*}} memref<512x128xf32>
// ON:         tile.store {{.*}} memref<512x8xf32>
// ON:         tile.store {{.*}} memref<512x8xf32>
// ON:       scf.for
// ON:         tile.exp
// ON:         tile.div
// ON:         tile.store {{.*}} memref<128x128xf16>
// ON:       memref.dealloc
// OFF-NOT:  keys split
// OFF-LABEL: func.func @decode
// OFF-NOT:  memref.alloc
// OFF:      func.return
func.func @decode(%q: !tv.tensor<128x128xf16>, %k: !tv.tensor<2048x128xf16>, %v: !tv.tensor<2048x128xf16>) -> !tv.tensor<128x128xf16> {
  %kt = tv.transpose %k [1, 0] : !tv.tensor<2048x128xf16> -> !tv.tensor<128x2048xf16>
  %s = tv.matmul %q, %kt acc(f32) : !tv.tensor<128x128xf16>, !tv.tensor<128x2048xf16> -> !tv.tensor<128x2048xf16>
  %c = arith.constant 8.000000e+00 : f16
  %x = tv.div %s, %c : !tv.tensor<128x2048xf16>, f16 -> !tv.tensor<128x2048xf16>
  %p = tv.softmax %x axis = 1 : !tv.tensor<128x2048xf16>
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<128x2048xf16>, !tv.tensor<2048x128xf16> -> !tv.tensor<128x128xf16>
  func.return %o : !tv.tensor<128x128xf16>
}

// RUN: filecheck %s --check-prefix=TAIL < %t
// RUN: grep 'over 100x2048' %t | filecheck %s --check-prefix=TAILREMARK
// TAIL-LABEL: func.func @tail
// TAIL-NOT:   memref.alloc
// TAIL:       func.return
// TAILREMARK:     query blocks of 16 rows
// TAILREMARK-NOT: split
func.func @tail(%q: !tv.tensor<100x64xf16>, %k: !tv.tensor<2048x64xf16>, %v: !tv.tensor<2048x64xf16>) -> !tv.tensor<100x64xf16> {
  %kt = tv.transpose %k [1, 0] : !tv.tensor<2048x64xf16> -> !tv.tensor<64x2048xf16>
  %s = tv.matmul %q, %kt acc(f32) : !tv.tensor<100x64xf16>, !tv.tensor<64x2048xf16> -> !tv.tensor<100x2048xf16>
  %c = arith.constant 8.000000e+00 : f16
  %x = tv.div %s, %c : !tv.tensor<100x2048xf16>, f16 -> !tv.tensor<100x2048xf16>
  %p = tv.softmax %x axis = 1 : !tv.tensor<100x2048xf16>
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<100x2048xf16>, !tv.tensor<2048x64xf16> -> !tv.tensor<100x64xf16>
  func.return %o : !tv.tensor<100x64xf16>
}

// RUN: filecheck %s --check-prefix=SQUARE < %t
// SQUARE: remark: fused attention {{.*}} no key split (estimated {{[0-9]+}} cycles, {{[0-9]+}} with the keys in 2 ranges)
func.func @square(%q: !tv.tensor<512x128xf16>, %k: !tv.tensor<512x128xf16>, %v: !tv.tensor<512x128xf16>) -> !tv.tensor<512x128xf16> {
  %kt = tv.transpose %k [1, 0] : !tv.tensor<512x128xf16> -> !tv.tensor<128x512xf16>
  %s = tv.matmul %q, %kt acc(f32) : !tv.tensor<512x128xf16>, !tv.tensor<128x512xf16> -> !tv.tensor<512x512xf16>
  %c = arith.constant 8.000000e+00 : f16
  %x = tv.div %s, %c : !tv.tensor<512x512xf16>, f16 -> !tv.tensor<512x512xf16>
  %p = tv.softmax %x axis = 1 : !tv.tensor<512x512xf16>
  %o = tv.matmul %p, %v acc(f32) : !tv.tensor<512x512xf16>, !tv.tensor<512x128xf16> -> !tv.tensor<512x128xf16>
  func.return %o : !tv.tensor<512x128xf16>
}
