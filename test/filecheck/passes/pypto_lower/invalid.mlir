// pypto-lower's refusals are diagnostics with exit status 1: an unknown
// target (before any lowering), a bad option value (in the pipeline text),
// tiles that do not fit (at the op, from tv-to-tile), naming the pipeline
// instead of a member in --mlir-print-ir-after.
// RUN: bash -c 'pypto-opt %s -p "pypto-lower{target=nope}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=TARGET
// RUN: bash -c 'pypto-opt %s -p "pypto-lower{tile-sizes=x}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: bash -c 'pypto-opt %s -p "pypto-lower{target=tiny tile-sizes=64,1024}"; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=FIT
// RUN: bash -c 'pypto-opt %s -p pypto-lower --mlir-print-ir-after=pypto-lower; echo "exit=$?"' 2>&1 | filecheck %s --check-prefix=DUMP

func.func @add(%x: !tv.tensor<20x40xf32>, %y: !tv.tensor<20x40xf32>) -> !tv.tensor<20x40xf32> {
  %z = tv.add %x, %y : !tv.tensor<20x40xf32>
  func.return %z : !tv.tensor<20x40xf32>
}

// TARGET:      error: cannot load the target: nope: no such target file (builtin targets: ascend910b, tiny)
// TARGET-NOT:  remark
// TARGET:      exit=1

// OPTION:      <pass-pipeline>:1:13: error: invalid value 'x' for option 'tile-sizes' of pass 'pypto-lower': expected tuple[int, ...]
// OPTION-NEXT: pypto-lower{tile-sizes=x}
// OPTION:      exit=1

// FIT:      invalid.mlir:11:3: error: tile-sizes 64,1024: the tiles live at once need 9600 bytes of ub but ub of target 'tiny' holds 4096 bytes
// FIT-NEXT:   %z = tv.add %x, %y : !tv.tensor<20x40xf32>
// FIT:      exit=1

// DUMP: pypto-opt: error: --mlir-print-ir-after: 'pypto-lower' is a pipeline; name one of its passes
// DUMP: exit=1
