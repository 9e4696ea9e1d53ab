// Input files that do not fit the function are diagnostics at the .npz file,
// with a note at the function; exit status 1.
// RUN: python -c "import numpy as np; np.savez('%t.missing.npz', arg0=np.zeros((4, 8), np.float16))"
// RUN: python -c "import numpy as np; np.savez('%t.extra.npz', arg0=np.zeros((4, 8), np.float16), arg1=np.float32(1), bias=np.zeros(3))"
// RUN: python -c "import numpy as np; np.savez('%t.dtype.npz', arg0=np.zeros((4, 8)), arg1=np.float32(1))"
// RUN: python -c "import numpy as np; np.savez('%t.shape.npz', arg0=np.zeros((4, 9), np.float16), arg1=np.float32(1))"
// RUN: python -c "import numpy as np; np.savez('%t.scalar.npz', arg0=np.zeros((4, 8), np.float16), arg1=np.ones(2, np.float32))"
// RUN: python -c "import numpy as np; np.save('%t.npy', np.zeros(3))"
// RUN: bash -c 'pypto-run %s --inputs %t.missing.npz; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: bash -c 'pypto-run %s --inputs %t.extra.npz; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=EXTRA
// RUN: bash -c 'pypto-run %s --inputs %t.dtype.npz; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DTYPE
// RUN: bash -c 'pypto-run %s --inputs %t.shape.npz; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SHAPE
// RUN: bash -c 'pypto-run %s --inputs %t.scalar.npz; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SCALAR
// RUN: bash -c 'pypto-run %s --inputs %t.npy; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NPY
// RUN: bash -c 'pypto-run %s --inputs %s; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOTZIP
// RUN: bash -c 'pypto-run %s --inputs %t.nothere.npz; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOFILE

func.func @scale(%x: !tv.tensor<4x8xf16>, %s: f32) -> !tv.tensor<4x8xf16> {
  %y = tv.mul %x, %s : !tv.tensor<4x8xf16>, f32 -> !tv.tensor<4x8xf16>
  func.return %y : !tv.tensor<4x8xf16>
}

// MISSING:      {{.*}}.missing.npz: error: missing arg1 (@scale takes arg0, arg1)
// MISSING-NEXT: {{.*}}input-errors.mlir:[[# @LINE - 6]]:1: note: @scale is declared here
// MISSING-NEXT: func.func @scale
// MISSING-NEXT: ^
// MISSING-NEXT: exit=1

// EXTRA: {{.*}}.extra.npz: error: unexpected bias (@scale takes arg0, arg1)
// EXTRA: exit=1

// DTYPE: {{.*}}.dtype.npz: error: arg0: a !tv.tensor<4x8xf16> argument is a numpy float16 array, got float64
// DTYPE: exit=1

// SHAPE: {{.*}}.shape.npz: error: arg0: expected shape 4x8 (!tv.tensor<4x8xf16>), got 4x9
// SHAPE: exit=1

// SCALAR: {{.*}}.scalar.npz: error: arg1: a f32 argument is a 0-d array, got shape (2,)
// SCALAR: exit=1

// NPY: {{.*}}.npy: error: not an .npz archive (numpy.savez writes one)
// NPY-NEXT: exit=1

// NOTZIP: input-errors.mlir: error: cannot read inputs: {{.*}}
// NOTZIP-NEXT: exit=1

// NOFILE: {{.*}}.nothere.npz: error: cannot read inputs: No such file or directory
// NOFILE-NEXT: exit=1
