// --trace and --timeline on the matmul example: one Chrome-trace track per pipe
// per core, one slice per instruction named after the op with its source
// location in the example; a PNG timeline.
// RUN: pypto-run %examples/matmul.mlir --trace %t.json --timeline %t.png | filecheck %s --check-prefix=SUMMARY
// RUN: python %S/Inputs/trace_facts.py %t.json %t.png | filecheck %s

// SUMMARY: @matmul: ascend_hw level, run by the AI Core simulator
// SUMMARY: cycles: {{[0-9]+}} (target ascend910b)

// CHECK:      processes: 0 1
// CHECK-NEXT: tracks of core 0: FIX M MTE1 MTE2 S
// CHECK-NEXT: block_idx S matmul.mlir:18:5
// CHECK-NEXT: block_dim S matmul.mlir:19:5
// CHECK-NEXT: nd2nz MTE2 matmul.mlir:32:5 32768 B
// CHECK-NEXT: load_l0 MTE1 matmul.mlir:35:5 32768 B
// CHECK-NEXT: nd2nz MTE2 matmul.mlir:39:7 8192 B
// CHECK-NEXT: load_l0 MTE1 matmul.mlir:44:7 8192 B
// CHECK-NEXT: mmad M matmul.mlir:50:7
// CHECK-NEXT: fixpipe FIX matmul.mlir:54:7 16384 B
// CHECK-NEXT: nd2nz MTE2 matmul.mlir:39:7 8192 B
// CHECK:      png: True
