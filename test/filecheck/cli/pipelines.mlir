// Named pipelines run like passes and take options: pypto-cleanup is
// canonicalize, cse and dce; cse=false leaves out cse.
// RUN: pypto-opt %s -p pypto-cleanup | filecheck %s
// RUN: pypto-opt %s -p 'pypto-cleanup{cse=false}' | filecheck %s --check-prefix=NO-CSE

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %unused = arith.subi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}

// CHECK: %0 = arith.addi %a, %a : i32
// CHECK-NEXT: %1 = arith.muli %0, %0 : i32
// CHECK-NEXT: func.return %1 : i32

// NO-CSE: %0 = arith.addi %a, %a : i32
// NO-CSE-NEXT: %1 = arith.addi %a, %a : i32
// NO-CSE-NEXT: %2 = arith.muli %0, %1 : i32
// NO-CSE-NEXT: func.return %2 : i32
