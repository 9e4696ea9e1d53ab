// pypto-run --check lowers a tv function with pypto-lower, runs the result
// (on the simulator by default, on the tile interpreter with --check=tile) and
// compares every output with the tv reference: a verdict and the largest error
// per output, in ulps of its type relative to the largest reference value.
// RUN: pypto-run %s --check | filecheck %s
// RUN: pypto-run %s --check=tile | filecheck %s --check-prefix=TILE
// RUN: pypto-run %s --check --target tiny --lower-options 'tile-sizes=8,32 max-cores=2' --random 3 | filecheck %s --check-prefix=TINY
// RUN: pypto-run %s --check --report json 2>/dev/null | filecheck %s --check-prefix=JSON
// RUN: pypto-run %s --check --target tiny --trace %t.json --timeline %t.png --output %t.npz > /dev/null
// RUN: python -c "import json, sys; print(sorted({e['args']['loc'].rsplit(':', 2)[0].rsplit('/', 1)[-1] for e in json.load(open(sys.argv[1]))['traceEvents'] if e.get('ph') == 'X'}))" %t.json | filecheck %s --check-prefix=TRACE
// RUN: python -c "import sys, numpy; a = numpy.load(sys.argv[1]); print(sorted(a.files), a['result0'].dtype, a['result0'].shape, a['result1'].dtype)" %t.npz | filecheck %s --check-prefix=NPZ
// RUN: head -c 4 %t.png | od -c | filecheck %s --check-prefix=PNG

func.func @f(%x: !tv.tensor<37x45xf16>, %n: !tv.tensor<37x45xi32>, %s: f32) -> (!tv.tensor<37x45xf16>, !tv.tensor<37x45xi32>) {
  %e = tv.sigmoid %x : !tv.tensor<37x45xf16>
  %y = tv.mul %e, %s : !tv.tensor<37x45xf16>, f32 -> !tv.tensor<37x45xf16>
  %m = tv.add %n, %n : !tv.tensor<37x45xi32>
  func.return %y, %m : !tv.tensor<37x45xf16>, !tv.tensor<37x45xi32>
}

// CHECK:      @f: tv level, lowered by pypto-lower to the ascend_hw level for ascend910b and run by the AI Core simulator
// CHECK-NEXT: inputs: random (seed 0)
// CHECK-NEXT: result0  f16[37x45]  sum={{.*}} crc32={{[0-9a-f]+}}
// CHECK-NEXT:          vs tv reference: max |error| {{.*}} ulp of {{max \|ref\||bound}} {{.*}}; allowed 8 ulps): ok
// CHECK-NEXT: result1  i32[37x45]  sum={{.*}} crc32={{[0-9a-f]+}}
// CHECK-NEXT:          vs tv reference: max |error| 0 (integers: exact): ok
// CHECK-NEXT: check: ok (2 of 2 outputs within tolerance of the tv reference)
// CHECK-NEXT: cycles: {{[0-9]+}} (target ascend910b)

// TILE:      @f: tv level, lowered by pypto-lower to the tile level for ascend910b and run by the tile interpreter
// TILE:      allowed 4 ulps): ok
// TILE:      check: ok (2 of 2 outputs
// TILE-NOT:  cycles

// TINY:      lowered by pypto-lower{target=tiny tile-sizes=8,32 max-cores=2} to the ascend_hw level for tiny
// TINY-NEXT: inputs: random (seed 3)
// TINY:      check: ok (2 of 2 outputs
// TINY-NEXT: cycles: {{[0-9]+}} (target tiny)

// JSON:      "target": "ascend910b"
// JSON:      "cycles":

// Trace slices are located in this file (ops keep the tv op's location).
// TRACE: ['check.mlir']

// NPZ: ['result0', 'result1'] float16 (37, 45) int32

// PNG: 211   P   N   G
