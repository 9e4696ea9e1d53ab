// Operands must be defined before their use (in the block or an enclosing one),
// checked before any pass runs, as MLIR's verifier does.
// RUN: pypto-opt %s --split-input-file --verify-diagnostics
// RUN: pypto-opt %s --split-input-file --verify-diagnostics -p 'pypto-lower{target=tiny}'

func.func @later(%a: i32) -> i32 {
  // expected-error @+1 {{operand #1 does not dominate this use}}
  %0 = arith.addi %a, %1 : i32
  // expected-note @+1 {{operand defined here}}
  %1 = arith.addi %a, %a : i32
  func.return %0 : i32
}

// -----

func.func @self(%x: !tv.tensor<8xf32>) -> !tv.tensor<8xf32> {
  // expected-error @+2 {{operand #1 does not dominate this use}}
  // expected-note @+1 {{operand defined here}}
  %z = tv.add %x, %z : !tv.tensor<8xf32>
  func.return %z : !tv.tensor<8xf32>
}

// -----

func.func @loop_bound_defined_in_the_loop() {
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{operand #0 is used but never defined where it is visible}}
  scf.for %k = %c0 to %c4 step %c1 {
    %c0 = arith.constant 0 : index
  }
  func.return
}
