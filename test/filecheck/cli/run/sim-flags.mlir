// --report, --trace, --timeline and --target need a simulator run: an error for
// tv- and tile-level functions.
// RUN: bash -c 'pypto-run %s --report text; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: bash -c 'pypto-run %s --trace %t.json --timeline %t.png --target tiny; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SEVERAL
// RUN: not test -e %t.json

func.func @f(%x: !tv.tensor<8xf32>) -> !tv.tensor<8xf32> {
  %y = tv.relu %x : !tv.tensor<8xf32>
  func.return %y : !tv.tensor<8xf32>
}

// REPORT:      sim-flags.mlir:7:1: error: --report needs a simulator run, but @f is a tv-level function, run by the tv reference interpreter
// REPORT-NEXT: func.func @f
// REPORT-NEXT: ^
// REPORT-NEXT: exit=1

// SEVERAL: sim-flags.mlir:7:1: error: --trace, --timeline, --target need a simulator run, but @f is a tv-level function
// SEVERAL: exit=1
