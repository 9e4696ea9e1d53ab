// A tv-level function runs on the tv reference interpreter: a summary names
// the level and gives each output's shape and checksum; the same seed gives the
// same inputs, hence the same checksums; --output writes result<i> arrays.
// RUN: pypto-run %s | filecheck %s
// RUN: pypto-run %s > %t.default
// RUN: pypto-run %s --random 0 > %t.seed0
// RUN: diff %t.default %t.seed0
// RUN: pypto-run %s --random 1 > %t.seed1
// RUN: not diff %t.default %t.seed1
// RUN: pypto-run %s --random 7 --output %t.npz
// RUN: python -c "import numpy as np; d = np.load('%t.npz'); print(sorted(d.files), d['result0'].dtype, d['result0'].shape, d['result1'].shape)" | filecheck %s --check-prefix=NPZ
// RUN: pypto-run - < %s | filecheck %s

func.func @scaled_softmax(%x: !tv.tensor<4x8xf16>) -> (!tv.tensor<4x8xf16>, !tv.tensor<4xf32>) {
  %half = arith.constant 5.000000e-01 : f16
  %y = tv.mul %x, %half : !tv.tensor<4x8xf16>, f16 -> !tv.tensor<4x8xf16>
  %s = tv.softmax %y axis = 1 : !tv.tensor<4x8xf16>
  %w = tv.cast %s : !tv.tensor<4x8xf16> to !tv.tensor<4x8xf32>
  %r = tv.reduce_sum %w [1] : !tv.tensor<4x8xf32> -> !tv.tensor<4xf32>
  func.return %s, %r : !tv.tensor<4x8xf16>, !tv.tensor<4xf32>
}

// CHECK:      @scaled_softmax: tv level, run by the tv reference interpreter
// CHECK-NEXT: inputs: random (seed 0)
// CHECK-NEXT: result0  f16[4x8]  sum={{[0-9.e+-]+}} crc32={{[0-9a-f]+}}
// Every softmax row sums to 1 (within f16 rounding of its 8 elements).
// CHECK-NEXT: result1  f32[4]  sum={{(3\.99|4\.00)[0-9]*}} crc32={{[0-9a-f]+}}
// CHECK-EMPTY:

// NPZ: ['result0', 'result1'] float16 (4, 8) (4,)
