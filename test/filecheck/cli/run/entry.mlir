// The entry is the only public function, or the one --entry names; private
// functions and declarations are not candidates.
// RUN: bash -c 'pypto-run %s; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SEVERAL
// RUN: pypto-run %s --entry second | filecheck %s --check-prefix=SECOND
// RUN: pypto-run %s --entry helper | filecheck %s --check-prefix=HELPER
// RUN: bash -c 'pypto-run %s --entry nope; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOPE
// RUN: bash -c 'pypto-run %s --entry external; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NOPE-DECL
// RUN: echo 'func.func private @f()' | bash -c 'pypto-run -; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NONE

func.func @first(%x: !tv.tensor<2xf32>) -> !tv.tensor<2xf32> {
  %y = func.call @helper(%x) : (!tv.tensor<2xf32>) -> !tv.tensor<2xf32>
  func.return %y : !tv.tensor<2xf32>
}
func.func @second(%x: !tv.tensor<3xi32>) -> !tv.tensor<3xi32> {
  %y = tv.neg %x : !tv.tensor<3xi32>
  func.return %y : !tv.tensor<3xi32>
}
func.func private @helper(%x: !tv.tensor<2xf32>) -> !tv.tensor<2xf32> {
  %y = tv.exp %x : !tv.tensor<2xf32>
  func.return %y : !tv.tensor<2xf32>
}
func.func private @external(%x: !tv.tensor<2xf32>) -> !tv.tensor<2xf32>

// SEVERAL:      entry.mlir: error: several public functions (@first, @second): choose one with --entry
// SEVERAL-NEXT: exit=1

// SECOND:      @second: tv level, run by the tv reference interpreter
// SECOND-NEXT: inputs: random (seed 0)
// SECOND-NEXT: result0  i32[3]  sum={{-?[0-9]+}} crc32={{[0-9a-f]+}}

// A private function can still be named explicitly.
// HELPER: @helper: tv level

// NOPE:      entry.mlir: error: --entry: no function @nope to run; the public functions are @first, @second
// NOPE-NEXT: exit=1
// NOPE-DECL: entry.mlir: error: --entry: no function @external to run
// NONE: <stdin>: error: no public func.func to run
// NONE-NEXT: exit=1
