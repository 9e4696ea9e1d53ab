// pypto-run --profile on the double-buffered vector add of examples/hw: the
// table of source lines (the MLIR file's), most pipe-cycles first, and hints
// computed from the run (the cycles are the cost model's: matched as numbers;
// the wait hints come longest first, so their order is the cost model's too).
// RUN: pypto-run %examples/vadd_double.mlir --profile | filecheck %s

// CHECK:      cycles: [[CYCLES:[0-9]+]] (target ascend910b)
// CHECK:      profile: [[CYCLES]] cycles on 2 of 24 cores (ascend910b); pipe-cycles per source line, most first
// CHECK-NEXT: roofline: - (needs the kernel's tv-level IR)
// CHECK:      line                cycles  share  busiest pipe   waits        DMA  wire  cores  code
// CHECK:      vadd_double.mlir:32 {{ +[0-9]+ +[0-9.]+%}}  MTE2 {{[0-9]+ +}}0  256.0 KiB  100%      2  ascend_hw.dma_load %x[%row, %c0] -> %xa
// CHECK:      vadd_double.mlir:38       0   0.0%  - {{ +[0-9]+}}          -     -      0  ascend_hw.wait_flag v -> mte3, 0
// CHECK:      hints:
// CHECK-NEXT:   - the kernel runs on 2 of 24 cores: 22 stay idle for all [[CYCLES]] cycles (more blocks would use them)
// CHECK-DAG:    - MTE3 waits for V {{[0-9]+}} cycles ({{[0-9]+}}% of MTE3's time) at vadd_double.mlir:38 for the data in ub[0, 32768): V produces it too late (V busy {{[0-9]+}}% of the run); V itself waits for MTE2 {{[0-9]+}}% of its time
// CHECK-DAG:    - V waits for MTE2 {{[0-9]+}} cycles ({{[0-9]+}}% of V's time) at vadd_double.mlir:35 for the data in ub[32768, 65536): MTE2 produces it too late (MTE2 busy {{[0-9]+}}% of the run); MTE2 is the bottleneck
