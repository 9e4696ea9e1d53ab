// The tile.iota verifier: i32 positions in ub, an operand per `?` extent.
// RUN: pypto-opt %s --split-input-file --verify-diagnostics


func.func @float_positions() {
  // expected-error @+1 {{'tile.iota' op does not support element type f32 for its result (expected i32)}}
  %a = tile.iota : !tile.tile<8x64xf32, ub>
  func.return
}

// -----

func.func @missing_extent() {
  // expected-error @+1 {{'tile.iota' op}}
  %a = "tile.iota"() : () -> !tile.tile<4x64xi32, ub, valid = [4, ?]>
  func.return
}

// -----

func.func @l1_positions() {
  // expected-error @+1 {{'tile.iota' op expects its result in ub, got l1}}
  %a = tile.iota : !tile.tile<16x16xi32, l1>
  func.return
}
