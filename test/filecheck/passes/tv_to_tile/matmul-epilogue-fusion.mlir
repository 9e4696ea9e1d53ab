// The switches of matmul epilogue fusion: epilogue-fusion=false computes a
// matmul's elementwise epilogue as a nest of its own, the result through GM
// (so that its gain can be measured: bench/bench_fusion.py), and fuses no
// reduction either; row-fusion=false keeps a reduction along the rows of a
// matmul result out of the matmul's nest. Both are options of pypto-lower.
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b}' 2>&1 | filecheck %s --check-prefix=ON
// RUN: pypto-opt %s --split-input-file -p 'tv-to-tile{target=ascend910b epilogue-fusion=false}' 2>&1 | filecheck %s --check-prefix=OFF
// RUN: pypto-opt %s --split-input-file -p 'pypto-lower{target=ascend910b epilogue-fusion=false}' 2>&1 | filecheck %s --check-prefix=LOWER
// RUN: pypto-opt %s --split-input-file -p 'pypto-lower{target=tiny row-fusion=false}' 2>&1 | filecheck %s --check-prefix=ROWOFF

// ON:     tiled tv.matmul 96x80x40: {{.*}} epilogue tv.add, tv.relu in ub
// ON-NOT: not fused
// ON:     func.func @bias_relu
// ON-NOT: memref.alloc
// ON:     tile.matmul
// ON:     tile.relu
// ON:     tile.store {{.*}}, %out

// OFF:      epilogue tv.add, tv.relu not fused with tv.matmul: epilogue-fusion=false; the result goes through GM
// OFF:      tiled tv.add, tv.relu as one loop nest over 96x80
// OFF:      func.func @bias_relu
// OFF:      %[[C:.*]] = memref.alloc() : memref<96x80xf16>
// OFF:      tile.matmul
// OFF:      tile.store %{{.*}}, %[[C]]
// OFF:      tile.load %[[C]]
// OFF:      tile.relu
// OFF:      tile.store %{{.*}}, %out
// OFF-NOT:  into the nest of tv.matmul
// OFF:      func.func @softmax
// OFF:      memref.alloc

// LOWER:    epilogue tv.add, tv.relu not fused with tv.matmul: epilogue-fusion=false
// LOWER:    ascend_hw.sync_all
// LOWER:    func.func @softmax
// LOWER:    ascend_hw.sync_all

// ROWOFF-NOT: into the nest of tv.matmul
// ROWOFF:     func.func @softmax
// ROWOFF:     ascend_hw.sync_all
func.func @bias_relu(%a: !tv.tensor<96x40xf16>, %b: !tv.tensor<40x80xf16>, %c: !tv.tensor<80xf16>) -> !tv.tensor<96x80xf16> {
  %m = tv.matmul %a, %b acc(f32) : !tv.tensor<96x40xf16>, !tv.tensor<40x80xf16> -> !tv.tensor<96x80xf16>
  %y = tv.add %m, %c : !tv.tensor<96x80xf16>, !tv.tensor<80xf16> -> !tv.tensor<96x80xf16>
  %r = tv.relu %y : !tv.tensor<96x80xf16>
  func.return %r : !tv.tensor<96x80xf16>
}

// -----

func.func @softmax(%q: !tv.tensor<32x16xf16>, %k: !tv.tensor<16x48xf16>) -> !tv.tensor<32x48xf16> {
  %s = tv.matmul %q, %k acc(f32) : !tv.tensor<32x16xf16>, !tv.tensor<16x48xf16> -> !tv.tensor<32x48xf16>
  %p = tv.softmax %s axis = 1 : !tv.tensor<32x48xf16>
  func.return %p : !tv.tensor<32x48xf16>
}
