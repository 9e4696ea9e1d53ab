// An ascend_hw function runs on the AI Core simulator: the summary gives the
// memref arguments' final contents (arg<i>; inputs the kernel only read are
// marked unchanged) and the cycles; --report, --trace and --timeline give the
// simulator's report, a Chrome trace and a PNG timeline. A race is an error at
// the later access with a note at the earlier one.
// RUN: pypto-run %s --entry vadd --random 3 --output %t.npz | filecheck %s
// RUN: python -c "import numpy as np; d = np.load('%t.npz'); print(sorted(d.files), np.array_equal(d['arg2'], d['arg0'] + d['arg1']))" | filecheck %s --check-prefix=SUM
// RUN: pypto-run %s --entry vadd --report text --target tiny | filecheck %s --check-prefix=TEXT
// RUN: pypto-run %s --entry vadd --report json 2> %t.summary | python -c "import json, sys; r = json.load(sys.stdin); print(r['cycles'] > 0, sorted(r['pipes'])[:2], r['gm_bytes_read'], r['gm_bytes_written'])" | filecheck %s --check-prefix=JSON
// RUN: filecheck %s --check-prefix=SUMMARY < %t.summary
// RUN: pypto-run %s --entry vadd --trace %t.trace.json --timeline %t.png > /dev/null
// RUN: python -c "import json; t = json.load(open('%t.trace.json')); print(len(t['traceEvents']) > 0); print(open('%t.png', 'rb').read(4))" | filecheck %s --check-prefix=FILES
// RUN: bash -c 'pypto-run %s --entry racy; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=RACE
// RUN: bash -c 'pypto-run %s --entry returns; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=RETURNS
// RUN: bash -c 'pypto-run %s --entry vadd --target no-such-chip; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: bash -c 'pypto-run %s --entry vadd --trace %S; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TRACE-DIR

func.func @vadd(%x: memref<8x128xf16>, %y: memref<8x128xf16>, %z: memref<8x128xf16>) {
  %c0 = arith.constant 0 : index
  %xt = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
  %yt = ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
  ascend_hw.dma_load %x[%c0, %c0] -> %xt {bursts = 1, burst_bytes = 2048} : memref<8x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
  ascend_hw.dma_load %y[%c0, %c0] -> %yt {bursts = 1, burst_bytes = 2048} : memref<8x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
  ascend_hw.set_flag mte2 -> v, 0
  ascend_hw.wait_flag mte2 -> v, 0
  ascend_hw.vadd %xt, %yt -> %xt {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
  ascend_hw.set_flag v -> mte3, 0
  ascend_hw.wait_flag v -> mte3, 0
  ascend_hw.dma_store %xt -> %z[%c0, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<8x128xf16, ub> -> memref<8x128xf16>
  func.return
}

// The same without the mte2 -> v flag: the vadd may read %xt before it arrives.
func.func @racy(%x: memref<8x128xf16>, %y: memref<8x128xf16>, %z: memref<8x128xf16>) {
  %c0 = arith.constant 0 : index
  %xt = ascend_hw.alloc [0, 2048) : !ascend_hw.buf<8x128xf16, ub>
  %yt = ascend_hw.alloc [2048, 4096) : !ascend_hw.buf<8x128xf16, ub>
  ascend_hw.dma_load %x[%c0, %c0] -> %xt {bursts = 1, burst_bytes = 2048} : memref<8x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
  ascend_hw.dma_load %y[%c0, %c0] -> %yt {bursts = 1, burst_bytes = 2048} : memref<8x128xf16> -> !ascend_hw.buf<8x128xf16, ub>
  ascend_hw.vadd %xt, %yt -> %xt {repeat = 8} : !ascend_hw.buf<8x128xf16, ub>, !ascend_hw.buf<8x128xf16, ub> -> !ascend_hw.buf<8x128xf16, ub>
  ascend_hw.set_flag v -> mte3, 0
  ascend_hw.wait_flag v -> mte3, 0
  ascend_hw.dma_store %xt -> %z[%c0, %c0] {bursts = 1, burst_bytes = 2048} : !ascend_hw.buf<8x128xf16, ub> -> memref<8x128xf16>
  func.return
}

func.func @returns(%x: memref<8x128xf16>) -> index {
  %c0 = arith.constant 0 : index
  %b = ascend_hw.block_idx
  func.return %b : index
}

// CHECK:      @vadd: ascend_hw level, run by the AI Core simulator
// CHECK-NEXT: inputs: random (seed 3)
// CHECK-NEXT: arg0  f16[8x128]  sum={{.*}} crc32={{[0-9a-f]+}}  (unchanged)
// CHECK-NEXT: arg1  f16[8x128]  sum={{.*}} crc32={{[0-9a-f]+}}  (unchanged)
// CHECK-NEXT: arg2  f16[8x128]  sum={{.*}} crc32={{[0-9a-f]+}}{{$}}
// CHECK-NEXT: cycles: {{[1-9][0-9]*}} (target ascend910b)

// The sum is the f16 sum, bit for bit.
// SUM: ['arg0', 'arg1', 'arg2'] True

// TEXT: cycles: {{[0-9]+}} (target tiny)
// TEXT: target tiny
// TEXT: pipe     busy cycles  utilization
// TEXT: MTE2

// JSON: True ['FIX', 'M'] 4096 2048
// SUMMARY: @vadd: ascend_hw level, run by the AI Core simulator

// FILES: True
// FILES-NEXT: b'\x89PNG'

// RACE:      hw.mlir:40:3: error: race on ub bytes [0, 2048) (core 0): write by 'dma_load' {{.*}} and {{(read|write)}} by 'vadd' {{.*}}; they are not ordered by set_flag/wait_flag or pipe_barrier
// RACE-NEXT:   ascend_hw.vadd
// RACE-NEXT:   ^
// RACE-NEXT: hw.mlir:38:3: note: the earlier access
// RACE-NEXT:   ascend_hw.dma_load %x
// RACE-NEXT:   ^
// RACE-NEXT: exit=1

// RETURNS: hw.mlir:{{[0-9]+}}:1: error: an ascend_hw function returns its outputs through memref arguments; @returns declares results
// RETURNS: exit=1

// TARGET: pypto-run: error: no-such-chip: no such target file (builtin targets: ascend910b, tiny)
// TARGET-NEXT: exit=1

// TRACE-DIR: run: error: cannot open output file: Is a directory
// TRACE-DIR-NEXT: exit=1
