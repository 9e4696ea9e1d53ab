// tile.load, tile.store and tile.move refuse illegal spaces, layouts, shapes and types.
// RUN: not pypto-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: 'tile.load' op expects its result in ub or l1, got l0a
func.func @f(%x: memref<64x64xf16>, %i: index) {
  %t = tile.load %x[%i, %i] : memref<64x64xf16> -> !tile.tile<16x16xf16, l0a>
  func.return
}

// -----

// CHECK: 'tile.load' op cannot convert f32 to f16
func.func @f(%x: memref<64x64xf32>, %i: index) {
  %t = tile.load %x[%i, %i] : memref<64x64xf32> -> !tile.tile<16x16xf16, ub>
  func.return
}

// -----

// CHECK: 'tile.load' op expects 2 indices for memref<64x64xf16>, got 1
func.func @f(%x: memref<64x64xf16>, %i: index) {
  %t = tile.load %x[%i] : memref<64x64xf16> -> !tile.tile<16x16xf16, ub>
  func.return
}

// -----

// CHECK: 'tile.load' op expects 1 valid-extent operand(s), one per ? in the result's valid shape, got 2
func.func @f(%x: memref<64x64xf16>, %i: index) {
  %t = tile.load %x[%i, %i] valid [%i, %i] : memref<64x64xf16> -> !tile.tile<16x16xf16, ub, valid = [?, 16]>
  func.return
}

// -----

// CHECK: 'tile.load' op expects 1 valid-extent operand(s), one per ? in the result's valid shape, got 0
func.func @f(%x: memref<64x64xf16>, %i: index) {
  %t = tile.load %x[%i, %i] : memref<64x64xf16> -> !tile.tile<16x16xf16, ub, valid = [?, 16]>
  func.return
}

// -----

// CHECK: 'tile.load' op tile rank 2 exceeds memref rank 1
func.func @f(%x: memref<64xf16>, %i: index) {
  %t = tile.load %x[%i] : memref<64xf16> -> !tile.tile<1x16xf16, ub>
  func.return
}

// -----

// CHECK: 'tile.load' op valid extent 32 of tile dim 1 exceeds memref extent 20
func.func @f(%x: memref<64x20xf16>, %i: index) {
  %t = tile.load %x[%i, %i] : memref<64x20xf16> -> !tile.tile<16x32xf16, ub>
  func.return
}

// -----

// CHECK: 'tile.store' op expects its value in ub or l0c, got l1
func.func @f(%t: !tile.tile<16x16xf16, l1>, %x: memref<64x64xf16>, %i: index) {
  tile.store %t, %x[%i, %i] : !tile.tile<16x16xf16, l1> -> memref<64x64xf16>
  func.return
}

// -----

// Only the fixpipe (out of l0c) converts on the way to GM.
// CHECK: 'tile.store' op cannot convert f32 to f16 from ub
func.func @f(%t: !tile.tile<16x16xf32, ub>, %x: memref<64x64xf16>, %i: index) {
  tile.store %t, %x[%i, %i] : !tile.tile<16x16xf32, ub> -> memref<64x64xf16>
  func.return
}

// -----

// CHECK: 'tile.store' op cannot convert f32 to i8 from l0c
func.func @f(%t: !tile.tile<16x16xf32, l0c>, %x: memref<64x64xi8>, %i: index) {
  tile.store %t, %x[%i, %i] : !tile.tile<16x16xf32, l0c> -> memref<64x64xi8>
  func.return
}

// -----

// CHECK: 'tile.store' op expects 2 indices for memref<64x64xf16>, got 3
func.func @f(%t: !tile.tile<16x16xf16, ub>, %x: memref<64x64xf16>, %i: index) {
  tile.store %t, %x[%i, %i, %i] : !tile.tile<16x16xf16, ub> -> memref<64x64xf16>
  func.return
}

// -----

// CHECK: 'tile.move' op cannot move ub -> l0a (legal: l1 -> l0a, l1 -> l0b, l1 -> ub, ub -> l1, l0c -> ub, l0c -> l1)
func.func @f(%t: !tile.tile<16x16xf16, ub>) {
  %a = tile.move %t : !tile.tile<16x16xf16, ub> -> !tile.tile<16x16xf16, l0a>
  func.return
}

// -----

// The cube's operands are converted to nz on their way into l1.
// CHECK: 'tile.move' op l1 -> l0b needs a source in the nz layout, got nd
func.func @f(%t: !tile.tile<16x16xf16, l1>) {
  %b = tile.move %t : !tile.tile<16x16xf16, l1> -> !tile.tile<16x16xf16, l0b>
  func.return
}

// -----

// CHECK: 'tile.move' op transposes only on the way into l0a/l0b
func.func @f(%t: !tile.tile<16x32xf16, l1>) {
  %u = tile.move %t transpose : !tile.tile<16x32xf16, l1> -> !tile.tile<32x16xf16, ub>
  func.return
}

// -----

// CHECK: 'tile.move' op result must have shape 16x32 and valid [?, 32], got !tile.tile<16x32xf16, l0a>
func.func @f(%t: !tile.tile<16x32xf16, l1, valid = [?, 32], layout = nz>) {
  %a = tile.move %t : !tile.tile<16x32xf16, l1, valid = [?, 32], layout = nz> -> !tile.tile<16x32xf16, l0a, valid = [16, 32]>
  func.return
}

// -----

// CHECK: 'tile.move' op result must have shape 32x16 and valid [32, 16], got !tile.tile<16x32xf16, l0b>
func.func @f(%t: !tile.tile<16x32xf16, l1, layout = nz>) {
  %b = tile.move %t transpose : !tile.tile<16x32xf16, l1, layout = nz> -> !tile.tile<16x32xf16, l0b>
  func.return
}

// -----

// CHECK: 'tile.move' op cannot convert f16 to f32 from l1
func.func @f(%t: !tile.tile<16x16xf16, l1>) {
  %u = tile.move %t : !tile.tile<16x16xf16, l1> -> !tile.tile<16x16xf32, ub>
  func.return
}

// -----

// CHECK: 'tile.move' op result pad zero differs from the source's (none); use tile.pad
func.func @f(%t: !tile.tile<16x16xf16, l1, layout = nz>) {
  %a = tile.move %t : !tile.tile<16x16xf16, l1, layout = nz> -> !tile.tile<16x16xf16, l0a, pad = zero>
  func.return
}

// -----

// CHECK: 'tile.move' op only moves into l0a/l0b take a window
func.func @f(%t: !tile.tile<16x64xf16, l1>) {
  %u = tile.move %t window [0, 32] : !tile.tile<16x64xf16, l1> -> !tile.tile<16x32xf16, ub>
  func.return
}

// -----

// CHECK: 'tile.move' op window [48, 80) of dim 1 is outside the source's 64 elements
func.func @f(%t: !tile.tile<16x64xf16, l1, layout = nz>) {
  %a = tile.move %t window [0, 48] : !tile.tile<16x64xf16, l1, layout = nz> -> !tile.tile<16x32xf16, l0a>
  func.return
}

// -----

// CHECK: 'tile.move' op window offsets [0, 8] must be multiples of the 16-element fractal
func.func @f(%t: !tile.tile<16x64xf16, l1, layout = nz>) {
  %a = tile.move %t window [0, 8] : !tile.tile<16x64xf16, l1, layout = nz> -> !tile.tile<16x32xf16, l0a>
  func.return
}

// -----

// CHECK: 'tile.move' op dim 1 of the source has a dynamic valid extent: the window must cover it whole
func.func @f(%t: !tile.tile<16x64xf16, l1, valid = [16, ?], layout = nz>) {
  %a = tile.move %t window [0, 32] : !tile.tile<16x64xf16, l1, valid = [16, ?], layout = nz> -> !tile.tile<16x32xf16, l0a, valid = [16, ?]>
  func.return
}

// -----

// CHECK: 'tile.move' op window at [0, 48] holds no valid element of the source
func.func @f(%t: !tile.tile<16x64xf16, l1, valid = [16, 40], layout = nz>) {
  %a = tile.move %t window [0, 48] : !tile.tile<16x64xf16, l1, valid = [16, 40], layout = nz> -> !tile.tile<16x16xf16, l0a>
  func.return
}

// -----

// CHECK: 'tile.move' op window has 1 offsets for a rank-2 tile
func.func @f(%t: !tile.tile<16x64xf16, l1, layout = nz>) {
  %a = tile.move %t window [0] : !tile.tile<16x64xf16, l1, layout = nz> -> !tile.tile<16x32xf16, l0a>
  func.return
}

// -----

// CHECK: 'tile.move' op result must have shape 16x32 and valid [16, 8], got !tile.tile<16x32xf16, l0a>
func.func @f(%t: !tile.tile<16x64xf16, l1, valid = [16, 40], layout = nz>) {
  %a = tile.move %t window [0, 32] : !tile.tile<16x64xf16, l1, valid = [16, 40], layout = nz> -> !tile.tile<16x32xf16, l0a>
  func.return
}
