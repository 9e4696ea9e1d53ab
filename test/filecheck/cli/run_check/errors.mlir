// --check refusals: a function that is not tv-level, simulator flags when the
// check stops at the tile level, --lower-options without --check or with bad
// options (located in the pipeline text), the target given twice, an unknown
// target, tiles that cannot fit (a diagnostic at the op, from tv-to-tile), an
// unknown level (argparse, exit status 2).
// RUN: bash -c 'pypto-run %S/Inputs/tile.mlir --check; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=LEVEL
// RUN: bash -c 'pypto-run %s --check=tile --report text; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=SIM
// RUN: bash -c 'pypto-run %s --lower-options "max-cores=2"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=NO-CHECK
// RUN: bash -c 'pypto-run %s --check --lower-options "tile-sizes=x"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=VALUE
// RUN: bash -c 'pypto-run %s --check --lower-options "bogus=1"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: bash -c 'pypto-run %s --check --target tiny --lower-options "target=tiny"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: bash -c 'pypto-run %s --check --target nope; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: bash -c 'pypto-run %s --check --target tiny --lower-options "tile-sizes=64,1024"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FIT
// RUN: bash -c 'pypto-run %s --check=hw; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=CHOICE

func.func @f(%x: !tv.tensor<37x45xf16>) -> !tv.tensor<37x45xf16> {
  %y = tv.exp %x : !tv.tensor<37x45xf16>
  func.return %y : !tv.tensor<37x45xf16>
}

// LEVEL:      tile.mlir:1:1: error: --check lowers a tv-level function and compares it with the tv reference, but @g is a tile-level function
// LEVEL:      exit=1

// SIM:        errors.mlir:16:1: error: --report needs a simulator run, but --check=tile stops at the tile level
// SIM:        exit=1

// NO-CHECK:   errors.mlir:16:1: error: --lower-options is for --check (the lowering it runs)
// NO-CHECK:   exit=1

// VALUE:      <pass-pipeline>:1:13: error: invalid value 'x' for option 'tile-sizes' of pass 'pypto-lower': expected tuple[int, ...]
// VALUE-NEXT: pypto-lower{tile-sizes=x}
// VALUE-NEXT: {{ +}}^~~~~~~~~~
// VALUE-NEXT: exit=1

// UNKNOWN:    <pass-pipeline>:1:13: error: pass 'pypto-lower' has no option 'bogus' (its options: target, tile-sizes, matmul-tile-sizes,
// UNKNOWN:    exit=1

// TWICE:      pypto-run: error: give the target with --target or in --lower-options, not both
// TWICE-NEXT: exit=1

// TARGET:     pypto-run: error: nope: no such target file (builtin targets: ascend910b, tiny)
// TARGET-NEXT: exit=1

// FIT:        errors.mlir:17:3: error: tile-sizes 64,1024: the tiles live at once need {{[0-9]+}} bytes of ub but ub of target 'tiny' holds 4096 bytes
// FIT-NEXT:     %y = tv.exp %x : !tv.tensor<37x45xf16>
// FIT:        exit=1

// CHOICE:     pypto-run: error: argument --check: invalid choice: 'hw' (choose from 'tile', 'ascend_hw')
// CHOICE-NEXT: exit=2
