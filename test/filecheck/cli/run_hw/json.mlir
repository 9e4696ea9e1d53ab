// The JSON report of the examples: the schema's keys, the bytes each kernel
// moves, and double buffering finishing the same work in fewer cycles.
// RUN: pypto-run %examples/vadd_single.mlir --report json 2>/dev/null > %t.single.json
// RUN: pypto-run %examples/vadd_double.mlir --report json 2>/dev/null > %t.double.json
// RUN: pypto-run %examples/matmul.mlir --report json 2> %t.summary > %t.matmul.json
// RUN: python %S/Inputs/report_facts.py %t.single.json %t.double.json %t.matmul.json | filecheck %s
// RUN: filecheck %s --check-prefix=SUMMARY < %t.summary

// CHECK:      keys: bank_conflict_cycles bank_conflict_instructions block_dim bytes_per_path clock_ghz cores cycles gm_bandwidth_gbps gm_bandwidth_utilization gm_bytes_read gm_bytes_written gm_wire_bytes instructions l2 microseconds pipes roofline sync_all target target_cores
// CHECK-NEXT: pipes: FIX M MTE1 MTE2 MTE3 S V
// CHECK-NEXT: single: 2 cores, read 1048576, written 524288
// CHECK-NEXT: double: 2 cores, read 1048576, written 524288
// CHECK-NEXT: double buffering is faster: True
// CHECK-NEXT: matmul: 2 cores, read 98304, written 65536, paths gm->l1 l0c->gm l1->l0a l1->l0b
// CHECK-NEXT: matmul pipes busy: FIX M MTE1 MTE2 S

// SUMMARY: @matmul: ascend_hw level, run by the AI Core simulator
// SUMMARY: arg2  f32[128x128]
