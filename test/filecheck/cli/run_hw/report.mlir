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
// Busy cycles from ascend910b.toml, over both cores: 32 loads of 32 KiB, each
// 1295 latency + 2 per burst + ceil(32768 / 58.56 B/cycle) = 1857; 16 stores,
// each 278 + 2 + ceil(32768 / 109.38) = 580; 16 vadds of 128 repeats, each
// ceil(128 * 2.07) = 265, plus its start-up of 6 (it waits for its loads, so it
// starts a stream on V), plus one bank conflict cycle per repeat: x and y tiles
// both start in bank group 0, so every repeat reads two rows of groups 0-7.
// CHECK:      MTE2           59424
// CHECK:      MTE3            9280
// CHECK:      V               6384
// CHECK:      GM: 1048576 B read, 524288 B written
// Each input byte is read once: the L2 (ascend910b has one) never hits.
// CHECK-NEXT: L2: 0 B hit, 1048576 B missed (0.0% hit rate), 1048576 B from HBM
// CHECK:      bytes per path: gm->ub 1048576, ub->gm 524288
// CHECK:      UB bank conflicts: 2048 cycles in 16 instructions (32.1% of V busy)
// CHECK:      ub 131072/196608 B (67%)
// CHECK:      core      cycles {{.*}} bank conflict cycles  L2 hit
// CHECK-NEXT: 0 {{.*}} 1024 {{ *}}0%{{$}}
// CHECK-NEXT: 1 {{.*}} 1024 {{ *}}0%{{$}}

// SUM: True
