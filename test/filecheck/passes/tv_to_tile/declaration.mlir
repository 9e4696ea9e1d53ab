// A declaration with tv tensors has no body to tile: a located error, not the
// internal error it was ("'block' property of Region class is only available for
// single-block regions", found by pypto-fuzz: seed 7, input 4968).
// RUN: not pypto-opt %s -p 'pypto-lower{target=tiny}' 2>&1 | filecheck %s
// RUN: not pypto-opt %s -p 'tv-to-tile{target=tiny}' 2>&1 | filecheck %s

// CHECK: declaration.mlir:9:1: error: tv-to-tile cannot tile a function declaration
// CHECK-NOT: internal error
func.func private @external(%x: !tv.tensor<8xf32>) -> !tv.tensor<8xf32>
