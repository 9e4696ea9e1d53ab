// --inputs reads arg0, arg1, ... from an .npz archive; '?' sizes take the
// array's size; scalar arguments are 0-d arrays; the outputs are exact.
// RUN: python -c "import numpy as np; np.savez('%t.in.npz', arg0=np.arange(6, dtype=np.float32).reshape(3, 2), arg1=np.float32(10))"
// RUN: pypto-run %s --inputs %t.in.npz --output %t.out.npz | filecheck %s
// RUN: python -c "import numpy as np; print(np.load('%t.out.npz')['result0'].tolist())" | filecheck %s --check-prefix=VALUES

func.func @affine(%x: !tv.tensor<?x2xf32>, %s: f32) -> !tv.tensor<?x2xf32> {
  %y = tv.mul %x, %s : !tv.tensor<?x2xf32>, f32 -> !tv.tensor<?x2xf32>
  %one = arith.constant 1.0 : f32
  %z = tv.add %y, %one : !tv.tensor<?x2xf32>, f32 -> !tv.tensor<?x2xf32>
  func.return %z : !tv.tensor<?x2xf32>
}

// CHECK:      @affine: tv level, run by the tv reference interpreter
// CHECK-NEXT: inputs: {{.*}}.in.npz
// CHECK-NEXT: result0  f32[3x2]  sum=156 crc32={{[0-9a-f]+}}

// VALUES: {{\[\[}}1.0, 11.0], [21.0, 31.0], [41.0, 51.0]]
