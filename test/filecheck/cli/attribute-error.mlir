// An attribute that fails its own verifier while being parsed is reported at the
// op that holds it, with exit status 1.
// RUN: bash -c 'pypto-opt %s; echo "exit=$?"' 2>&1 | filecheck %s --strict-whitespace

func.func @f() {
  %0 = arith.constant 300 : i8
  func.return
}

// CHECK: attribute-error.mlir:6:3: error: Integer value 300 is out of range for type i8
// CHECK-NEXT: {{^}}  %0 = arith.constant 300 : i8{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
// CHECK-NEXT: exit=1
