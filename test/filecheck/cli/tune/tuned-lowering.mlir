// pypto-lower{tuned=true} takes the options pypto-tune stored for this kernel,
// target file and compiler (docs/tuning.md); with none stored, the given ones.
// RUN: rm -f %t.sqlite
// RUN: env PYPTO_TUNE_CACHE=%t.sqlite pypto-opt %s -p 'pypto-lower{target=tiny tuned=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=NONE
// RUN: env PYPTO_TUNE_CACHE=%t.sqlite pypto-tune %s --target tiny --budget 3 --jobs 1 --no-progress | filecheck %s --check-prefix=TUNE
// RUN: env PYPTO_TUNE_CACHE=%t.sqlite pypto-opt %s -p 'pypto-lower{target=tiny tuned=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=USED
// RUN: env PYPTO_TUNE_CACHE=%t.sqlite not pypto-tune %s --options matmul-tile-sizes 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: env PYPTO_TUNE_CACHE=%t.sqlite not pypto-tune %s --options tile-sizes,frob 2>&1 | filecheck %s --check-prefix=UNKNOWN

// NONE: remark: pypto-lower{tuned=true}: no tuned configuration for this kernel on tiny (no entry): the given options

// TUNE: @f on tiny: {{[0-9]+}} configurations ({{[0-9]+}} options), {{[0-9]+}} choices pruned before running
// TUNE: pruned before running: {{[0-9]+}} x tile-sizes: capacity
// TUNE: measured 3 candidates in {{.*}} on 1 local worker(s)
// TUNE: candidate {{ +}}cycles {{ +}}% roofline  speed-up
// TUNE: default {{.*}} 1.00x
// TUNE: best: {{.*}} cycles, {{.*}}x the default ({{[0-9]+}}); numerics: ok (1 of 1 outputs within tolerance of the tv reference)

// USED: tuned-lowering.mlir:[[# @LINE + 3]]:1: remark: pypto-lower{tuned=true}: options tuned for @f on tiny: {{.*}} ({{[0-9]+}} cycles, default {{[0-9]+}}, 3 candidates measured)

// EMPTY: tuned-lowering.mlir:[[# @LINE + 1]]:1: error: empty search space: no option has a choice besides its default for this kernel and target (not tuned: matmul-tile-sizes (no choice for this kernel))
func.func @f(%x: !tv.tensor<32x256xf16>) -> !tv.tensor<32x256xf16> {
  %s = tv.sigmoid %x : !tv.tensor<32x256xf16>
  %y = tv.mul %x, %s : !tv.tensor<32x256xf16>
  func.return %y : !tv.tensor<32x256xf16>
}
// UNKNOWN: error: unknown option(s) to tune: frob (pypto-lower's decisions: {{.*}}tile-sizes)
