// When the module names a target, every tile an op produces must fit its memory
// and nd rows must respect the memory's alignment. The 64x64xf32 tile that fits
// ascend910b's UB (192 KiB, target.mlir) does not fit tiny's (4 KiB).
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: error: 'tile.load' op !tile.tile<64x64xf32, ub> needs 16384 bytes but ub of target 'tiny' holds 4096 bytes
builtin.module attributes {pypto.target = "tiny"} {
  func.func @too_big(%x: memref<64x64xf32>) {
    %c0 = arith.constant 0 : index
    %t = tile.load %x[%c0, %c0] : memref<64x64xf32> -> !tile.tile<64x64xf32, ub>
    func.return
  }
}

// -----

// 256x256xf32 = 256 KiB > L0C's 128 KiB.
// CHECK: error: 'tile.matmul' op !tile.tile<256x256xf32, l0c> needs 262144 bytes but l0c of target 'ascend910b' holds 131072 bytes
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @acc_too_big(%a: !tile.tile<256x16xf16, l0a>, %b: !tile.tile<16x256xf16, l0b>) {
    %c = tile.matmul %a, %b : !tile.tile<256x16xf16, l0a>, !tile.tile<16x256xf16, l0b> -> !tile.tile<256x256xf32, l0c>
    func.return
  }
}

// -----

// CHECK: error: 'tile.exp' op !tile.tile<64x7xf32, ub> has rows of 28 bytes, not a multiple of the 32-byte alignment of ub on target 'ascend910b'; pad the physical shape and use a valid shape
builtin.module attributes {pypto.target = "ascend910b"} {
  func.func @misaligned(%t: !tile.tile<64x7xf32, ub>) {
    %e = tile.exp %t : !tile.tile<64x7xf32, ub>
    func.return
  }
}

// -----

// CHECK: error: 'tile.fill' op cannot load target 'nochip': nochip: no such target file
builtin.module attributes {pypto.target = "nochip"} {
  func.func @unknown(%v: f32) {
    %t = tile.fill %v : f32 -> !tile.tile<8x8xf32, ub>
    func.return
  }
}

// -----

// CHECK: error: 'tile.fill' op pypto.target must be a string, got 910 : i64
builtin.module attributes {pypto.target = 910} {
  func.func @not_a_name(%v: f32) {
    %t = tile.fill %v : f32 -> !tile.tile<8x8xf32, ub>
    func.return
  }
}

// -----

// The closest enclosing module that names a target wins.
// CHECK: error: 'tile.fill' op !tile.tile<64x64xf32, ub> needs 16384 bytes but ub of target 'tiny' holds 4096 bytes
builtin.module attributes {pypto.target = "ascend910b"} {
  builtin.module attributes {pypto.target = "tiny"} {
    func.func @nested(%v: f32) {
      %t = tile.fill %v : f32 -> !tile.tile<64x64xf32, ub>
      func.return
    }
  }
}
