// Errors while running are diagnostics at the op that failed, exit status 1.
// RUN: python -c "import numpy as np; np.savez('%t.npz', arg0=np.ones((3, 4), np.float32), arg1=np.ones((2, 4), np.float32), arg2=np.int64(6))"
// RUN: bash -c 'pypto-run %s --entry add --inputs %t.npz; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=ADD
// RUN: python -c "import numpy as np; np.savez('%t.view.npz', arg0=np.ones(8, np.float32), arg1=np.int64(7))"
// RUN: bash -c 'pypto-run %s --entry window --inputs %t.view.npz; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=VIEW
// RUN: python -c "import numpy as np; np.savez('%t.div.npz', arg0=np.int32(3), arg1=np.int32(0))"
// RUN: bash -c 'pypto-run %s --entry divide --inputs %t.div.npz; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DIVIDE

func.func @add(%x: !tv.tensor<?x4xf32>, %y: !tv.tensor<?x4xf32>, %unused: index) -> !tv.tensor<?x4xf32> {
  %z = tv.add %x, %y : !tv.tensor<?x4xf32>
  func.return %z : !tv.tensor<?x4xf32>
}
func.func @window(%x: !tv.tensor<8xf32>, %i: index) -> !tv.tensor<2xf32> {
  %v = tv.view %x[%i][2][1] : !tv.tensor<8xf32> to !tv.tensor<2xf32>
  func.return %v : !tv.tensor<2xf32>
}
func.func @divide(%a: i32, %b: i32) -> i32 {
  %c = arith.divsi %a, %b : i32
  func.return %c : i32
}

// ADD:      runtime-error.mlir:10:3: error: tv.add: dimension sizes 3 and 2 differ at run time ('?' dimensions do not broadcast)
// ADD-NEXT:   %z = tv.add %x, %y : !tv.tensor<?x4xf32>
// ADD-NEXT:   ^
// ADD-NEXT: exit=1

// VIEW: runtime-error.mlir:14:3: error: {{.*}}out of bounds{{.*}}
// VIEW: exit=1

// An integer division by zero (undefined in MLIR) stops xDSL's interpreter.
// DIVIDE:      runtime-error.mlir:18:3: error: 'arith.divsi' cannot be executed: AssertionError
// DIVIDE-NEXT:   %c = arith.divsi %a, %b : i32
// DIVIDE:      exit=1
