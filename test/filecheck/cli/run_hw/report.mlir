// pypto-run on the double-buffered vector add of examples/hw: the summary, the
// text report (two cores, as the kernel declares) and the outputs, which equal
// numpy's f16 sum bit for bit.
// RUN: pypto-run %examples/vadd_double.mlir --random 1 --report text --output %t.npz | filecheck %s
// RUN: python -c "import numpy as np; d = np.load('%t.npz'); print(np.array_equal(d['arg2'], d['arg0'] + d['arg1']))" | filecheck %s --check-prefix=SUM

// CHECK:      @vadd: ascend_hw level, run by the AI Core simulator
// CHECK-NEXT: inputs: random (seed 1)
// CHECK-NEXT: arg0  f16[256x1024]  sum={{.*}}  (unchanged)
// CHECK-NEXT: arg1  f16[256x1024]  sum={{.*}}  (unchanged)
// CHECK-NEXT: arg2  f16[256x1024]  sum={{.*}}{{$}}
// CHECK-NEXT: cycles: [[CYCLES:[0-9]+]] (target ascend910b)
// CHECK-NEXT: target ascend910b, 2 core(s) at 1.85 GHz: [[CYCLES]] cycles = {{.*}} us, 68 instructions
// CHECK:      pipe     busy cycles  utilization
// CHECK:      MTE2           30784
// CHECK:      MTE3            8032
// 4752 cycles of vadd plus one bank conflict cycle per repeat: x and y tiles
// both start in bank group 0, so every repeat reads two rows of groups 0-7.
// CHECK:      V               6800
// CHECK:      GM: 1048576 B read, 524288 B written
// Each input byte is read once: the L2 (ascend910b has one) never hits.
// CHECK-NEXT: L2: 0 B hit, 1048576 B missed (0.0% hit rate), 1048576 B from HBM
// CHECK:      bytes per path: gm->ub 1048576, ub->gm 524288
// CHECK:      UB bank conflicts: 2048 cycles in 16 instructions (30.1% of V busy)
// CHECK:      ub 131072/196608 B (67%)
// CHECK:      core      cycles {{.*}} bank conflict cycles  L2 hit
// CHECK-NEXT: 0 {{.*}} 1024 {{ *}}0%{{$}}
// CHECK-NEXT: 1 {{.*}} 1024 {{ *}}0%{{$}}

// SUM: True
